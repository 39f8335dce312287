// ffsim ops: Poisson arrivals of a job's instances (JobSpec::arrival_rate_per_hour): their count and
// gaps are the Poisson process's, they keep to their window, and they draw from their own random
// stream, so the failure processes' draws stay as they were.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "ops/simulate.hpp"

using namespace ffsim;

namespace {

constexpr double kH = 3600.0;

// 4 nodes x 8 GPUs, no failures: an arrivals job of 1 GPU and 6 minutes never waits for GPUs
// (at 2 an hour, about 0.2 run at once), so its instances start when they arrive.
ops::OpsParams stream(double rate_per_hour, double horizon_h, std::uint64_t seed) {
  ops::OpsParams p;
  p.cluster.nodes = 4;
  p.cluster.gpus_per_node = 8;
  p.horizon_s = horizon_h * kH;
  p.seed = seed;
  ops::JobSpec j;
  j.name = "stream";
  j.gpus = 1;
  j.work_s = 0.1 * kH;
  j.arrival_rate_per_hour = rate_per_hour;
  p.jobs = {j};
  return p;
}

// The instances' arrival times: their first runs' queue entries, in order.
std::vector<double> arrival_times(const ops::OpsResult& r) {
  std::vector<double> t;
  for (const auto& x : r.timeline->runs)
    if (x.run == 1) t.push_back(x.queued_at);
  std::sort(t.begin(), t.end());
  return t;
}

}  // namespace

TEST_CASE("ops arrivals: the count and the gaps of a Poisson process of the rate") {
  // Rate 2 an hour over 1,000 h: N ~ Poisson(2,000), sd sqrt(2000) = 45; 4 sd: 1,820 .. 2,180.
  // Gaps: mean 1/2 h (sd of the mean 0.5 / sqrt(2000) = 0.011 h), and a share exp(-1) = 36.8%
  // above the mean (sd sqrt(0.368 x 0.632 / 2000) = 1.1 points).
  for (std::uint64_t seed : {1u, 2u}) {
    const auto p = stream(2, 1000, seed);
    const auto r = ops::simulate(p, true);
    const auto& s = r.jobs[0];
    CHECK(s.submitted >= 1820);
    CHECK(s.submitted <= 2180);
    const auto t = arrival_times(r);
    REQUIRE(t.size() == static_cast<std::size_t>(s.submitted));
    double sum = 0;
    int above = 0;
    for (std::size_t i = 1; i < t.size(); ++i) {
      const double gap = (t[i] - t[i - 1]) / kH;
      sum += gap;
      above += gap > 0.5 ? 1 : 0;
    }
    const double n = static_cast<double>(t.size() - 1);
    CHECK(sum / n == doctest::Approx(0.5).epsilon(0.1));
    CHECK(above / n == doctest::Approx(std::exp(-1.0)).epsilon(0.12));
    // Each instance is one arrival: no waits (the cluster is nearly empty), every one done but
    // those the horizon cuts.
    CHECK(s.max_wait_s == 0);
    CHECK(s.completed + r.running_at_end == s.submitted);
  }
}

TEST_CASE("ops arrivals: a window from .. until, the seed's own stream, the failures' draws kept") {
  auto p = stream(4, 200, 3);
  p.jobs[0].submit_s = 50 * kH;
  p.jobs[0].arrivals_until_s = 80 * kH;
  const auto r = ops::simulate(p, true);
  const auto t = arrival_times(r);
  REQUIRE(t.size() > 60);  // 4 an hour x 30 h = 120 expected (sd 11)
  CHECK(t.front() >= 50 * kH);
  CHECK(t.back() < 80 * kH);
  // The same seed, the same arrivals; another seed, others.
  const auto again = ops::simulate(p, true);
  CHECK(arrival_times(again) == t);
  auto q = p;
  q.seed = 4;
  CHECK(arrival_times(ops::simulate(q, true)) != t);
  // The failure processes draw from streams 0, 1, ...; the arrivals from kArrivalStream + job: a
  // mix's failures are the same draws with and without an arrivals job beside its jobs.
  ops::OpsParams m = stream(1, 300, 9);
  m.jobs[0].arrival_rate_per_hour = 0;  // a job submitted once
  m.jobs[0].work_s = 200 * kH;
  m.jobs[0].gpus = 16;
  m.failures = {{"g", ops::FailureUnit::Gpu, 1e-3, 0}, {"n", ops::FailureUnit::Node, 2e-3, 5 * kH}};
  const auto base = ops::simulate(m, true);
  ops::OpsParams with = m;
  ops::JobSpec a = stream(3, 300, 9).jobs[0];
  a.name = "arrivals";
  with.jobs.push_back(a);
  const auto both = ops::simulate(with, true);
  REQUIRE(base.timeline->failures.size() == both.timeline->failures.size());
  REQUIRE(base.timeline->failures.size() > 5);  // 32 x 1e-3 x 300 + 4 x 2e-3 x 300 = 12 expected
  for (std::size_t i = 0; i < base.timeline->failures.size(); ++i) {
    CHECK(base.timeline->failures[i].t == both.timeline->failures[i].t);
    CHECK(base.timeline->failures[i].unit == both.timeline->failures[i].unit);
  }
  CHECK(both.jobs[1].submitted > 800);  // 3 an hour x 300 h = 900 (sd 30)
}

TEST_CASE("ops arrivals: bad parameters are ValueErrors naming the job") {
  auto p = stream(1, 10, 1);
  p.jobs[0].count = 2;
  CHECK_THROWS_WITH_AS(
      ops::simulate(p),
      "job \"stream\": a job with arrivals has neither a count nor repeat (each arrival is one instance)", ValueError);
  p = stream(1, 10, 1);
  p.jobs[0].repeat = true;
  CHECK_THROWS_AS(ops::simulate(p), ValueError);
  p = stream(-1, 10, 1);
  CHECK_THROWS_WITH_AS(ops::simulate(p), "job \"stream\": its arrival rate must be a non-negative number per hour",
                       ValueError);
  p = stream(1, 10, 1);
  p.jobs[0].submit_s = 5 * kH;
  p.jobs[0].arrivals_until_s = 5 * kH;
  CHECK_THROWS_WITH_AS(ops::simulate(p), "job \"stream\": its arrivals end before they begin", ValueError);
  // Arrivals after the horizon: none, and no error.
  p = stream(1, 10, 1);
  p.jobs[0].submit_s = 20 * kH;
  const auto r = ops::simulate(p);
  CHECK(r.jobs[0].submitted == 0);
}
