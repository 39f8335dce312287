// What every workload kind shares: roles' algorithms, optimizer traffic, layer times.
// SPDX-License-Identifier: Apache-2.0
#include "train/workload.hpp"

#include "core/error.hpp"
#include "train/shaped_compute.hpp"

namespace ffsim::train {

coll::Group WorkloadSpec::group(const platform::Platform& p, int count) const {
  return coll::place_group(p, count, placement, "--placement " + placement.name());
}

RoleAlgorithm WorkloadSpec::algorithm(Role r) const {
  if (auto it = algorithm_overrides.find(r); it != algorithm_overrides.end())
    return RoleAlgorithm{it->second, r == Role::ParamAllGather, it->second.rfind("hf", 0) == 0};
  return algorithm_for(backend, r);
}

ClosedFormStep Workload::estimate(const WorkloadSpec& w, const platform::Platform&, CollectiveCosts&, int) const {
  throw ValueError("workload kind \"" + w.kind +
                   "\" has no closed form; run it on an engine that simulates (fluid or simgrid)");
}

double WorkloadSpec::act_bytes() const { return element_bytes(precision); }

int samples_per_rank(const WorkloadSpec& w, int dp) {
  if (w.scaling == "weak") return w.batch;
  if (dp <= 0 || w.batch % dp != 0) return 0;
  return w.batch / dp;
}

// Bytes read and written per parameter by one optimizer step, over fp32 state:
//   SGD with momentum:  read w, g, m; write w, m                     (4 x 4 + g)
//   AdamW:              read w, g, m, v; write w, m, v               (6 x 4 + g)
// with mixed precision the fp32 master weights are those w, plus one 16-bit copy written.
double optimizer_traffic_bytes(const WorkloadSpec& w) {
  const bool mixed = element_bytes(w.precision) < 4;
  const double state = w.optimizer == "sgd" ? 4 * 4 : 6 * 4;
  return state + w.grad_bytes + (mixed ? w.act_bytes() : 0.0);
}

// Bytes held per parameter: weights and gradients, plus the optimizer state (moments, and fp32
// master weights with mixed precision), split over `shards` ranks.
double optimizer_state_bytes(const WorkloadSpec& w, int shards) {
  const bool mixed = element_bytes(w.precision) < 4;
  const double moments = w.optimizer == "sgd" ? 4 : 8;
  const double weights = mixed ? w.act_bytes() : 4.0;
  return weights + w.grad_bytes + (moments + (mixed ? 4.0 : 0.0)) / shards;
}

namespace {

// What the shaped model needs of the workload and the GPU: the GEMM parameters of the GPU's form
// factor at the precision, the GPU's SMs, peak and bandwidth, the step's memory traffic. The
// reader (config::parse_workload) has checked that the calibration covers the GPU model and the
// precision.
struct ShapedSetup {
  const ShapedCalibration& c;
  GemmParams gemm;
  ShapedGpu gpu;
  ShapedStep step;
  std::vector<GemmTile> tiles = sm80_gemm_tiles();
};

ShapedSetup shaped_setup(const WorkloadSpec& w, const hw::GpuSpec& gpu, double samples) {
  FFSIM_ASSERT(w.compute.shaped.has_value(), "the shaped model's times need a shaped compute model");
  const ShapedCalibration& c = *w.compute.shaped;
  const GemmParams* gemm = c.gemm_of(gpu.form_factor, gemm_family(w.precision));
  FFSIM_ASSERT(gemm && gpu.sms > 0, "the reader checks the shaped model's scope");
  const GpuRates rates = rates_of(gpu, w.precision);
  ShapedStep step;
  step.samples = samples;
  step.act_bytes = w.act_bytes();
  step.memory_traffic = w.compute.memory_passes * (1 + w.compute.backward_memory);
  step.forward_memory_share = 1 / (1 + w.compute.backward_memory);
  return ShapedSetup{c, *gemm, ShapedGpu{gpu.sms, rates.peak.si(), gpu.memory_bandwidth.si()}, step};
}

ShapedPassTimes pass_times(const ShapedSetup& x, const LayerCost& l) {
  const ShapedLayer s = shaped_layer(l, x.step, x.gpu, x.gemm, x.tiles);
  const ShapedMultipliers& m = x.c.multipliers;
  return ShapedPassTimes{shaped_total(s.fwd, m), shaped_total(s.bwd, m),
                         s.fwd.attention_s * m.attention + s.fwd.score_memory_s * m.score_memory};
}

// The shaped model's layer times: each layer's products by shape, its memory-bound work by
// roofline, each kind times its fitted multiplier; recomputation runs the forward again in the
// backward.
LayerTimes shaped_layer_times(const WorkloadSpec& w, const hw::GpuSpec& gpu, const std::vector<LayerCost>& layers,
                              double samples, bool recompute) {
  const ShapedSetup x = shaped_setup(w, gpu, samples);
  LayerTimes t;
  for (const auto& l : layers) {
    const ShapedPassTimes p = pass_times(x, l);
    t.fwd.push_back(p.fwd);
    t.bwd.push_back(p.bwd + (recompute ? p.fwd : 0.0));
  }
  return t;
}

}  // namespace

ShapedPassTimes shaped_pass_times(const WorkloadSpec& w, const hw::GpuSpec& gpu, const LayerCost& l, double samples) {
  return pass_times(shaped_setup(w, gpu, samples), l);
}

LayerTimes layer_times(const WorkloadSpec& w, const hw::GpuSpec& gpu, const std::vector<LayerCost>& layers,
                       double samples, bool recompute) {
  if (w.compute.shaped) return shaped_layer_times(w, gpu, layers, samples, recompute);
  const GpuRates rates = rates_of(gpu, w.precision);
  LayerTimes t;
  for (const auto& l : layers) {
    t.fwd.push_back(kernel_time(w.compute, rates, forward_work(l, samples, w.act_bytes(), w.compute)).si());
    t.bwd.push_back(kernel_time(w.compute, rates, backward_work(l, samples, w.act_bytes(), w.compute, recompute)).si());
  }
  return t;
}

double optimizer_time(const WorkloadSpec& w, const hw::GpuSpec& gpu, double params) {
  // The shaped model's optimizer pass runs at the datasheet bandwidth, as in its fit
  // (train::shaped_total: the optimizer as derived).
  if (w.compute.shaped) return params * optimizer_traffic_bytes(w) / gpu.memory_bandwidth.si();
  return params * optimizer_traffic_bytes(w) / (gpu.memory_bandwidth.si() * w.compute.memory_efficiency);
}

double model_flops_per_sample(const WorkloadSpec& w, const std::vector<LayerCost>& layers) {
  // Model FLOPs count what the model needs, not what its kernels run (PaLM's MFU, arXiv 2204.02311
  // App. B: rematerialization excluded): the attention backward's four products (dV, dP, dQ, dK),
  // 2x the forward's two, without the recomputation of QK^T that the compute model's attention
  // backward factor (2.5, FlashAttention-2) times. Until 2026-12-01 MFU counted it: 0.5% high for
  // LLaMA-13B, 0.3% for GPT2-medium, 1.4% for DeepSeekMoE-16B.
  double f = 0;
  for (const auto& l : layers) {
    const Work fwd = forward_work(l, 1, w.act_bytes(), w.compute);
    Work bwd = backward_work(l, 1, w.act_bytes(), w.compute, false);
    bwd.attention_flops = 2 * fwd.attention_flops;
    f += fwd.flops() + bwd.flops();
  }
  return f;
}

}  // namespace ffsim::train
