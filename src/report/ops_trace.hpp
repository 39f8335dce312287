// The timeline of `ffsim ops --trace`: a cluster's job runs, failures and repairs over its horizon as
// a Chrome/Perfetto trace (write_chrome_trace in report/trace.hpp writes it; docs/commands/ops.md).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "ops/params.hpp"
#include "ops/result.hpp"
#include "sched/timeline.hpp"

namespace ffsim::report {

/// The timeline of `r` (simulated from `p` with a timeline: OpsResult::timeline), in three
/// processes. "jobs": one track per job of the mix and slot, a slot holding one instance at a time
/// (first fit, so a job of count N has about N tracks); each run is its segments in order,
/// "queued", "restart", the work ("llama13b-pp #3": instance 3, its checkpoints counted in the
/// args), and "lost: <process>" when a failure ended it. With `checkpoints`, the work is cut into
/// its pieces of work and "checkpoint" slices (one per checkpoint: for a year of Fire-Flyer 2 about
/// 100,000 per job; without it, a checkpoint under way at the horizon is the only checkpoint slice).
/// "failures": one track per failure process, an instant per failure, naming its unit and the runs
/// it ended. "repairs": a slice per node out of the pool, from the failure to its repair (or the
/// horizon). A logic_error if `r` has no timeline.
[[nodiscard]] sched::Trace ops_trace(const ops::OpsParams& p, const ops::OpsResult& r, bool checkpoints,
                                     std::string title);

}  // namespace ffsim::report
