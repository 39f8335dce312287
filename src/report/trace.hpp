// Chrome/Perfetto trace export of a simulated training step (the "Trace Event Format": complete
// "X" events, one process per node, one thread per GPU, GPU communication, NIC and CPU reducer).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ostream>

#include "train/run.hpp"

namespace ffsim::report {

/// Writes `t` as {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}: metadata
/// events naming each node ("node 3") and lane, then one "X" event per op and lane (ts and dur in
/// microseconds). Events of a lane that overlap in time go to extra lanes ("nic0 #2"), so that on
/// every thread events follow one another and never overlap partially.
void write_chrome_trace(std::ostream& os, const train::StepTrace& t);

}  // namespace ffsim::report
