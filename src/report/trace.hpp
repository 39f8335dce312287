// Chrome/Perfetto trace export of a timeline (sched/timeline.hpp: a training step, a whole schedule)
// "X" events, one process per node, one thread per GPU, GPU communication, NIC and CPU reducer).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ostream>
#include <string>

#include "eval/engine.hpp"
#include "platform/platform.hpp"
#include "sched/schedule.hpp"
#include "sched/timeline.hpp"

namespace ffsim::report {

/// Writes `t` as {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}: metadata
/// events naming each node ("node 3") and lane, then one "X" event per op and lane (ts and dur in
/// microseconds). Events of a lane that overlap in time go to extra lanes ("nic0 #2"), so that on
/// every thread events follow one another and never overlap partially.
void write_chrome_trace(std::ostream& os, const sched::Trace& t);

/// The timeline of a whole schedule run on an engine (`ffsim collective --trace`): per node, a
/// track per GPU and direction of its link ("gpu3 out": D2H and sends to GPUs; "gpu3 in": H2D,
/// GDRCopy writes, receives from GPUs), per GPU's kernels ("gpu3"), per NIC and direction ("nic0
/// out", "nic0 in": every transfer between nodes, also on the GPU tracks of its ends), per
/// socket's cores ("cpu1 reducer") and per socket's other memory traffic ("cpu1 memory": the cores
/// reading a buffer, copies between sockets). Each event is named by its op's tag and carries its
/// bytes and the resource that limited it for most of its life. Delays (software overheads, hop
/// latencies) occupy no resource and are left out; so are ops of zero duration.
[[nodiscard]] sched::Trace schedule_trace(const sched::Schedule& s, const eval::Result& r, const platform::Platform& p,
                                          std::string title);

}  // namespace ffsim::report
