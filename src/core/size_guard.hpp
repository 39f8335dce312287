// The size guard: what a request would take (schedule operations, bytes of memory), estimated
// from its structure before anything is built, against a limit (the global --max-memory), and the
// refusal that says so (exit 4, SimulationError). The estimates themselves live where the
// structure is: a platform's in plan::platform_size, a collective's in coll::Algorithm::schedule_ops.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace ffsim {

/// The default limit: 4 GiB. [S] A choice, not a measured fact: above the largest documented runs
/// (9,600-GPU HFReduce on the fluid engine ~750 MB, the 10,000-GPU VGG16 DDP step ~2 GB, issue 31)
/// and below the 4.5 GB that requests just under the old 2^23-operation guard took before failing.
inline constexpr double kDefaultMemoryLimit = 4.0 * 1024 * 1024 * 1024;

/// The most memory a request may take by the estimate, in bytes (kDefaultMemoryLimit unless set).
[[nodiscard]] double memory_limit();
/// Sets memory_limit() for the process (the command line's --max-memory); > 0.
void set_memory_limit(double bytes);

/// What a request takes by the size guard's estimate.
struct Footprint {
  double ops = 0;    ///< schedule operations (0: none simulated)
  double bytes = 0;  ///< memory at the peak
};

/// "<request> needs about <ops> operations and <bytes> of memory by the size guard's estimate
/// (<detail>), over the limit of <limit> (--max-memory); <suggestion>" as a SimulationError
/// (exit 4). `over_ops`: also beyond the operations one simulated schedule holds.
[[noreturn]] void refuse_oversized(const std::string& request, const Footprint& f, const std::string& detail,
                                   const std::string& suggestion, bool over_ops = false);

/// Whether `f` is over the limit: its bytes above memory_limit(), or `largest_schedule_ops` above
/// what one schedule holds (sched::Schedule::kMaxOps, passed by the caller as `max_ops`).
[[nodiscard]] bool oversized(const Footprint& f, double largest_schedule_ops, double max_ops);

}  // namespace ffsim
