// The shaped compute model.
// SPDX-License-Identifier: Apache-2.0
#include "train/shaped_compute.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace ffsim::train {

namespace {

long long whole(double v) { return std::max(1LL, std::llround(v)); }

// The products of layer l, forward and backward, added to the kind's seconds of `fwd` and `bwd`
// (which may be the same): per product C = A B of shape (m, n, k), forward (m, n, k), the gradient
// of A (m, k, n) unless A is the network's input, the gradient of B (k, n, m).
void layer_products(const LayerCost& l, const ShapedStep& step, const ShapedGpu& gpu, const GemmParams& gemm,
                    const std::vector<GemmTile>& tiles, ShapedTimes& fwd, ShapedTimes& bwd) {
  for (const GemmOp& g : l.gemms) {
    const long long b = whole(g.batch * (g.kind == GemmOp::Kind::Attention ? step.samples : 1));
    const long long m = whole(g.rows * (g.kind == GemmOp::Kind::Attention ? 1 : step.samples));
    const long long n = whole(g.n), k = whole(g.k);
    const auto time = [&](ShapedTimes& t, long long mm, long long nn, long long kk) {
      ++t.gemms;
      return gemm_time_best_tile(GemmShape{b, mm, nn, kk}, gpu.sms, gpu.peak_flops, gemm, tiles);
    };
    const auto slot = [&](ShapedTimes& t) -> double& {
      return g.kind == GemmOp::Kind::Conv ? t.conv_s : g.kind == GemmOp::Kind::Linear ? t.linear_s : t.attention_s;
    };
    const bool grad_a = l.needs_input_grad || g.kind == GemmOp::Kind::Attention;
    const double f = time(fwd, m, n, k);
    const double ga = grad_a ? time(bwd, m, k, n) : 0.0;  // gradient of A
    const double gb = time(bwd, k, n, m);                 // gradient of B
    if (&fwd == &bwd) {
      // One sum per product in this order, so that shaped_step's times are those of before the split.
      double s = f;
      if (grad_a) s += ga;
      s += gb;
      slot(fwd) += s;
    } else {
      slot(fwd) += f;
      slot(bwd) += grad_a ? ga + gb : gb;
    }
  }
}

void check_gpu(const ShapedGpu& gpu) {
  FFSIM_ASSERT(gpu.sms > 0 && gpu.peak_flops > 0 && gpu.memory_bandwidth > 0,
               "a shaped GPU has SMs, a peak and a bandwidth");
}

}  // namespace

ShapedTimes shaped_step(const std::vector<LayerCost>& layers, const ShapedStep& step, const ShapedGpu& gpu,
                        const GemmParams& gemm) {
  check_gpu(gpu);
  ShapedTimes t;
  const std::vector<GemmTile> tiles = sm80_gemm_tiles();
  double elems = 0, scores = 0, params = 0;
  for (const LayerCost& l : layers) {
    elems += l.memory_elems - l.score_elems;
    scores += l.score_elems;
    params += l.params;
    layer_products(l, step, gpu, gemm, tiles, t, t);
  }
  const double per_elem = step.samples * step.act_bytes * step.memory_traffic / gpu.memory_bandwidth;
  t.memory_s = elems * per_elem;
  t.score_memory_s = scores * per_elem;
  t.optimizer_s = params * step.optimizer_bytes_per_param / gpu.memory_bandwidth;
  return t;
}

ShapedLayer shaped_layer(const LayerCost& l, const ShapedStep& step, const ShapedGpu& gpu, const GemmParams& gemm,
                         const std::vector<GemmTile>& tiles) {
  check_gpu(gpu);
  FFSIM_ASSERT(step.forward_memory_share >= 0 && step.forward_memory_share <= 1, "a share of the traffic");
  ShapedLayer out;
  layer_products(l, step, gpu, gemm, tiles, out.fwd, out.bwd);
  const double per_elem = step.samples * step.act_bytes * step.memory_traffic / gpu.memory_bandwidth;
  const double memory = (l.memory_elems - l.score_elems) * per_elem, scores = l.score_elems * per_elem;
  out.fwd.memory_s = memory * step.forward_memory_share;
  out.bwd.memory_s = memory * (1 - step.forward_memory_share);
  out.fwd.score_memory_s = scores * step.forward_memory_share;
  out.bwd.score_memory_s = scores * (1 - step.forward_memory_share);
  return out;
}

double shaped_total(const ShapedTimes& t, const ShapedMultipliers& m) {
  return t.conv_s * m.conv + t.linear_s * m.linear + t.attention_s * m.attention + t.memory_s * m.memory +
         t.score_memory_s * m.score_memory + t.optimizer_s;
}

double optimizer_bytes_per_param(const std::string& optimizer, bool mixed_precision) {
  double b = 0;
  if (optimizer == "sgd")
    b = 5 * 4;
  else if (optimizer == "adam")
    b = 7 * 4;
  else
    throw ValueError("unknown optimizer \"" + optimizer + "\"; valid: adam, sgd");
  return b + (mixed_precision ? 2 : 0);
}

}  // namespace ffsim::train
