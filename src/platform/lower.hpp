// Lowering: a schedule operation as the flows both engines (fluid and SimGrid) run.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "platform/machine.hpp"
#include "platform/router.hpp"
#include "sched/schedule.hpp"

namespace ffsim::platform {

/// One flow of a lowered operation.
struct Flow {
  std::uint32_t path = 0;  ///< Router::path id
  double amount = 0;       ///< bytes (GpuCompute: seconds)
  double weight = 1;       ///< share weight of its traffic class
  sched::TrafficClass cls = sched::TrafficClass::Other;
  /// Arbitration delay before the flow shares bandwidth: options().arbitration_latency / weight for
  /// transfers and reductions (the SimGrid engine's penalty link), 0 for compute.
  double start_delay = 0;
  /// The flow's own rate cap: the path's (peer-to-peer) and the op's (software), bytes per second.
  double rate_cap = std::numeric_limits<double>::infinity();
};

/// What an engine runs for one operation: wait `latency` (the physical latency of its path or
/// its fixed delay), then run all flows concurrently (each after its start_delay); the operation
/// ends when its last flow ends.
struct Lowered {
  double latency = 0;
  std::vector<Flow> flows;
  /// The replica paths of `replica_schedule`, each looked up in the router once (an engine keeps
  /// one Lowered per run; another schedule starts afresh): by replica list (its first index), the
  /// first copy's path and the replica path; other first copies of one list by (list, path).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> replica_paths;
  std::unordered_map<std::uint64_t, std::uint32_t> replica_paths_more;
  const sched::Schedule* replica_schedule = nullptr;
};

/// Lowers operation `op` of `s` into flows on `m`'s resources by `r`'s paths (replaces `out`).
/// Thread-safe (the router is).
void lower(const Machine& m, const Router& r, const sched::Schedule& s, sched::OpId op, Lowered& out);

}  // namespace ffsim::platform
