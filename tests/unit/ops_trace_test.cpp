// ffsim ops --trace: the simulation's timeline (ops::Timeline) agrees with its accounting, and the
// Chrome/Perfetto trace built from it (report/ops_trace.hpp) keeps each run on one track, shows
// every failure, and is the same bytes for the same seed.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "ops/simulate.hpp"
#include "ops_test_jobs.hpp"
#include "report/ops_trace.hpp"
#include "report/trace.hpp"

using namespace ffsim;

namespace {

using testing::kH;
template <class... A>
ops::JobSpec job(A... a) {
  return testing::ops_job(a...);
}

// 4 nodes x 8 GPUs in 2 zones over 10 days: a 16-GPU job that checkpoints, 3 repeating 4-GPU jobs
// sharing nodes, a 32-GPU job that waits for the cluster (queue waits), GPU failures without and
// with repair and node failures with repair (rates [I]: 32 GPUs x (1e-2 + 4e-4) + 4 nodes x 1e-3 per
// hour over 240 h: about 101 failures).
ops::OpsParams mix(std::uint64_t seed) {
  ops::OpsParams p;
  p.cluster.nodes = 4;
  p.cluster.gpus_per_node = 8;
  p.cluster.zones = 2;
  p.cluster.cross_zone_min_gpus = 16;
  p.horizon_s = 240 * kH;
  p.seed = seed;
  p.jobs = {job("big", 16, 60, 30, 40, 300), job("small", 4, 5, 20, 10, 60), job("all", 32, 20, 60, 60, 600)};
  p.jobs[1].count = 3;
  p.jobs[1].repeat = true;
  p.jobs[2].submit_s = 30 * kH;
  p.failures = {{"gpu-soft", ops::FailureUnit::Gpu, 1e-2, 0},
                {"gpu-hard", ops::FailureUnit::Gpu, 4e-4, 3 * kH},
                {"node", ops::FailureUnit::Node, 1e-3, 12 * kH}};
  return p;
}

std::string trace_bytes(const ops::OpsParams& p, const ops::OpsResult& r, bool checkpoints) {
  std::ostringstream os;
  report::write_chrome_trace(os, report::ops_trace(p, r, checkpoints, "t"));
  return os.str();
}

}  // namespace

TEST_CASE("ops timeline: the same result with it, and its runs and failures add up to the accounting") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const ops::OpsParams p = mix(seed);
    const ops::OpsResult plain = ops::simulate(p), r = ops::simulate(p, true);
    CHECK_FALSE(plain.timeline);
    REQUIRE(r.timeline);
    // Asking for the timeline changes nothing else (the accounting is the same code).
    CHECK(plain.gpu_s.useful == r.gpu_s.useful);
    CHECK(plain.gpu_s.lost == r.gpu_s.lost);
    CHECK(plain.gpu_s.idle == r.gpu_s.idle);
    const ops::Timeline& t = *r.timeline;
    // Per job: runs = first starts + restarts, and the restart, lost and checkpoint counts are the
    // stats' (restart GPU-s = GPUs x restart wall time; lost GPU-s = GPUs x the failed runs' tails).
    std::vector<long long> runs(p.jobs.size(), 0), ckpts(p.jobs.size(), 0), failed(p.jobs.size(), 0);
    std::vector<double> restart(p.jobs.size(), 0);
    std::vector<std::vector<double>> lost(p.jobs.size(), std::vector<double>(p.failures.size(), 0));
    long long horizon = 0;
    for (const auto& x : t.runs) {
      const double g = p.jobs[x.job].gpus;
      ++runs[x.job];
      ckpts[x.job] += x.checkpoints;
      restart[x.job] += g * x.restart_s;
      CHECK(x.queued_at <= x.start);
      CHECK(x.start + x.restart_s <= x.end);
      CHECK(x.instance >= 1);
      CHECK(x.instance <= r.jobs[x.job].submitted);
      if (x.how == ops::RunEnd::Failed) {
        ++failed[x.job];
        lost[x.job][x.cause] += g * x.tail_s;
        // A failure loses at most an interval and a checkpoint (or everything without checkpoints).
        if (x.interval_s > 0) CHECK(x.tail_s <= x.interval_s + x.checkpoint_s + 1e-9);
      }
      if (x.how == ops::RunEnd::Horizon) ++horizon;
    }
    for (std::size_t j = 0; j < p.jobs.size(); ++j) {
      const auto& s = r.jobs[j];
      CHECK(runs[j] == s.waits);
      CHECK(ckpts[j] == s.checkpoints);
      CHECK(failed[j] == s.interrupted);
      CHECK(restart[j] == doctest::Approx(s.gpu_s.restart).epsilon(1e-12));
      for (std::size_t f = 0; f < p.failures.size(); ++f)
        CHECK(lost[j][f] == doctest::Approx(s.gpu_s.lost[f]).epsilon(1e-12));
    }
    CHECK(horizon == r.running_at_end);
    // Failures: one record per event, in time order, the ended runs per process as counted.
    std::vector<long long> events(p.failures.size(), 0), on_down(p.failures.size(), 0), hit(p.failures.size(), 0);
    for (std::size_t i = 0; i < t.failures.size(); ++i) {
      const auto& f = t.failures[i];
      if (i > 0) CHECK(t.failures[i - 1].t <= f.t);
      ++events[f.process];
      on_down[f.process] += f.on_down ? 1 : 0;
      hit[f.process] += static_cast<long long>(f.ended.size());
    }
    long long total = 0;
    for (std::size_t f = 0; f < p.failures.size(); ++f) {
      CHECK(events[f] == r.failures[f].events);
      CHECK(on_down[f] == r.failures[f].on_down);
      CHECK(hit[f] == r.failures[f].jobs_hit);
      total += events[f];
    }
    CHECK(total > 60);  // the mix does meet failures, ~101 +- 10 (else this test could not fail)
  }
}

TEST_CASE("ops trace: one track per job slot, runs' segments in order, failures as instants") {
  const ops::OpsParams p = mix(2);
  const ops::OpsResult r = ops::simulate(p, true);
  const ops::Timeline& tl = *r.timeline;
  const sched::Trace t = report::ops_trace(p, r, false, "t");
  // Slices never overlap on a track (the writer would otherwise split the track into sub-lanes).
  std::map<std::pair<int, std::string>, std::vector<const sched::TraceEvent*>> lanes;
  for (const auto& e : t.events) {
    CHECK(e.end > e.start);
    lanes[{e.node, e.lane}].push_back(&e);
  }
  for (auto& [key, evs] : lanes) {
    if (key.first != 0) continue;  // the repairs' track may overlap: the writer gives it sub-lanes
    std::sort(evs.begin(), evs.end(), [](auto* a, auto* b) { return a->start < b->start; });
    for (std::size_t i = 1; i < evs.size(); ++i) CHECK(evs[i - 1]->end <= evs[i]->start);
  }
  // The 3 copies of "small" run side by side: at least 3 of its tracks; "big" and "all" one each
  // at least. A failed run ends in a "lost: <process>" slice; each failure is an instant.
  int small_tracks = 0;
  for (const auto& [key, evs] : lanes)
    if (key.first == 0 && key.second.rfind("small (", 0) == 0) ++small_tracks;
  CHECK(small_tracks >= 3);
  long long failed = 0, lost_slices = 0, ck_slices = 0;
  for (const auto& x : tl.runs) failed += x.how == ops::RunEnd::Failed && x.tail_s > 0 ? 1 : 0;
  for (const auto& e : t.events) {
    lost_slices += e.name.rfind("lost: ", 0) == 0 ? 1 : 0;
    ck_slices += e.name == "checkpoint" ? 1 : 0;
  }
  CHECK(lost_slices == failed);
  CHECK(t.instants.size() == tl.failures.size());
  // Without --trace-checkpoints the only checkpoint slices are those under way at the horizon.
  long long under_way = 0;
  for (const auto& x : tl.runs) under_way += x.how == ops::RunEnd::Horizon && x.tail_s > 0 ? 1 : 0;
  CHECK(ck_slices == under_way);
  // With them: one more slice per checkpoint completed.
  const sched::Trace tc = report::ops_trace(p, r, true, "t");
  long long completed = 0, ck = 0;
  for (const auto& j : r.jobs) completed += j.checkpoints;
  for (const auto& e : tc.events) ck += e.name == "checkpoint" ? 1 : 0;
  CHECK(completed > 100);
  CHECK(ck == completed + under_way);
  // With the checkpoints cut out, the work slices are the work kept: checkpointed pieces, a
  // finished run's last piece and the work done by the horizon (lost work has its own slices), so
  // their GPU-time is the useful GPU-time.
  std::map<std::string, int> gpus_of;
  for (const auto& j : p.jobs) gpus_of[j.name] = j.gpus;
  double work = 0;
  for (const auto& e : tc.events)
    if (e.category == "work") work += (e.end - e.start) * gpus_of.at(e.name.substr(0, e.name.find(" #")));
  CHECK(work == doctest::Approx(r.gpu_s.useful).epsilon(1e-9));
}

TEST_CASE("ops trace: the same bytes for the same seed, others for another, and instants in the file") {
  const ops::OpsParams p = mix(3);
  const ops::OpsResult a = ops::simulate(p, true), b = ops::simulate(p, true);
  const std::string ta = trace_bytes(p, a, true);
  CHECK(ta == trace_bytes(p, b, true));
  CHECK(ta != trace_bytes(p, ops::simulate(mix(4), true), true));
  CHECK(ta.find("\"ph\": \"i\"") != std::string::npos);
  CHECK(ta.find("\"name\": \"failures\"") != std::string::npos);
  CHECK(ta.find("\"name\": \"jobs\"") != std::string::npos);
  // A result without a timeline has no trace.
  CHECK_THROWS_AS((void)report::ops_trace(p, ops::simulate(p), false, "t"), std::logic_error);
}
