// Independent jobs on several threads, with the errors of a run one after the other.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <functional>

namespace ffsim {

/// The machine's hardware threads (at least 1).
[[nodiscard]] int hardware_threads();

/// Runs job(i) for every i in [0, n) on up to `threads` threads (the calling one included), each
/// index once, in no fixed order. The jobs must share no mutable state. Every job runs even when
/// another fails; then the exception of the lowest failing index is rethrown, the one a run one
/// after the other would have met first (later jobs' work is discarded, as it would not have run).
void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& job);

}  // namespace ffsim
