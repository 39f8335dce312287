// NCCL's own choice between ring and tree (tuning.cc's cost model), for "nccl" and --explain.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "coll/collective.hpp"

namespace ffsim::coll {

/// One row of NCCL's cost table: its predicted latency (s), algorithm bandwidth (B/s) and time.
struct NcclChoice {
  std::string algorithm;
  int channels = 0;
  double latency = 0;
  double algbw = 0;
  double time = 0;
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

/// NCCL's predictions for ring and tree (Simple protocol) with its own speeds, not the platform's.
[[nodiscard]] std::vector<NcclChoice> nccl_cost_table(const platform::Platform& p, const LibraryParams& lib,
                                                      const Group& g, double bytes);
/// "nccl_ring" or "nccl_tree": the argmin of the table.
[[nodiscard]] std::string nccl_pick(const platform::Platform& p, const LibraryParams& lib, const Group& g, double bytes);

}  // namespace ffsim::coll
