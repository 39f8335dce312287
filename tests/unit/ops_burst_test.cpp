// ffsim ops: bursty failure processes (FailureSpec::burst_*): a burst hits exactly its size in
// distinct units within its spread, a mean size is a geometric draw of that mean (truncated at the
// unit count), and bursts arrive at rate x units / mean size, so the failure count keeps its mean.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "ops/burst.hpp"
#include "ops/simulate.hpp"

using namespace ffsim;

namespace {

constexpr double kH = 3600.0;

// 100 nodes x 8 GPUs, one 1-GPU job of an hour, and one node failure process without repair (so
// no node is ever down and every failure drawn is counted in `events`).
ops::OpsParams cluster(double rate_per_hour, double horizon_h, int burst_size, double burst_mean, double spread_s,
                       std::uint64_t seed) {
  ops::OpsParams p;
  p.cluster.nodes = 100;
  p.cluster.gpus_per_node = 8;
  p.horizon_s = horizon_h * kH;
  p.seed = seed;
  ops::JobSpec j;
  j.name = "one";
  j.gpus = 1;
  j.work_s = kH;
  p.jobs = {j};
  ops::FailureSpec f;
  f.name = "flash";
  f.unit = ops::FailureUnit::Node;
  f.rate_per_hour = rate_per_hour;
  f.burst_size = burst_size;
  f.burst_mean = burst_mean;
  f.burst_spread_s = spread_s;
  p.failures = {f};
  return p;
}

}  // namespace

TEST_CASE("ops burst: a fixed-size burst hits exactly N distinct units within its spread") {
  ops::FailureSpec f;
  f.burst_size = 5;
  f.burst_spread_s = 600;
  ops::Rng rng(1, 0);
  // 10,000 bursts of 5 offsets uniform in [0, 600): their mean 300, sd 600 / sqrt(12) / sqrt(50,000)
  // = 0.77 s; 5 sd: 296.1 .. 303.9.
  double sum = 0;
  long long n = 0;
  for (int b = 0; b < 10000; ++b) {
    const auto hits = ops::draw_burst(rng, f, 100);
    REQUIRE(hits.size() == 5);
    std::set<std::uint64_t> units;
    for (std::size_t i = 0; i < hits.size(); ++i) {
      CHECK(hits[i].unit < 100);
      CHECK(hits[i].offset_s >= 0);
      CHECK(hits[i].offset_s < 600);
      if (i > 0) CHECK(hits[i].offset_s >= hits[i - 1].offset_s);
      units.insert(hits[i].unit);
      sum += hits[i].offset_s;
      ++n;
    }
    CHECK(units.size() == 5);
  }
  CHECK(std::abs(sum / static_cast<double>(n) - 300) < 3.9);
  // Edges: a burst of every unit hits each once; a spread of 0 puts every hit at the start.
  f.burst_size = 7;
  f.burst_spread_s = 0;
  const auto all = ops::draw_burst(rng, f, 7);
  std::set<std::uint64_t> units;
  for (const auto& h : all) {
    units.insert(h.unit);
    CHECK(h.offset_s == 0);
  }
  CHECK(units.size() == 7);
  CHECK(ops::burst_mean_size(f, 7) == 7);
}

TEST_CASE("ops burst: a mean size is geometric of that mean, truncated at the units") {
  ops::FailureSpec f;
  f.burst_mean = 3;
  f.burst_spread_s = 60;
  ops::Rng rng(2, 0);
  // Geometric on {1, 2, ...} of mean 3 (q = 2/3): variance q M^2 = 6, so the mean of 20,000 has sd
  // sqrt(6 / 20,000) = 0.0173; 5 sd: 2.913 .. 3.087. P(1) = 1/3, sd sqrt(2/9 / 20,000) = 0.0033; 5 sd 0.017.
  double sum = 0;
  int ones = 0;
  for (int b = 0; b < 20000; ++b) {
    const auto hits = ops::draw_burst(rng, f, 1000);
    REQUIRE(!hits.empty());
    sum += static_cast<double>(hits.size());
    ones += hits.size() == 1;
  }
  CHECK(std::abs(sum / 20000 - 3) < 0.087);
  CHECK(std::abs(ones / 20000.0 - 1.0 / 3) < 0.017);
  CHECK(ops::burst_mean_size(f, 1000) == doctest::Approx(3 * (1 - std::pow(2.0 / 3, 1000))));
  // Over 4 units: E[min(K, 4)] = 3 (1 - (2/3)^4) = 195/81 = 2.407; the variance of min(K, 4) is
  // below 4 (sizes 1..4), so the mean of 20,000 has sd < 0.0142; 5 sd: 0.071.
  CHECK(ops::burst_mean_size(f, 4) == doctest::Approx(195.0 / 81));
  sum = 0;
  for (int b = 0; b < 20000; ++b) {
    const auto hits = ops::draw_burst(rng, f, 4);
    REQUIRE(hits.size() >= 1);
    REQUIRE(hits.size() <= 4);
    sum += static_cast<double>(hits.size());
  }
  CHECK(std::abs(sum / 20000 - 195.0 / 81) < 0.071);
  // A mean of 1 is a burst of one unit, always.
  f.burst_mean = 1;
  CHECK(ops::burst_mean_size(f, 4) == 1);
  for (int b = 0; b < 100; ++b) CHECK(ops::draw_burst(rng, f, 4).size() == 1);
}

TEST_CASE("ops burst: bursts keep the failure count's mean, in bursts of N within the spread") {
  // 1e-3 per node-hour x 100 nodes x 100,000 h: 10,000 failures expected, in bursts of 4 arriving at
  // 0.025 / h (2,500 expected). The count is 4 x Poisson(2,500) less the hits of a burst that fall
  // past the horizon (at most 3): mean 10,000, sd 4 x sqrt(2,500) = 200; 5 sd: 9,000 .. 11,000.
  // Without bursts the sd is sqrt(10,000) = 100.
  for (std::uint64_t seed : {1u, 2u}) {
    const auto r = ops::simulate(cluster(1e-3, 100000, 4, 0, 600, seed), true);
    CHECK(r.failures[0].events >= 9000);
    CHECK(r.failures[0].events <= 11000);
    CHECK(r.failures[0].on_down == 0);
    // The failures, grouped by their start: a hit within 600 s of its group's first joins it. A
    // next burst starts within 600 s of one with probability 1 - exp(-0.025 x 600 / 3600) = 0.42%:
    // Poisson(10.5) such overlaps in 2,500 bursts, each spoiling at most 3 groups (the two bursts' hits
    // split at the 600 s mark). 25 overlaps (4.4 sd) spoil 75 groups, 3%: so at least 95% of groups
    // are one burst of 4 distinct nodes.
    std::vector<std::vector<ops::FailureRecord>> groups;
    for (const auto& x : r.timeline->failures) {
      if (groups.empty() || x.t - groups.back().front().t >= 600) groups.emplace_back();
      groups.back().push_back(x);
    }
    long long good = 0;
    for (const auto& g : groups) {
      std::set<std::uint64_t> units;
      for (const auto& x : g) units.insert(x.unit);
      good += g.size() == 4 && units.size() == 4;
    }
    CHECK(static_cast<double>(good) >= 0.95 * static_cast<double>(groups.size()));
    // The same seed gives the same failures.
    const auto again = ops::simulate(cluster(1e-3, 100000, 4, 0, 600, seed), true);
    REQUIRE(again.timeline->failures.size() == r.timeline->failures.size());
    for (std::size_t i = 0; i < r.timeline->failures.size(); ++i) {
      CHECK(again.timeline->failures[i].t == r.timeline->failures[i].t);
      CHECK(again.timeline->failures[i].unit == r.timeline->failures[i].unit);
    }
  }
  // A geometric size of mean 2.5 keeps the mean too: 10,000 expected. The count is compound Poisson:
  // variance (10,000 / 2.5 bursts) x E[K^2], with E[K^2] = q M^2 + M^2 = M (2M - 1) = 10 (truncation
  // at 100 nodes is negligible: q^100 = 0.6^100), so 40,000, sd 200; 5 sd: 9,000 .. 11,000.
  const auto g = ops::simulate(cluster(1e-3, 100000, 0, 2.5, 600, 3));
  CHECK(g.failures[0].events >= 9000);
  CHECK(g.failures[0].events <= 11000);
}

TEST_CASE("ops burst: bad bursts are value errors") {
  auto p = cluster(1e-3, 10, 101, 0, 60, 1);  // 101 distinct nodes of 100
  CHECK_THROWS_AS(ops::simulate(p), ValueError);
  p = cluster(1e-3, 10, 2, 2, 60, 1);  // a size and a mean
  CHECK_THROWS_AS(ops::simulate(p), ValueError);
  p = cluster(1e-3, 10, 0, 0.5, 60, 1);  // a mean below 1
  CHECK_THROWS_AS(ops::simulate(p), ValueError);
  p = cluster(1e-3, 10, 2, 0, -1, 1);  // a negative spread
  CHECK_THROWS_AS(ops::simulate(p), ValueError);
}
