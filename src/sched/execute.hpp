// The data-movement check: executes a schedule's data semantics on small in-memory buffers.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "sched/schedule.hpp"

namespace ffsim::sched {

/// Buffer contents, one double per element (elem_size bytes each).
using Memory = std::vector<std::vector<double>>;

/// Allocates every buffer of `s` (zeroed).
[[nodiscard]] Memory allocate(const Schedule& s, int elem_size);

/// Runs the data semantics of `s` on `mem` in a topological order of its dependencies.
/// `lifo` picks the most recently released op first instead of the oldest: a schedule whose
/// result depends on the order (a missing dependency, a race) gives different results under the
/// two orders. Throws InternalError for a ref outside its buffer or a size that is not a whole
/// number of elements.
void execute(const Schedule& s, Memory& mem, int elem_size, bool lifo = false);

}  // namespace ffsim::sched
