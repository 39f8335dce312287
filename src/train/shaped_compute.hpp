// The shaped compute model: one training step of a network on one GPU, each matrix product timed
// from its shape by the GEMM model (train/gemm_time.hpp: tiles, waves over the SMs, split-K), the
// memory-bound work by roofline on the HBM bandwidth, and the optimizer's pass over the parameters.
// Its few multipliers are fitted to measured single-GPU throughputs by `ffsim calibrate
// --throughput` (calib/throughput_fit.hpp), which writes them to a compute_model entry; `ffsim train`
// uses one per layer (train::layer_times) when a workload names such an entry.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "train/compute.hpp"
#include "train/gemm_time.hpp"
#include "train/nn_model.hpp"

namespace ffsim::train {

/// The facts of a GPU at one precision that the model needs.
struct ShapedGpu {
  int sms = 0;
  double peak_flops = 0;        ///< dense peak at the precision, FLOP/s
  double memory_bandwidth = 0;  ///< HBM, B/s
};

/// Seconds of one step by kind, before the multipliers.
struct ShapedTimes {
  double conv_s = 0;          ///< convolutions (implicit GEMMs), forward and backward
  double linear_s = 0;        ///< linear layers
  double attention_s = 0;     ///< attention's score and value products
  double memory_s = 0;        ///< memory-bound kernels at the full HBM bandwidth, but for attention scores
  double score_memory_s = 0;  ///< the memory-bound work on materialised attention scores (softmax, dropout)
  double optimizer_s = 0;     ///< the optimizer's pass over the parameters at the full HBM bandwidth
  long long gemms = 0;        ///< matrix products timed
};

/// The inputs of a step besides the network and the GPU.
struct ShapedStep {
  double samples = 1;                    ///< images or sequences per step
  double act_bytes = 2;                  ///< bytes per activation element (element_bytes of the precision)
  double optimizer_bytes_per_param = 0;  ///< HBM traffic of the optimizer step per parameter
  /// Memory-bound traffic per stored activation element: forward passes x (1 + backward factor).
  double memory_traffic = 6;
  /// Of memory_traffic, the forward pass's share: forward passes / (forward passes x (1 + backward
  /// factor)) = 1 / 3 with the default model. Only shaped_layer splits by pass.
  double forward_memory_share = 1.0 / 3.0;
};

/// One layer's forward and backward pass, before the multipliers.
struct ShapedLayer {
  ShapedTimes fwd, bwd;
};

/// The layer's share of shaped_step: its products (forward; backward as shaped_step derives it) and
/// its memory-bound work split by forward_memory_share. Sums over the layers give shaped_step's
/// times (the optimizer apart: it is 0 here). `tiles`: sm80_gemm_tiles().
[[nodiscard]] ShapedLayer shaped_layer(const LayerCost& l, const ShapedStep& step, const ShapedGpu& gpu,
                                       const GemmParams& gemm, const std::vector<GemmTile>& tiles);

/// Each product takes the time of the fastest sm80 tile (gemm_time_best_tile) with `gemm`'s
/// ceiling and fixed costs. Forward: every GemmOp of every layer at M = rows x samples (attention:
/// batch x samples products of M = rows). Backward:
/// per product C = A B of shape (m, n, k), the gradient of A, (m, k, n) (not for the first layer's
/// input, which is data), and of B, (k, n, m) (the weight gradient, or attention's keys and
/// values). Memory-bound: memory_elems x samples x act_bytes x memory_traffic / bandwidth.
[[nodiscard]] ShapedTimes shaped_step(const std::vector<LayerCost>& layers, const ShapedStep& step,
                                      const ShapedGpu& gpu, const GemmParams& gemm);

/// The step's seconds: each kind times its multiplier, the optimizer as derived.
[[nodiscard]] double shaped_total(const ShapedTimes& t, const ShapedMultipliers& m);

/// HBM bytes per parameter of an optimizer step with fp32 master weights and gradients: SGD with
/// momentum reads weight, gradient, momentum and writes weight and momentum (5 x 4 B); Adam also
/// reads and writes its second moment (7 x 4 B). Mixed precision also writes the 16-bit weight copy
/// (+2 B). Throws ValueError for another name.
[[nodiscard]] double optimizer_bytes_per_param(const std::string& optimizer, bool mixed_precision);

}  // namespace ffsim::train
