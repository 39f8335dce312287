// ffsim ops: the discrete-event simulation of jobs, failures and checkpoints on SimGrid
// (src/ops): determinism, conservation of GPU-time, and the best checkpoint interval against
// Young/Daly.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "ops/rng.hpp"
#include "ops/simulate.hpp"
#include "ops_test_jobs.hpp"

using namespace ffsim;

namespace {

using testing::kH;

constexpr auto cluster = &testing::ops_cluster;

template <class... A>
ops::JobSpec job(A... a) {
  return testing::ops_job(a...);
}

ops::FailureSpec failure(const std::string& name, ops::FailureUnit unit, double rate_per_hour, double repair_h) {
  return {name, unit, rate_per_hour, repair_h * kH};
}

// Every field that comes out of a simulation, bit for bit.
bool same(const ops::GpuSeconds& a, const ops::GpuSeconds& b) {
  return a.useful == b.useful && a.checkpoint == b.checkpoint && a.restart == b.restart && a.idle == b.idle &&
         a.down == b.down && a.lost == b.lost;
}
bool same(const ops::OpsResult& a, const ops::OpsResult& b) {
  if (!same(a.gpu_s, b.gpu_s) || a.jobs.size() != b.jobs.size() || a.failures.size() != b.failures.size()) return false;
  if (a.queued_at_end != b.queued_at_end || a.running_at_end != b.running_at_end) return false;
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    const auto &x = a.jobs[i], &y = b.jobs[i];
    if (!same(x.gpu_s, y.gpu_s) || x.submitted != y.submitted || x.completed != y.completed ||
        x.interrupted != y.interrupted || x.checkpoints != y.checkpoints || x.wait_s != y.wait_s ||
        x.max_wait_s != y.max_wait_s)
      return false;
  }
  for (std::size_t i = 0; i < a.failures.size(); ++i)
    if (a.failures[i].events != b.failures[i].events || a.failures[i].jobs_hit != b.failures[i].jobs_hit ||
        a.failures[i].repairs != b.failures[i].repairs)
      return false;
  return true;
}

// A mix on 5 nodes x 8 GPUs in 2 zones (3 + 2 nodes): a node-sized job, a 12-GPU job (a node and a
// half), 1-GPU and 3-GPU jobs sharing nodes, a 24-GPU job that fits only zone 0, and a 40-GPU job
// (the whole cluster, across both zones: it is >= cross_zone_min_gpus here).
ops::OpsParams mix() {
  ops::OpsParams p = cluster(5, 8, 2, 24 * 20);
  p.cluster.cross_zone_min_gpus = 32;
  p.seed = 7;
  p.jobs = {job("a8", 8, 30, 20, 45, 300), job("b12", 12, 7.5, 15, 30, 120), job("c1", 1, 2, 0, 0, 60),
            job("d3", 3, 11, 60, 10, 0),   job("e24", 24, 40, 30, 90, 600),  job("f40", 40, 16, 45, 120, 900)};
  p.jobs[2].count = 5;
  p.jobs[2].repeat = true;
  p.jobs[3].submit_s = 5 * kH;
  p.jobs[4].repeat = true;
  p.jobs[5].submit_s = 50 * kH;
  p.failures = {failure("gpu-soft", ops::FailureUnit::Gpu, 2e-3, 0),
                failure("gpu-hard", ops::FailureUnit::Gpu, 3e-4, 6), failure("node", ops::FailureUnit::Node, 1e-3, 24)};
  return p;
}

void check_conservation(const ops::OpsParams& p, const ops::OpsResult& r) {
  // Every GPU-second of the horizon is in exactly one state: their sum is nodes x GPUs x horizon.
  const double want = static_cast<double>(p.cluster.nodes) * p.cluster.gpus_per_node * p.horizon_s;
  CHECK(r.gpu_s.total() == doctest::Approx(want).epsilon(1e-9));
  for (double v : {r.gpu_s.useful, r.gpu_s.checkpoint, r.gpu_s.restart, r.gpu_s.idle, r.gpu_s.down}) CHECK(v >= 0);
  for (double v : r.gpu_s.lost) CHECK(v >= 0);
  // The jobs' shares add up to the pool's busy time.
  double useful = 0, busy = 0;
  for (const auto& j : r.jobs) {
    useful += j.gpu_s.useful;
    busy += j.gpu_s.busy();
  }
  CHECK(useful == doctest::Approx(r.gpu_s.useful).epsilon(1e-12));
  CHECK(busy == doctest::Approx(r.gpu_s.busy()).epsilon(1e-12));
}

}  // namespace

TEST_CASE("ops::Rng: the distributions are ours, so the draws are the same on every standard library") {
  // uniform_open0 is (k + 1) / 2^53: never 0 (log(0)), at most 1.
  ops::Rng a(1, 0), b(1, 0), c(1, 1), d(2, 0);
  double sum = 0;
  const int n = 200000;
  bool differ_stream = false, differ_seed = false;
  for (int i = 0; i < n; ++i) {
    const double x = a.exponential(0.5);
    CHECK_MESSAGE(x == b.exponential(0.5), "same seed and stream, same draw");
    const double y = c.exponential(0.5), z = d.exponential(0.5);
    differ_stream = differ_stream || y != x;
    differ_seed = differ_seed || z != x;
    REQUIRE(x >= 0);
    sum += x;
  }
  CHECK(differ_stream);
  CHECK(differ_seed);
  // Mean 1 / rate = 2; the standard error of the mean of 200,000 draws is 2 / sqrt(200000) = 0.0045.
  CHECK(sum / n == doctest::Approx(2.0).epsilon(0.01));
  // index(n): in [0, n), every value reached, for n = 1, 3 and 7 (not powers of two).
  for (std::uint64_t m : {1u, 3u, 7u}) {
    std::vector<int> seen(m, 0);
    for (int i = 0; i < 1000; ++i) {
      const auto k = a.index(m);
      REQUIRE(k < m);
      ++seen[k];
    }
    for (int s : seen) CHECK(s > 0);
  }
}

TEST_CASE("ops: the same seed gives the same result, another seed another") {
  const ops::OpsParams p = mix();
  const ops::OpsResult r1 = ops::simulate(p), r2 = ops::simulate(p);
  CHECK(same(r1, r2));
  ops::OpsParams q = p;
  q.seed = 8;
  const ops::OpsResult r3 = ops::simulate(q);
  CHECK_FALSE(same(r1, r3));
  // The mix did meet failures (else the seed would not matter and this test could not fail).
  long long events = 0;
  for (const auto& f : r1.failures) events += f.events;
  CHECK(events > 10);
}

TEST_CASE("ops: every GPU-hour is in exactly one state (conservation), swept over mixes") {
  SUBCASE("the mix with failures, repairs and a cross-zone job") {
    const auto p = mix();
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.down > 0);
    CHECK(r.gpu_s.lost_total() > 0);
    CHECK(r.gpu_s.restart > 0);
  }
  SUBCASE("several seeds and horizons") {
    for (std::uint64_t seed : {1u, 2u, 3u})
      for (double h : {0.5, 17.0, 24.0 * 45}) {
        auto p = mix();
        p.seed = seed;
        p.horizon_s = h * kH;
        check_conservation(p, ops::simulate(p));
      }
  }
  SUBCASE("one job, no failures: useful and checkpoint time are the closed forms") {
    // 8 GPUs, 10 h of work, a checkpoint every 60 min costing 30 s: ceil(10 h / 1 h) - 1 = 9
    // checkpoints (none after the last hour); the run takes 10 h + 270 s; on 2 nodes x 8 GPUs over
    // 12 h the other node and the rest of the horizon are idle.
    auto p = cluster(2, 8, 1, 12);
    p.jobs = {job("one", 8, 10, 60, 30)};
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.useful == doctest::Approx(8 * 10 * kH).epsilon(1e-12));
    CHECK(r.gpu_s.checkpoint == doctest::Approx(8 * 9 * 30.0).epsilon(1e-12));
    CHECK(r.gpu_s.lost_total() == 0);
    CHECK(r.gpu_s.down == 0);
    CHECK(r.gpu_s.restart == 0);
    CHECK(r.gpu_s.idle == doctest::Approx(16 * 12 * kH - 8 * (10 * kH + 270)).epsilon(1e-12));
    CHECK(r.jobs[0].completed == 1);
    CHECK(r.jobs[0].checkpoints == 9);
  }
  SUBCASE("a 1-GPU job on a 3-GPU node, cut by the horizon") {
    // 1 GPU, 5 h of work, horizon 2 h: the job runs through the horizon; its 2 h count as useful
    // (checkpoints every 25 min of 6 s: 4 written in 2 h = 4 x 1506 s = 6024 s, then 1176 s of work).
    auto p = cluster(1, 3, 1, 2);
    p.jobs = {job("tiny", 1, 5, 25, 6)};
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.checkpoint == doctest::Approx(4 * 6.0).epsilon(1e-12));
    CHECK(r.gpu_s.useful == doctest::Approx(2 * kH - 24).epsilon(1e-12));
    CHECK(r.gpu_s.idle == doctest::Approx(2 * 2 * kH).epsilon(1e-12));
    CHECK(r.running_at_end == 1);
  }
  SUBCASE("node failures with repairs under a job that fills the cluster, and one queued behind it") {
    // Queue order: the 16-GPU job first (takes the whole cluster), then an 8-GPU one that waits.
    auto p = cluster(2, 8, 1, 48);
    p.jobs = {job("big", 16, 20, 30, 20, 60), job("small", 8, 3, 0, 0, 0)};
    p.failures = {failure("f", ops::FailureUnit::Node, 0.02, 2)};
    p.seed = 3;
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.jobs[1].started == 1);
  }
  SUBCASE("a job larger than the cluster is an error") {
    auto p = cluster(2, 8, 1, 10);
    p.jobs = {job("too-big", 17, 1)};
    CHECK_THROWS_WITH_AS(ops::simulate(p), "job \"too-big\": 17 GPUs, more than the cluster's 16; give at most 16",
                         ValueError);
    p.jobs = {job("none", 0, 1)};
    CHECK_THROWS_AS(ops::simulate(p), ValueError);
    p.jobs = {};
    CHECK_THROWS_AS(ops::simulate(p), ValueError);
  }
}

TEST_CASE("ops: one job under exponential failures: the best checkpoint interval is Young/Daly's") {
  // One 8-GPU job on one node, never finishing, failures of rate 1/(8 x 24 h) per GPU, no repair
  // and no restart cost: the job's MTBF M = 24 h; checkpoints cost C = 60 s.
  // Derivation: with work segments of t between checkpoints and a failure losing the segment under
  // way (and the checkpoint being written), a committed segment takes E = M (exp((t + C) / M) - 1)
  // of wall time in expectation (exponential failures restart the segment, memoryless), so the
  // efficiency is t / E and the waste 1 - t / E ~= C / t + t / (2 M) to first order, minimal at
  // Young's t* = sqrt(2 C M) = sqrt(2 x 60 x 86400) = 3220 s. The exact minimum solves
  // exp((t + C) / M) (1 - t / M) = 1: t = 3180 s, 1.2% below (computed below), so a 10% window
  // is about the simulation. Noise: each failure loses U(0, t + C) roughly, std (t + C) / sqrt(12);
  // 4 seeds x 500 days = 2,000 failures a point, 13 points from t*/2 to 2 t*: the fit of
  // a / t + b t + c over them puts the minimum within ~2% (b to ~0.5%, M's realised mean to 2.2%).
  auto p = cluster(1, 8, 1, 500 * 24);
  p.jobs = {job("j", 8, 1e9, 60, 60, 0)};
  p.failures = {failure("exp", ops::FailureUnit::Gpu, 1.0 / (8 * 24), 0)};
  p.seed = 11;
  const double m = 1.0 / ops::job_failure_rate(p, p.jobs[0]);
  CHECK(m == doctest::Approx(24 * kH).epsilon(1e-12));
  const double yd = std::sqrt(2 * 60 * m);
  // The exact optimum of the model above, by bisection.
  double lo = 1, hi = 20000;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::exp((mid + 60) / m) * (1 - mid / m) > 1 ? lo : hi) = mid;
  }
  CHECK(lo / yd == doctest::Approx(0.988).epsilon(0.002));
  const auto s = ops::sweep_checkpoint(p, 0, ops::default_sweep_grid(yd), 4);
  CHECK(s.young_daly_s == doctest::Approx(yd).epsilon(1e-12));
  REQUIRE(s.points.size() == 13);
  MESSAGE("best swept ", s.best_s, " s, fit ", s.fit_best_s, " s, Young/Daly ", yd, " s, exact ", lo, " s");
  CHECK(s.fit_best_s / yd == doctest::Approx(1.0).epsilon(0.10));
  // The grid's own best point: the grid steps by 2^(1/6) = 12%, so the best point lies within one
  // step of t* when the noise is below the curvature there.
  CHECK(s.best_s / yd == doctest::Approx(1.0).epsilon(0.26));
  // The efficiency at the edges is below the middle's (the curve has a minimum of waste inside).
  CHECK(s.points.front().efficiency < s.points[6].efficiency);
  CHECK(s.points.back().efficiency < s.points[6].efficiency);
  // And at t*: waste ~= 2 C / t* = 3.7%: efficiency near 96.3%.
  CHECK(s.points[6].efficiency == doctest::Approx(1 - 2 * 60 / yd).epsilon(0.01));
}

TEST_CASE("ops: FIFO with EASY backfill: a short job backfills, a long one waits for the head") {
  // 2 nodes x 8 GPUs, no failures. In submission order: A (8 GPUs, 10 h) starts at 0; B (16 GPUs,
  // 4 h) is the head and cannot start until A ends at 10 h (its reservation); C (8 GPUs, 5 h) fits
  // now and ends at 5 h, before B's reservation: it backfills at 0; D (8 GPUs, 20 h) fits after C
  // but would delay B: it waits until B ends at 14 h.
  auto p = cluster(2, 8, 1, 100);
  p.jobs = {job("A", 8, 10), job("B", 16, 4), job("C", 8, 5), job("D", 8, 20)};
  const auto r = ops::simulate(p);
  check_conservation(p, r);
  CHECK(r.jobs[0].wait_s == 0);
  CHECK(r.jobs[1].wait_s == doctest::Approx(10 * kH));
  CHECK(r.jobs[2].wait_s == 0);
  CHECK(r.jobs[3].wait_s == doctest::Approx(14 * kH));
  for (const auto& j : r.jobs) CHECK(j.completed == 1);
  // Idle: 8 GPUs from 5 h to 10 h, 8 from 34 h (D ends) to 100 h, 16 from 34 h: 8 x 5 h + 16 x 66 h.
  CHECK(r.gpu_s.idle == doctest::Approx((8 * 5 + 8 * 20 + 16 * 66) * kH).epsilon(1e-12));
}

TEST_CASE("ops: zones: small jobs stay in one zone, one cross-zone job at a time") {
  // 6 nodes x 8 GPUs in 3 zones of 2 nodes (16 GPUs each), cross-zone from 24 GPUs. Two 24-GPU jobs
  // (3 nodes: two zones each) would fit the 6 nodes together, but only one may cross zones at a
  // time: the second waits for the first (10 h). A 12-GPU job (< 24) fits a zone and runs at once.
  auto p = cluster(6, 8, 3, 50);
  p.cluster.cross_zone_min_gpus = 24;
  p.jobs = {job("x1", 24, 10), job("x2", 24, 10), job("s", 12, 3)};
  auto r = ops::simulate(p);
  check_conservation(p, r);
  CHECK(r.jobs[0].wait_s == 0);
  CHECK(r.jobs[1].wait_s == doctest::Approx(10 * kH));
  CHECK(r.jobs[2].wait_s == 0);
  // A job under the cross-zone size that fits no single zone never starts (20 GPUs > 16 a zone).
  p.cluster.cross_zone_min_gpus = 32;
  p.jobs = {job("never", 20, 1)};
  r = ops::simulate(p);
  check_conservation(p, r);
  CHECK(r.jobs[0].started == 0);
  CHECK(r.queued_at_end == 1);
  CHECK(r.gpu_s.idle == doctest::Approx(48 * 50 * kH).epsilon(1e-12));
}

TEST_CASE("ops: a failure restarts the job from its last checkpoint and takes the node for its repair") {
  // 1 node x 4 GPUs, one job of 4 GPUs. One node-failure process with a huge rate would fail it
  // at once; instead the rate is set so that failures are rare and the accounting is checked on
  // whatever the seed draws: lost work per failure is at most interval + cost, restarts cost R each.
  auto p = cluster(1, 4, 1, 24 * 30);
  p.jobs = {job("j", 4, 24 * 20, 30, 20, 300)};
  p.failures = {failure("node", ops::FailureUnit::Node, 1.0 / 24, 2)};
  p.seed = 5;
  const auto r = ops::simulate(p);
  check_conservation(p, r);
  const auto& j = r.jobs[0];
  REQUIRE(j.interrupted > 5);
  CHECK(r.failures[0].jobs_hit == j.interrupted);
  CHECK(r.failures[0].repairs == r.failures[0].events - r.failures[0].on_down);
  // Each interruption loses at most one interval and one checkpoint of 4 GPUs.
  CHECK(j.gpu_s.lost[0] <= static_cast<double>(j.interrupted) * 4 * (30 * 60 + 20) * (1 + 1e-12));
  // Each restart pays R = 300 s (the last may be cut by the horizon or a failure).
  CHECK(j.gpu_s.restart <= static_cast<double>(j.interrupted) * 4 * 300 * (1 + 1e-12));
  CHECK(j.gpu_s.restart >= static_cast<double>(j.interrupted - 1) * 4 * 300 * (1 - 1e-12) - 1e-6);
  // Down time: each repair takes the node (4 GPUs) for 2 h, unless the horizon cuts the last one.
  CHECK(r.gpu_s.down <= static_cast<double>(r.failures[0].repairs) * 4 * 2 * kH * (1 + 1e-12));
  CHECK(r.gpu_s.down >= static_cast<double>(r.failures[0].repairs - 1) * 4 * 2 * kH * (1 - 1e-12));
}
