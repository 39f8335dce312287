// The compute model.
// SPDX-License-Identifier: Apache-2.0
#include "train/compute.hpp"

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::train {

Work& Work::operator+=(const Work& o) {
  gemm_flops += o.gemm_flops;
  conv_flops += o.conv_flops;
  attention_flops += o.attention_flops;
  memory_bytes += o.memory_bytes;
  return *this;
}

Work operator*(const Work& w, double k) {
  return Work{w.gemm_flops * k, w.conv_flops * k, w.attention_flops * k, w.memory_bytes * k};
}

Work forward_work(const LayerCost& l, double samples, double act_bytes, const ComputeModel& m) {
  Work w;
  w.gemm_flops = l.gemm_flops * samples;
  w.conv_flops = l.conv_flops * samples;
  w.attention_flops = l.attention_flops * samples;
  w.memory_bytes = l.memory_elems * samples * act_bytes * m.memory_passes;
  return w;
}

Work backward_work(const LayerCost& l, double samples, double act_bytes, const ComputeModel& m, bool recompute) {
  const Work f = forward_work(l, samples, act_bytes, m);
  // The first layer computes weight gradients only: half of the two products of a linear backward.
  const double g = l.needs_input_grad ? m.backward_gemm : m.backward_gemm / 2;
  Work b{f.gemm_flops * g, f.conv_flops * g, f.attention_flops * m.backward_attention,
         f.memory_bytes * m.backward_memory};
  if (recompute) b += f;
  return b;
}

GpuRates rates_of(const hw::GpuSpec& gpu, const std::string& precision) {
  const auto it = gpu.compute.find(precision);
  if (it == gpu.compute.end()) {
    std::vector<std::string> have;
    for (const auto& [k, v] : gpu.compute) have.push_back(k);
    throw ValueError("GPU " + gpu.name + " has no rate for precision \"" + precision + "\"" + did_you_mean(precision, have) +
                     "; it has: " + join(have));
  }
  return GpuRates{it->second.gemm(), it->second.peak, gpu.memory_bandwidth, it->second.gemm_measured.has_value()};
}

Seconds kernel_time(const ComputeModel& m, const GpuRates& r, const Work& w) {
  const double g = r.gemm.si();
  return Seconds(w.gemm_flops / (g * m.gemm_efficiency) + w.conv_flops / (g * m.conv_efficiency) +
                 w.attention_flops / (g * m.attention_efficiency) +
                 w.memory_bytes / (r.memory.si() * m.memory_efficiency));
}

std::string gemm_family(const std::string& precision) { return precision == "bf16" ? "fp16" : precision; }

double element_bytes(const std::string& precision) {
  if (precision == "fp64") return 8;
  if (precision == "fp32" || precision == "tf32") return 4;
  if (precision == "fp16" || precision == "bf16") return 2;
  if (precision == "fp8") return 1;
  throw ValueError("unknown precision \"" + precision + "\"" + did_you_mean(precision, hw::precisions()) + "; valid: " +
                   join(hw::precisions()));
}

}  // namespace ffsim::train
