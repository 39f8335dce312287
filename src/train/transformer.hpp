// "transformer": 3D-parallel transformer training as Megatron-LM runs it (Narayanan et al.,
// "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC'21,
// arXiv 2104.04473; Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
// Models", arXiv 2205.05198): tensor parallelism inside a node (optionally with sequence
// parallelism), pipeline parallelism with 1F1B and interleaved (virtual-stage) schedules, data
// parallelism with ZeRO stage 0-3, activation recomputation none | selective | full. A step is
// evaluated on the closed form (no schedule): per micro-batch stage times from the compute model,
// collective times from the collective library's estimate() closed forms.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>

#include "train/workload.hpp"

namespace ffsim::train {

struct TransformerParams {
  int tp = 1;                      ///< tensor-parallel degree (inside a node)
  int pp = 1;                      ///< pipeline stages
  int interleave = 1;              ///< v: model chunks per stage (interleaved 1F1B); 1: plain 1F1B
  bool sequence_parallel = false;  ///< Korthikanti et al. 2022: allreduce -> reduce-scatter + allgather
  int zero_stage = 0;              ///< 0: none; 1: optimizer state; 2: + gradients; 3: + weights sharded over DP
  std::string recompute = "none";  ///< "none", "selective" (attention core) or "full" (each block)
};

/// Tensor-parallel collectives of one transformer block, forward + backward of one micro-batch
/// (with full recomputation, the recomputed forward's too), each of `bytes` (the natural size S:
/// micro_batch x seq x hidden activation elements at the precision's element size).
struct TpTraffic {
  int allreduces = 0;       ///< without sequence parallelism
  int reduce_scatters = 0;  ///< with it: each allreduce becomes a reduce-scatter and an allgather
  int allgathers = 0;
  double bytes = 0;
};
[[nodiscard]] TpTraffic tp_traffic_per_block(const TransformerParams& p, const WorkloadSpec& w, int micro_batch);

/// One tensor rank's share of layer `l` for the shaped compute model, by Megatron-LM's split
/// (Shoeybi et al. 2019 Sec. 3): a product that maps back to the hidden size (attention output,
/// MLP down) is row-parallel, its K split over the tp ranks; every other linear product (fused
/// QKV, MLP up and gate, the vocabulary-parallel head; [I] the router and MLA's low-rank
/// projections too) is column-parallel, its N split; attention products split by heads. The
/// memory-bound elements split as rank_work's default split them (1 / tp with sequence
/// parallelism, else 10 of Korthikanti's 34 s h duplicated), the attention scores by heads (1 / tp,
/// Korthikanti Table 2's 5 a s / (h t)). tp = 1 returns `l` unchanged.
[[nodiscard]] LayerCost tensor_parallel_share(const TransformerParams& p, const LayerCost& l, int hidden);

/// The pipeline bubble over the ideal time of interleaved 1F1B: (p - 1) / (m v) (Narayanan et al.
/// SC'21 Sec. 2.2.2); 0 for one stage.
[[nodiscard]] double bubble_fraction(int pp, int micro_batches, int interleave);

/// The transformer blocks, embedding and head that stage `s` holds (Megatron's order: chunk j of
/// pp x v holds blocks [j c, (j + 1) c); stage s holds chunks s, s + pp, ...; the embedding with
/// stage 0, the head (and with tied embeddings a copy of the word embedding) with the last).
/// Returns the parameters of the stage (whole, before tensor parallelism).
[[nodiscard]] double stage_params(const TransformerParams& p, const WorkloadSpec& w, int stage);

/// Per-GPU memory of the fullest stage (bytes).
struct TransformerMemory {
  int stage = 0;                                 ///< the fullest stage
  double params = 0;                             ///< parameters per GPU of that stage (its params / tp)
  double weights = 0, grads = 0, optimizer = 0;  ///< after ZeRO sharding over dp
  double activations = 0;                        ///< stored for backward, all in-flight micro-batches
  int in_flight = 0;                             ///< micro-batches whose activations the stage holds at once
  [[nodiscard]] double total() const { return weights + grads + optimizer + activations; }
};
[[nodiscard]] TransformerMemory transformer_memory(const TransformerParams& p, const WorkloadSpec& w, int dp,
                                                   int micro_batches);

/// The closed-form step and its parts (seconds unless said).
struct TransformerStep {
  int dp = 0, micro_batches = 0;
  double stage_compute_s = 0;  ///< kernels of one micro-batch's forward + backward on the slowest stage
  double stage_tp_s = 0;       ///< its tensor-parallel collectives (on the critical path)
  double stage_p2p_s = 0;      ///< its activation and gradient sends (2 v per micro-batch)
  double stage_zero_s = 0;     ///< ZeRO-2/3 collectives per micro-batch
  double pipeline_s = 0;       ///< (m + (p - 1) / v) x the stage's time per micro-batch
  double bubble_fraction = 0;
  double dp_comm_s = 0;  ///< after the pipeline flush: the gradient reduction (ZeRO-dependent)
  double optimizer_s = 0;
  double step_s = 0;
  TransformerMemory memory;
  double memory_limit = 0;  ///< the GPU's memory (bytes)
};
/// Throws ValueError when the memory estimate exceeds the GPU's memory (with the numbers).
[[nodiscard]] TransformerStep estimate_transformer(const TransformerParams& p, const WorkloadSpec& w,
                                                   const platform::Platform& P, CollectiveCosts& costs, int gpus);

[[nodiscard]] std::unique_ptr<Workload> make_transformer(const TransformerParams& p);

}  // namespace ffsim::train
