// Bursts of a failure process (FailureSpec::burst_*): the size of a burst, the distinct units it
// hits and their offsets from its start, drawn from the process's own stream (ops/rng.hpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "ops/params.hpp"
#include "ops/rng.hpp"

namespace ffsim::ops {

/// The mean number of units a burst hits. Fixed size N: N. Geometric of mean M over {1, 2, ...}
/// (P(k) = (1 - q) q^(k-1), q = 1 - 1/M), truncated at `units`: E[min(K, units)] =
/// sum_{k=0}^{units-1} q^k = M (1 - q^units).
[[nodiscard]] inline double burst_mean_size(const FailureSpec& f, std::uint64_t units) {
  if (f.burst_size > 0) return f.burst_size;
  const double q = 1.0 - 1.0 / f.burst_mean;
  return f.burst_mean * (1.0 - std::pow(q, static_cast<double>(units)));
}

/// One unit's failure in a burst: its offset from the burst's start (s) and the unit.
struct BurstHit {
  double offset_s = 0;
  std::uint64_t unit = 0;
};

/// Draws one burst of `f` over `units` units: the size (geometric: k = 1 + floor(ln U / ln q), at
/// most `units`), then per hit a unit (redrawn until it is one the burst has not hit) and an offset
/// spread x (1 - U) in [0, spread). Sorted by offset (ties: draw order).
[[nodiscard]] inline std::vector<BurstHit> draw_burst(Rng& rng, const FailureSpec& f, std::uint64_t units) {
  std::uint64_t k = static_cast<std::uint64_t>(f.burst_size);
  if (f.burst_size <= 0) {
    const double q = 1.0 - 1.0 / f.burst_mean;
    const double u = rng.uniform_open0();
    const double extra = q > 0 ? std::floor(std::log(u) / std::log(q)) : 0.0;
    k = extra >= static_cast<double>(units) ? units : 1 + static_cast<std::uint64_t>(extra);
  }
  k = std::min(k, units);
  std::vector<BurstHit> hits;
  hits.reserve(k);
  std::set<std::uint64_t> hit;
  while (hits.size() < k) {
    const std::uint64_t unit = rng.index(units);
    if (!hit.insert(unit).second) continue;
    hits.push_back({f.burst_spread_s * (1.0 - rng.uniform_open0()), unit});
  }
  std::stable_sort(hits.begin(), hits.end(), [](const BurstHit& a, const BurstHit& b) { return a.offset_s < b.offset_s; });
  return hits;
}

}  // namespace ffsim::ops
