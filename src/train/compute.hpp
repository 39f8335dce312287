// The compute model: how long a GPU takes for a layer's work, per kernel kind (GEMM, convolution,
// attention, memory-bound), from the GPU's rates times efficiencies (catalog kind "compute_model").
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "hw/specs.hpp"
#include "train/gemm_time.hpp"
#include "train/nn_model.hpp"

namespace ffsim::train {

/// What a fit of the shaped compute model scales: each kind's time is multiplied by its factor (1:
/// the model as derived).
struct ShapedMultipliers {
  double conv = 1, linear = 1, attention = 1, memory = 1, score_memory = 1;
};

/// A calibrated shaped compute model (`ffsim calibrate --throughput T --gemm G --gpu X -o F`, a
/// compute_model entry with a "shaped" block): every matrix product of a layer timed from its shape
/// by the GEMM model (train/gemm_time.hpp), the memory-bound work by roofline at the HBM bandwidth,
/// each kind times its fitted multiplier (train/shaped_compute.hpp). It is for the GPU models and
/// precisions it was fitted on, and no other: the reader refuses a workload outside them.
struct ShapedCalibration {
  /// By the card's form factor ("pcie", "sxm"), then GEMM precision family (gemm_family): the
  /// ceiling of that card at that precision, and the shared fixed costs.
  std::map<std::string, std::map<std::string, GemmParams>> gemm;
  /// The parameters of (form factor, family), nullptr when the calibration has none.
  [[nodiscard]] const GemmParams* gemm_of(const std::string& form_factor, const std::string& family) const {
    const auto f = gemm.find(form_factor);
    if (f == gemm.end()) return nullptr;
    const auto p = f->second.find(family);
    return p == f->second.end() ? nullptr : &p->second;
  }
  ShapedMultipliers multipliers;
  std::vector<std::string> gpus;  ///< the GPU models of the measurements it was fitted on
};

/// Efficiencies (fractions of a rate) and work ratios. The calibration hook: a calibrated entry
/// "extends" the default and overrides these; a scenario names it, or overrides single values.
struct ComputeModel {
  std::string name;
  // Fractions of the GPU's GEMM rate at the training precision (measured when published, else peak).
  double gemm_efficiency = 1;       ///< linear layers
  double conv_efficiency = 1;       ///< convolutions (implicit GEMM)
  double attention_efficiency = 1;  ///< attention score and value products
  /// Fraction of the GPU's memory bandwidth that memory-bound kernels reach.
  double memory_efficiency = 1;
  /// Backward work over forward work, per kind.
  double backward_gemm = 2;         ///< input gradient + weight gradient
  double backward_attention = 2;
  double backward_memory = 2;
  /// Memory traffic of forward memory-bound kernels per stored activation element (x element size).
  double memory_passes = 2;
  /// A calibrated shaped model: when set, layer times come from it (train::layer_times) and the
  /// efficiencies above are not used.
  std::optional<ShapedCalibration> shaped;
};

/// The work of one layer pass.
struct Work {
  double gemm_flops = 0;
  double conv_flops = 0;
  double attention_flops = 0;
  double memory_bytes = 0;
  Work& operator+=(const Work& o);
  [[nodiscard]] double flops() const { return gemm_flops + conv_flops + attention_flops; }
};
[[nodiscard]] Work operator*(const Work& w, double k);

/// Forward and backward work of `samples` samples through layer `l`, with activations of
/// `act_bytes` bytes per element; `recompute` adds a second forward to the backward (activation
/// checkpointing). `expert_fraction` scales the routed experts' GEMMs (MoE: the share of routed
/// tokens this GPU's experts process; 1 when every expert is local).
[[nodiscard]] Work forward_work(const LayerCost& l, double samples, double act_bytes, const ComputeModel& m);
[[nodiscard]] Work backward_work(const LayerCost& l, double samples, double act_bytes, const ComputeModel& m,
                                 bool recompute);

/// Rates of a GPU at a precision.
struct GpuRates {
  FlopsPerSecond gemm;          ///< measured large-GEMM rate if published, else peak
  FlopsPerSecond peak;
  BytesPerSecond memory;
  bool gemm_measured = false;
};
/// Throws ValueError when the GPU has no rate for `precision`.
[[nodiscard]] GpuRates rates_of(const hw::GpuSpec& gpu, const std::string& precision);

/// Seconds the GPU takes for `w` alone: each kind at its rate times its efficiency, one after another.
[[nodiscard]] Seconds kernel_time(const ComputeModel& m, const GpuRates& r, const Work& w);

/// The GEMM model's precision family of a training precision: bf16 runs on the fp16 tensor-core
/// rate and fits with it ("fp16"); others are themselves.
[[nodiscard]] std::string gemm_family(const std::string& precision);

/// Bytes per element of a precision: fp32/tf32 4, fp16/bf16 2, fp8 1, fp64 8.
[[nodiscard]] double element_bytes(const std::string& precision);

}  // namespace ffsim::train
