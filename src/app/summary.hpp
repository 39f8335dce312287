// The figures of `ffsim summary` that come from the collective algorithms: HFReduce against NCCL
// by their closed forms at 16, 128 and 1,440 GPUs.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/catalog.hpp"
#include "plan/scenario.hpp"

namespace ffsim::app {

struct AllreduceFigure {
  int gpus = 0;
  double hfreduce_time = 0, nccl_time = 0;  ///< seconds, closed form
  double hfreduce_host = 0;                 ///< host-memory traffic per node, in multiples of the size
  std::string hfreduce_bound;               ///< what binds hfreduce
};

struct AllreduceSummary {
  double bytes = 0;                     ///< per GPU
  std::vector<AllreduceFigure> rows;    ///< the counts the cluster has
  double tree_chunk_bytes = 0;          ///< the shipped NCCL tree chunk (0: NCCL's rule)
  double step_size = 0;                 ///< NCCL's own step
  /// At the largest count, nccl with NCCL's own chunk rule against the shipped chunk (only with a
  /// shipped chunk and a row).
  std::optional<double> nccl_own_rule_time, nccl_shipped_time;
};

/// HFReduce and NCCL allreduces of 184 MiB per GPU on `sc` (closed forms).
[[nodiscard]] AllreduceSummary allreduce_summary(const plan::ScenarioSpec& sc, const config::Catalog& cat);

}  // namespace ffsim::app
