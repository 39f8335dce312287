// torch.profiler (Kineto) traces: kernels classified and summed per kind and step, shaped GEMMs
// (the trace reader is config/kineto_reader.cpp).
// SPDX-License-Identifier: Apache-2.0
#include "calib/kineto.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace ffsim::calib {

std::string_view kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::Gemm: return "gemm";
    case KernelClass::Conv: return "conv";
    case KernelClass::Attention: return "attention";
    case KernelClass::MemoryBound: return "memory_bound";
    case KernelClass::Optimizer: return "optimizer";
    case KernelClass::Nccl: return "nccl";
    case KernelClass::Memcpy: return "memcpy";
    case KernelClass::Other: return "other";
  }
  return "other";
}

const std::vector<KernelRule>& kernel_rules() {
  using K = KernelClass;
  static const std::vector<KernelRule> rules{
      // Communication first: NCCL's kernels are named ncclKernel_<Coll>_<Algo>_<Proto>_<Op>_<type>
      // or ncclDevKernel_...; "AllReduce" would otherwise read as a reduction.
      {K::Nccl, "nccl", "NCCL collectives and send/recv (ncclKernel_*, ncclDevKernel_*)"},
      // Optimizers before the memory-bound rules (they are elementwise by nature, and apex's and
      // PyTorch's foreach kernels say "multi_tensor_apply"; grad-norm clipping also uses it: [I]).
      {K::Optimizer, "adam", "Adam/AdamW functors (multi_tensor_apply_kernel<..., AdamFunctor>, fused_adam)"},
      {K::Optimizer, "sgd", "SGD functors"},
      {K::Optimizer, "lambstage",
       "LAMB's stages (apex LAMBStage1Functor); not \"lamb\": every C++ lambda in a template name says it"},
      {K::Optimizer, "adagrad", "Adagrad"},
      {K::Optimizer, "optimizer", "kernels named after an optimizer step"},
      {K::Optimizer, "multi_tensor_apply", "PyTorch/apex foreach kernels: the optimizer's fused update [I]"},
      // Attention before GEMM and conv: fused attention kernels are built from CUTLASS GEMMs
      // (fmha_cutlassF_*, flash_fwd_kernel). Softmax alone is not here: it reads and writes the
      // scores once, a memory-bound kernel (below).
      {K::Attention, "flash", "FlashAttention (flash_fwd_kernel, flash_bwd_*)"},
      {K::Attention, "fmha", "fused multi-head attention (fmha_cutlassF/B, xformers)"},
      {K::Attention, "attention", "kernels named attention (efficient_attention_*)"},
      {K::Attention, "sdpa", "scaled_dot_product_attention kernels"},
      // fbgemm_gpu is a library of sparse and embedding kernels (permute, bucketize, lookups), not
      // GEMMs: its name would match "gemm".
      {K::MemoryBound, "fbgemm_gpu", "fbgemm_gpu's sparse/embedding kernels (not GEMMs)"},
      // Convolutions before GEMM: cuDNN's and CUTLASS's implicit-GEMM convolutions say "gemm".
      // Not "conv" alone: "convert" is in many elementwise kernels' names.
      {K::Conv, "convolution", "convolution kernels (cutlass_cudnn ImplicitGemmConvolution)"},
      {K::Conv, "convolve", "cuDNN convolve kernels"},
      {K::Conv, "conv1d", "1-D convolutions"},
      {K::Conv, "conv2d", "2-D convolutions"},
      {K::Conv, "conv3d", "3-D convolutions"},
      {K::Conv, "depthwise", "depthwise convolutions"},
      {K::Conv, "implicit_gemm", "cuDNN xmma implicit-GEMM convolutions (sm80_xmma_fprop_implicit_gemm_*)"},
      {K::Conv, "implicitgemm", "implicit-GEMM convolutions spelled as one word"},
      {K::Conv, "winograd", "Winograd convolutions"},
      {K::Conv, "fprop", "cuDNN forward-propagation convolution kernels"},
      {K::Conv, "dgrad", "cuDNN data-gradient convolution kernels"},
      {K::Conv, "wgrad", "cuDNN weight-gradient convolution kernels"},
      {K::Conv, "scudnn", "cuDNN's single-precision convolution kernels (*_scudnn_128x64_relu_*)"},
      {K::Conv, "hcudnn", "cuDNN's half-precision convolution kernels"},
      {K::Conv, "fft2d", "cuDNN's FFT convolution transforms (fft2d_r2c_*, fft2d_c2r_*)"},
      {K::Conv, "gcgemm", "cuDNN's FFT convolution: the complex GEMM between its transforms (ampere_gcgemm_*)"},
      // GEMMs: cuBLAS (ampere_sgemm_*, sm80_xmma_gemm_*), CUTLASS (cutlass_80_tensorop_s1688gemm_*),
      // cuBLASLt, and cuBLAS's split-K reduction, which belongs to its GEMM.
      {K::Gemm, "gemm", "cuBLAS/CUTLASS GEMMs (ampere_sgemm_*, sm80_xmma_gemm_*, cutlass_*gemm*)"},
      {K::Gemm, "cublas", "other cuBLAS kernels"},
      {K::Gemm, "splitkreduce", "cuBLAS split-K reduction of a GEMM"},
      {K::Gemm, "matmul", "kernels named matmul (triton/inductor templates, cublasLt)"},
      // Memory-bound: elementwise, reductions, norms, softmax, pooling, copies, layout transforms.
      {K::MemoryBound, "elementwise", "PyTorch elementwise kernels (vectorized_/unrolled_elementwise_kernel)"},
      {K::MemoryBound, "reduce", "reductions (reduce_kernel)"},
      {K::MemoryBound, "norm", "batch/layer/group/RMS norms (batch_norm, layer_norm, cuDNN bn_*: below)"},
      {K::MemoryBound, "bn_fw", "cuDNN batch-norm forward"},
      {K::MemoryBound, "bn_bw", "cuDNN batch-norm backward"},
      {K::MemoryBound, "softmax", "softmax alone: one read and one write of the scores (memory-bound)"},
      {K::MemoryBound, "relu", "activation kernels"},
      {K::MemoryBound, "gelu", "activation kernels"},
      {K::MemoryBound, "silu", "activation kernels"},
      {K::MemoryBound, "dropout", "dropout"},
      {K::MemoryBound, "pool", "max/average pooling"},
      {K::MemoryBound, "copy", "copies and concatenation (CatArrayBatchedCopy, copy_kernel)"},
      {K::MemoryBound, "fill", "fills"},
      {K::MemoryBound, "index", "indexing, gather/scatter by index"},
      {K::MemoryBound, "gather", "gathers"},
      {K::MemoryBound, "scatter", "scatters"},
      {K::MemoryBound, "embedding", "embedding lookups"},
      {K::MemoryBound, "transpose", "transposes"},
      {K::MemoryBound, "nchwtonhwc", "cuDNN layout transforms"},
      {K::MemoryBound, "nhwctonchw", "cuDNN layout transforms"},
      {K::MemoryBound, "distribution", "random number generation (distribution_elementwise_*)"},
      {K::MemoryBound, "cub::", "CUB scans, sorts, reductions"},
      {K::MemoryBound, "triton",
       "TorchInductor's generated kernels (fused pointwise/reductions; [I] a name says no more)"},
  };
  return rules;
}

KernelClass classify_kernel(std::string_view name, std::string_view cat, int* rule) {
  if (rule) *rule = -1;
  if (cat == "gpu_memcpy" || cat == "gpu_memset") return KernelClass::Memcpy;
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto& rules = kernel_rules();
  for (std::size_t i = 0; i < rules.size(); ++i)
    if (lower.find(rules[i].pattern) != std::string::npos) {
      if (rule) *rule = static_cast<int>(i);
      return rules[i].cls;
    }
  return KernelClass::Other;
}

double ClassSums::total_us() const {
  double t = 0;
  for (double v : time_us) t += v;
  return t;
}
long long ClassSums::total_count() const {
  long long n = 0;
  for (long long v : count) n += v;
  return n;
}

namespace {

struct GpuEvent {
  KernelClass cls;
  double ts, dur;
  long long correlation = -1;
  std::size_t name_index = 0;
};
struct Launch {  // a cuda_runtime event (cudaLaunchKernel, cudaMemcpyAsync, ...)
  double ts, dur;
  std::string tid;
};
using CpuOp = KinetoCpuOp;

// The union of intervals (sorted by start here): its length.
double union_length(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, cs = 0, ce = -1;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (!open || s > ce) {
      if (open) total += ce - cs;
      cs = s;
      ce = e;
      open = true;
    } else {
      ce = std::max(ce, e);
    }
  }
  if (open) total += ce - cs;
  return total;
}

// M, N, K and the batch of a GEMM op from its Input Dims; nullopt if the op or its shapes are not
// a GEMM's as aten records them.
struct Mnk {
  long long b = 1, m = 0, n = 0, k = 0;
};
std::optional<Mnk> gemm_shape(const std::string& op, const std::vector<std::vector<long long>>& d) {
  auto is2 = [&](std::size_t i) { return i < d.size() && d[i].size() == 2; };
  auto is3 = [&](std::size_t i) { return i < d.size() && d[i].size() == 3; };
  Mnk s;
  if ((op == "aten::mm" || op == "aten::matmul") && is2(0) && is2(1) && d[0][1] == d[1][0]) {
    s.m = d[0][0], s.k = d[0][1], s.n = d[1][1];
  } else if (op == "aten::addmm" && is2(1) && is2(2) && d[1][1] == d[2][0]) {
    s.m = d[1][0], s.k = d[1][1], s.n = d[2][1];
  } else if ((op == "aten::bmm" || op == "aten::matmul") && is3(0) && is3(1) && d[0][0] == d[1][0] &&
             d[0][2] == d[1][1]) {
    s.b = d[0][0], s.m = d[0][1], s.k = d[0][2], s.n = d[1][2];
  } else if (op == "aten::baddbmm" && is3(1) && is3(2) && d[1][0] == d[2][0] && d[1][2] == d[2][1]) {
    s.b = d[1][0], s.m = d[1][1], s.k = d[1][2], s.n = d[2][2];
  } else if (op == "aten::linear" && d.size() >= 2 && d[0].size() >= 2 && is2(1) && d[0].back() == d[1][1]) {
    s.m = 1;
    for (std::size_t i = 0; i + 1 < d[0].size(); ++i) s.m *= d[0][i];
    s.k = d[1][1], s.n = d[1][0];
  } else {
    return std::nullopt;
  }
  if (s.b <= 0 || s.m <= 0 || s.n <= 0 || s.k <= 0) return std::nullopt;
  return s;
}

}  // namespace

KinetoTrace summarize_kineto(KinetoEvents ev) {
  KinetoTrace t;
  t.file = ev.file;
  t.device = ev.device;
  t.device_name = ev.device_name;
  t.sms = ev.sms;
  std::vector<GpuEvent> gpu;
  std::vector<std::string> names;
  std::unordered_map<std::string, std::size_t> name_ids;
  for (const auto& e : ev.gpu) {
    GpuEvent g{classify_kernel(e.name, e.cat), e.ts, e.dur, e.correlation, 0};
    auto [it, fresh] = name_ids.emplace(e.name, names.size());
    if (fresh) names.push_back(e.name);
    g.name_index = it->second;
    gpu.push_back(g);
  }
  std::unordered_map<long long, Launch> launches;
  for (const auto& l : ev.launches) launches[l.correlation] = Launch{l.ts, l.dur, l.tid};
  std::map<std::string, std::vector<CpuOp>> ops;  // by tid
  for (auto& [tid, op] : ev.ops) ops[tid].push_back(std::move(op));
  std::vector<KinetoStep> steps = std::move(ev.steps);

  // Steps in order of start; a GPU event belongs to the step whose span holds its CPU launch
  // (the cuda_runtime event of the same correlation): a kernel runs after its launch, often in the
  // next step's time on the GPU, and is the work of the step that launched it. Without a launch
  // event, its GPU start decides.
  std::sort(steps.begin(), steps.end(),
            [](const KinetoStep& a, const KinetoStep& b) { return a.start_us < b.start_us; });
  auto step_of = [&](double at) -> int {
    // the last step starting at or before `at` whose span holds it
    auto it =
        std::upper_bound(steps.begin(), steps.end(), at, [](double v, const KinetoStep& s) { return v < s.start_us; });
    if (it == steps.begin()) return -1;
    --it;
    if (at <= it->start_us + it->dur_us) return static_cast<int>(it - steps.begin());
    return -1;
  };
  std::vector<std::vector<std::pair<double, double>>> step_iv(steps.size());
  std::vector<std::pair<double, double>> all_iv;
  bool first = true;
  for (const auto& g : gpu) {
    const int c = static_cast<int>(g.cls);
    t.sums.time_us[c] += g.dur;
    t.sums.count[c] += 1;
    if (g.dur == 0) ++t.zero_duration;
    all_iv.push_back({g.ts, g.ts + g.dur});
    t.gpu_first_us = first ? g.ts : std::min(t.gpu_first_us, g.ts);
    t.gpu_last_us = first ? g.ts + g.dur : std::max(t.gpu_last_us, g.ts + g.dur);
    first = false;
    const auto l = g.correlation >= 0 ? launches.find(g.correlation) : launches.end();
    double at = g.ts;
    if (l != launches.end())
      at = l->second.ts;
    else if (!steps.empty())
      ++t.launch_by_gpu_time;
    const int s = step_of(at);
    ClassSums& sums = s >= 0 ? steps[s].sums : t.outside;
    sums.time_us[c] += g.dur;
    sums.count[c] += 1;
    if (s >= 0) {
      auto& st = steps[s];
      const bool none = step_iv[s].empty();
      st.gpu_first_us = none ? g.ts : std::min(st.gpu_first_us, g.ts);
      st.gpu_last_us = none ? g.ts + g.dur : std::max(st.gpu_last_us, g.ts + g.dur);
      step_iv[s].push_back({g.ts, g.ts + g.dur});
    }
  }
  t.busy_us = union_length(all_iv);
  for (std::size_t s = 0; s < steps.size(); ++s) steps[s].busy_us = union_length(step_iv[s]);
  t.steps = std::move(steps);

  // Shaped GEMMs: the innermost CPU op enclosing the GEMM kernel's launch, on the launch's thread.
  for (auto& [tid, v] : ops)
    std::sort(v.begin(), v.end(),
              [](const CpuOp& a, const CpuOp& b) { return a.ts < b.ts || (a.ts == b.ts && a.end > b.end); });
  struct Instance {
    const CpuOp* op;
    long long kernels = 0;
    double us = 0, longest = 0;
    std::size_t longest_name = 0;
  };
  std::map<const CpuOp*, Instance> instances;
  for (const auto& g : gpu) {
    if (g.cls != KernelClass::Gemm) continue;
    const CpuOp* found = nullptr;
    const auto l = g.correlation >= 0 ? launches.find(g.correlation) : launches.end();
    if (l != launches.end()) {
      const auto o = ops.find(l->second.tid);
      if (o != ops.end()) {
        const auto& v = o->second;
        auto it =
            std::upper_bound(v.begin(), v.end(), l->second.ts, [](double x, const CpuOp& op) { return x < op.ts; });
        while (it != v.begin()) {
          --it;
          if (it->end >= l->second.ts + l->second.dur) {
            found = &*it;
            break;
          }
        }
      }
    }
    std::optional<Mnk> mnk;
    if (found) mnk = gemm_shape(found->name, found->shape);
    if (!mnk) {
      ++t.gemm_kernels_unshaped;
      t.gemm_us_unshaped += g.dur;
      continue;
    }
    auto& in = instances[found];
    in.op = found;
    in.kernels += 1;
    in.us += g.dur;
    if (g.dur > in.longest || in.kernels == 1) in.longest = g.dur, in.longest_name = g.name_index;
  }
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> by_shape;
  std::vector<double> longest;  // per entry of t.gemms: its longest kernel (names the entry)
  for (const auto& [ptr, in] : instances) {
    const auto key = std::make_tuple(in.op->name, in.op->dims, in.op->types);
    auto [it, fresh] = by_shape.emplace(key, t.gemms.size());
    if (fresh) {
      const auto s = *gemm_shape(in.op->name, in.op->shape);
      KinetoGemm gm;
      gm.op = in.op->name;
      gm.dims = in.op->dims;
      gm.types = in.op->types;
      gm.batch = s.b, gm.m = s.m, gm.n = s.n, gm.k = s.k;
      gm.kernel = names[in.longest_name];
      t.gemms.push_back(gm);
      longest.push_back(in.longest);
    }
    auto& gm = t.gemms[it->second];
    const std::string& kname = names[in.longest_name];
    if (in.longest > longest[it->second] || (in.longest == longest[it->second] && kname < gm.kernel)) {
      longest[it->second] = in.longest;
      gm.kernel = kname;
    }
    gm.calls += 1;
    gm.kernels += in.kernels;
    gm.kernel_us += in.us;
  }
  std::stable_sort(t.gemms.begin(), t.gemms.end(), [](const KinetoGemm& a, const KinetoGemm& b) {
    if (a.kernel_us != b.kernel_us) return a.kernel_us > b.kernel_us;
    return std::tie(a.op, a.dims, a.types) < std::tie(b.op, b.dims, b.types);
  });
  return t;
}

std::string gemm_precision(const KinetoGemm& g) {
  std::string k(g.kernel);
  std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto has = [&](const char* p) { return k.find(p) != std::string::npos; };
  if (has("tf32") || has("s1688") || has("s16816")) return "tf32";
  if (has("h1688") || has("h16816") || has("hgemm") || has("bf16") || has("f16") || has("fp16")) return "fp16";
  if (has("sgemm")) return "fp32";
  if (g.types.find("c10::Half") != std::string::npos || g.types.find("c10::BFloat16") != std::string::npos)
    return "fp16";
  return "";
}

}  // namespace ffsim::calib
