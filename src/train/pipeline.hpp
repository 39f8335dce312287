// Pipeline parallelism (1F1B or GPipe over micro-batches), with tensor parallelism inside a stage,
// data parallelism across pipelines (gradient allreduce at the end of the step, ZeRO stage 0 or 1)
// and, for MoE models, expert parallelism with all-to-all dispatch and combine per MoE layer.
// Shared by the "pipeline" and "moe" workload kinds.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "train/workload.hpp"

namespace ffsim::train {

struct PipelineParams {
  int pp = 1;                        ///< pipeline stages
  int tp = 1;                        ///< tensor-parallel degree inside a stage (NVLink pairs)
  int ep = 1;                        ///< expert-parallel degree (MoE): routed experts split over ep data-parallel ranks
  std::string schedule = "1f1b";    ///< "1f1b" (PipeDream-flush) or "gpipe" (all forwards, then all backwards)
  /// "dp_inner": consecutive GPUs are data-parallel ranks of one stage (a node's GPUs in different
  /// pipelines, HaiScale's and Megatron's order); "pp_inner": consecutive GPUs are the stages of one pipeline.
  std::string layout = "dp_inner";
  /// "none", or "transfer": the pipelines whose stage-0 GPUs share a node start one activation
  /// transfer apart, so that their sends through the node's NIC interleave instead of colliding.
  std::string stagger = "none";
  std::string partition = "balanced";  ///< "balanced" (least slowest stage) or "uniform" (equal blocks)
  int zero_stage = 0;                ///< 1: optimizer state sharded over data-parallel ranks, parameters allgathered
  bool recompute = false;            ///< activation checkpointing: backward reruns the forward
  bool overlap_grad_reduce = true;   ///< reduce gradient buckets as the last backward produces them
  double bucket = 25.0 * 1048576;    ///< gradient bucket limit (bytes)
};

/// The workload for these parameters: "pipeline", or "moe" (its MoE layers expert-parallel) when `moe`.
[[nodiscard]] std::unique_ptr<Workload> make_pipeline_workload(const PipelineParams& p, bool moe);

/// Contiguous layer ranges [begin, end) of each stage. "uniform": transformer blocks split evenly
/// (extra ones to the first stages), the embedding with the first stage and the head with the last;
/// other models split evenly by layer count. "balanced": the contiguous split that minimises the
/// slowest stage's `cost` (linear-partition dynamic programme; ties to the earliest split).
[[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> partition_stages(const std::vector<LayerCost>& layers,
                                                                                const std::vector<double>& cost, int pp,
                                                                                const std::string& how);

/// The order in which a stage runs forward (true) and backward (false) passes of micro-batches.
[[nodiscard]] std::vector<std::pair<bool, int>> stage_order(const std::string& schedule, int stage, int stages,
                                                           int micro_batches);

// ---- MoE (moe.cpp)
/// Parameters of a layer held by one GPU when routed experts are split over `ep` ranks.
[[nodiscard]] double local_params(const LayerCost& l, int ep);
/// Bytes one rank's all-to-all sends for one MoE layer pass (dispatch or combine) of `samples`
/// samples: every routed token copy, hidden-wide, at `act_bytes` per element.
[[nodiscard]] double alltoall_bytes(const LayerCost& l, double samples, double act_bytes);

}  // namespace ffsim::train
