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
  double latency = 0;
  double algbw = 0;
  double time = 0;
};

/// NCCL's predictions for ring and tree (Simple protocol) with its own speeds, not the platform's.
[[nodiscard]] std::vector<NcclChoice> nccl_cost_table(const LibraryParams& lib, const Group& g, double bytes);
/// "nccl_ring" or "nccl_tree": the argmin of the table.
[[nodiscard]] std::string nccl_pick(const LibraryParams& lib, const Group& g, double bytes);

}  // namespace ffsim::coll
