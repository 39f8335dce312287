// Which free whole nodes a job gets under its placement (JobSpec::Placement): the scheduler's rule
// for `ffsim ops`, apart so that tests can check each rule's choice.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops/params.hpp"
#include "ops/rng.hpp"

namespace ffsim::ops {

/// k of the free whole nodes `idle` (ascending, k <= idle.size()), ascending:
/// - packed: the first k;
/// - spread: the i-th is idle[floor(i F / k)] for F = idle.size(), i = 0 .. k-1 (gaps of F / k);
/// - random: a uniform draw of k distinct ones (a partial Fisher-Yates shuffle) from the stream of
///   `seed` keyed by the job's index, the instance and the run, so the same attempt always draws
///   the same nodes and no other stream is touched.
[[nodiscard]] inline std::vector<int> choose_whole_nodes(std::vector<int> idle, int k, JobSpec::Placement rule,
                                                         std::uint64_t seed, std::size_t job, long long instance,
                                                         std::uint64_t run) {
  const auto f = static_cast<long long>(idle.size());
  const auto n = static_cast<std::size_t>(k);
  if (k <= 0) return {};
  if (rule == JobSpec::Placement::Packed) {
    idle.resize(n);
    return idle;
  }
  std::vector<int> out;
  out.reserve(n);
  if (rule == JobSpec::Placement::Spread) {
    for (long long i = 0; i < k; ++i) out.push_back(idle[static_cast<std::size_t>(i * f / k)]);
    return out;
  }
  std::uint64_t h = splitmix64(static_cast<std::uint64_t>(job));
  h = splitmix64(h ^ static_cast<std::uint64_t>(instance));
  h = splitmix64(h ^ run);
  Rng g(seed, h);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(g.index(static_cast<std::uint64_t>(f) - i));
    std::swap(idle[i], idle[j]);
  }
  idle.resize(n);
  std::sort(idle.begin(), idle.end());
  return idle;
}

}  // namespace ffsim::ops
