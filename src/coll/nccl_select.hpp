// NCCL's own choice of algorithm (ring, tree) and protocol (LL, LL128, Simple) by its tuning model
// (NCCL 2.7 src/graph/tuning.cc), for "nccl" and --explain.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "coll/collective.hpp"

namespace ffsim::coll {

/// One row of NCCL's cost table: an algorithm and protocol, its predicted latency (s), algorithm
/// bandwidth (B/s, after the tree's correction factor) and time = latency + bytes / algbw.
struct NcclChoice {
  std::string algorithm;  ///< "nccl_ring" or "nccl_tree"
  NcclProtocol protocol = NcclProtocol::Simple;
  int channels = 0;
  double latency = 0;
  double algbw = 0;
  double time = 0;
  bool enabled = true;  ///< false: NCCL leaves the protocol off here (LL128 without NVLink); never picked
};

/// How NCCL rates the group's topology (its graph search, simplified): channels, per-channel
/// speed and the bus bandwidth they give, and whether the hops inside a node are all NVLink.
struct NcclView {
  int nodes = 0;
  int nics = 1;           ///< compute NICs per node (rails)
  int channels = 0;       ///< lib.nccl.channels per compute NIC
  double speed = 0;       ///< bytes/s per channel: the slower of the intra-node hop and the NIC
  double bus_bw = 0;      ///< channels x speed, capped at lib.nccl.max_bus_bw
  bool intra_nvlink = false;
};
[[nodiscard]] NcclView nccl_view(const platform::Platform& p, const LibraryParams& lib, const Group& g);
/// The same from a group's shape, given whether NCCL's first ring crosses only NVLink inside a node
/// (the size guard's view before the platform is built; equal to the platform's where that holds).
[[nodiscard]] NcclView nccl_view(const LibraryParams& lib, const GroupShape& g, bool intra_nvlink);

/// NCCL's predictions for ring and tree x LL, LL128, Simple (allreduce), with its own speeds, not
/// the platform's: six rows, ring then tree, LL, LL128, Simple each. Empty for fewer than 2 ranks
/// (NCCL runs no tuning model there: one rank's allreduce is a local copy).
[[nodiscard]] std::vector<NcclChoice> nccl_cost_table(const platform::Platform& p, const LibraryParams& lib,
                                                      const Group& g, double bytes);
/// The same from NCCL's view of the group (nccl_view) and its rank count.
[[nodiscard]] std::vector<NcclChoice> nccl_cost_table(const NcclView& v, const LibraryParams& lib, int ranks,
                                                      double bytes);
/// The row of `algorithm` and `protocol` in a table of nccl_cost_table (std::out_of_range if none).
[[nodiscard]] const NcclChoice& nccl_row(const std::vector<NcclChoice>& table, const std::string& algorithm,
                                         NcclProtocol protocol);

/// What NCCL picks: the enabled row of least time, ties to the first in NCCL's loop order (tree
/// before ring, LL before LL128 before Simple: src/enqueue.cc getAlgoInfo keeps the first strict
/// minimum). Fewer than 2 ranks: nccl_ring, Simple (nothing moves).
struct NcclPick {
  std::string algorithm;
  NcclProtocol protocol = NcclProtocol::Simple;
};
[[nodiscard]] NcclPick nccl_pick(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes);
/// The pick from a table nccl_cost_table made.
[[nodiscard]] NcclPick nccl_pick(const std::vector<NcclChoice>& table);
/// The pick among the table's Simple rows (what "nccl" simulated before the schedules moved each
/// protocol's own chunks and bytes; kept for comparisons).
[[nodiscard]] NcclPick nccl_simple_pick(const std::vector<NcclChoice>& table);

}  // namespace ffsim::coll
