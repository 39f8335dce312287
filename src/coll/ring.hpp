// Ring collectives as NCCL runs them (src/device/all_reduce.h runRing): reduce-scatter steps,
// then allgather steps, each moving one segment per ring link. Steps are separated by barriers:
// in NCCL's pipelined ring every rank's step is gated by its predecessor, so in steady state all
// links advance at the pace of the slowest one, which a per-step barrier reproduces.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "coll/collective.hpp"

namespace ffsim::coll {

/// Which phases a ring collective runs.
struct RingPhases {
  bool reduce_scatter = false;
  bool allgather = false;
};

/// Emits a ring collective over a vector of `full_bytes` split into n segments: AllReduce runs
/// both phases (full = S); ReduceScatter phase 1 (full = S, each rank keeps S/n); AllGather phase 2
/// (full = n x the per-rank input). NCCL's base latency is one delay before the first step.
/// `steps`, when not empty, emits only those step indices (counted over the phases that run), each
/// standalone: no barriers, no base latency (for the representative-step shortcut).
Emitted emit_ring(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                  double full_bytes, const Options& o, RingPhases phases, const std::vector<int>& steps = {});

/// Time of a ring collective from one representative reduce-scatter step and one allgather step,
/// each simulated once and multiplied by n-1 (exact: every step moves the same segment size over
/// the same links; proven against the full schedule in tests).
double simulate_ring(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                     double full_bytes, RingPhases phases);

/// The rings a ring collective runs (ring_orders): one per compute NIC on 2+ nodes with 2+ rails.
[[nodiscard]] int ring_count(const GroupShape& g);

/// Operations of a ring collective's schedule (Algorithm::schedule_ops). With n ranks, R rings and
/// s steps (n - 1 per phase), each step moves one segment per ring link: per link a software delay
/// (when NCCL's hop latency exceeds the physical one: counted always, an upper bound), the transfer
/// and, in a reduce-scatter step, the GPU's reduce. The whole schedule (`full`): NCCL's base delay,
/// a barrier per step and one at the end, 2 + s (1 + R n (2 + rs)) ops (allreduce: both phases).
/// The shortcut (simulate_ring) runs one standalone step per phase: R n (2 + rs) + 1 ops, the
/// larger of the two. One rank: a single zero-time op.
[[nodiscard]] double ring_schedule_ops(const GroupShape& g, RingPhases phases, bool full);

/// Closed form: per step, each flow's end (its hop latency plus its own bound under the step's
/// loads, or the protocol's cap) and, in a reduce-scatter step, each GPU's reduces of the rings'
/// parts as they arrive (a work-conserving queue); the slowest GPU or flow ends the step.
Estimate estimate_ring(const platform::Platform& p, const LibraryParams& lib, const Group& g, double full_bytes,
                       RingPhases phases);

}  // namespace ffsim::coll
