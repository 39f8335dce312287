// The shaped compute model.
// SPDX-License-Identifier: Apache-2.0
#include "train/shaped_compute.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace ffsim::train {

namespace {

long long whole(double v) { return std::max(1LL, std::llround(v)); }

}  // namespace

ShapedTimes shaped_step(const std::vector<LayerCost>& layers, const ShapedStep& step, const ShapedGpu& gpu,
                        const GemmParams& gemm) {
  FFSIM_ASSERT(gpu.sms > 0 && gpu.peak_flops > 0 && gpu.memory_bandwidth > 0,
               "a shaped GPU has SMs, a peak and a bandwidth");
  ShapedTimes t;
  const std::vector<GemmTile> tiles = sm80_gemm_tiles();
  double elems = 0, scores = 0, params = 0;
  for (const LayerCost& l : layers) {
    elems += l.memory_elems - l.score_elems;
    scores += l.score_elems;
    params += l.params;
    for (const GemmOp& g : l.gemms) {
      const long long b = whole(g.batch * (g.kind == GemmOp::Kind::Attention ? step.samples : 1));
      const long long m = whole(g.rows * (g.kind == GemmOp::Kind::Attention ? 1 : step.samples));
      const long long n = whole(g.n), k = whole(g.k);
      const auto time = [&](long long mm, long long nn, long long kk) {
        ++t.gemms;
        return gemm_time_best_tile(GemmShape{b, mm, nn, kk}, gpu.sms, gpu.peak_flops, gemm, tiles);
      };
      double s = time(m, n, k);                                                         // forward
      if (l.needs_input_grad || g.kind == GemmOp::Kind::Attention) s += time(m, k, n);  // gradient of A
      s += time(k, n, m);                                                               // gradient of B
      (g.kind == GemmOp::Kind::Conv ? t.conv_s : g.kind == GemmOp::Kind::Linear ? t.linear_s : t.attention_s) += s;
    }
  }
  const double per_elem = step.samples * step.act_bytes * step.memory_traffic / gpu.memory_bandwidth;
  t.memory_s = elems * per_elem;
  t.score_memory_s = scores * per_elem;
  t.optimizer_s = params * step.optimizer_bytes_per_param / gpu.memory_bandwidth;
  return t;
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
