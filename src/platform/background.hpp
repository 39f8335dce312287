// Background traffic: steady streams between compute nodes and storage nodes (a checkpoint storm,
// restart reads) that run as real flows beside a schedule, in the same engine solve.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "platform/machine.hpp"
#include "sched/schedule.hpp"

namespace ffsim::platform {

/// Which way a stream's bytes move: compute nodes write to storage (checkpoints) or read from it.
enum class BackgroundDirection { Write, Read };

/// K compute nodes (first_node .. first_node + nodes - 1), each with `targets_per_node` flows to
/// (or from) the storage nodes' drives, spread round-robin over the storage nodes; each node's
/// flows together at most `rate_per_node` (each flow capped at rate_per_node / targets_per_node).
/// A compute node's end is the DRAM of the socket its NIC hangs off.
struct BackgroundStream {
  std::string name;
  sched::TrafficClass cls = sched::TrafficClass::Storage;
  BackgroundDirection direction = BackgroundDirection::Write;
  int first_node = 0;
  int nodes = 0;
  int targets_per_node = 1;
  double rate_per_node = 0;  ///< bytes per second
};

/// A background document (kind "background"): its streams, all running at once.
struct BackgroundSpec {
  std::string file, name, description;
  std::vector<BackgroundStream> streams;
};

/// The place a compute node's storage traffic starts or ends at: the DRAM on its NIC's socket.
[[nodiscard]] sched::Place storage_client_dram(const Machine& m, int node);

/// Why `b` cannot run on `m` ("" if it can), with the index of the offending stream (-1: none):
/// writer nodes beyond the cluster, or no storage nodes.
struct BackgroundFit {
  int stream = -1;
  std::string message;
};
[[nodiscard]] BackgroundFit background_fit(const Machine& m, const BackgroundSpec& b);

/// Adds every stream's flows to `s` as transfers with no dependencies (they start at time 0), each
/// carrying its cap times `horizon` bytes: a flow runs at most at its cap, so none ends before
/// `horizon` seconds. Returns their ids. Requires background_fit(m, b) to be empty.
std::vector<sched::OpId> add_background(sched::Schedule& s, const Machine& m, const BackgroundSpec& b, double horizon);

/// Adds a storage transfer of `bytes_per_flow` bytes for each of `targets_per_node` flows of each
/// compute node of `nodes` (in that order, the i-th node's flow t to storage node
/// (i x targets + t) mod S), each capped at `cap` bytes per second, in class `cls`, all with no
/// dependencies (they start at time 0). Returns their ids. Requires storage nodes in `m`.
std::vector<sched::OpId> add_storage_flows(sched::Schedule& s, const Machine& m, const std::vector<int>& nodes,
                                           int targets_per_node, BackgroundDirection direction, double bytes_per_flow,
                                           double cap, sched::TrafficClass cls, std::uint32_t tag);

/// The summed caps of all streams (bytes per second): the background's rate when nothing slows it.
[[nodiscard]] double background_rate(const BackgroundSpec& b);

}  // namespace ffsim::platform
