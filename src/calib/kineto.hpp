// torch.profiler (Kineto) Chrome traces read as measurements of one GPU's compute: GPU kernels
// classified by name into kinds (GEMM, convolution, attention, memory-bound, optimizer, NCCL,
// memcpy/memset, other), summed per kind and per ProfilerStep, and the GEMMs whose launching CPU
// op recorded its shapes, with their achieved rate (`ffsim calibrate --kineto TRACE.json[.gz]`).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ffsim::calib {

/// The kinds a kernel is sorted into, in the order reports list them.
enum class KernelClass { Gemm, Conv, Attention, MemoryBound, Optimizer, Nccl, Memcpy, Other };
inline constexpr int kKernelClasses = 8;
/// "gemm", "conv", "attention", "memory_bound", "optimizer", "nccl", "memcpy", "other".
[[nodiscard]] std::string_view kernel_class_name(KernelClass c);

/// One rule of the classification: a kernel whose lower-cased name contains `pattern` is of
/// class `cls`. Rules are tried in order; the first that matches decides (docs/calibrate-compute.md).
struct KernelRule {
  KernelClass cls;
  std::string_view pattern;
  std::string_view why;  ///< what kernels the pattern stands for, and why it comes where it does
};
/// The ordered table (the events of categories gpu_memcpy and gpu_memset are memcpy before any rule).
[[nodiscard]] const std::vector<KernelRule>& kernel_rules();
/// The class of a GPU event of category `cat` ("kernel", "gpu_memcpy", "gpu_memset") named `name`;
/// `rule` (if given) is set to the index of the deciding rule in kernel_rules(), -1 for the
/// category rule or no match (Other).
[[nodiscard]] KernelClass classify_kernel(std::string_view name, std::string_view cat, int* rule = nullptr);

struct ClassSums {
  std::array<double, kKernelClasses> time_us{};  ///< sum of the events' durations
  std::array<long long, kKernelClasses> count{};
  [[nodiscard]] double total_us() const;
  [[nodiscard]] long long total_count() const;
};

/// A ProfilerStep#N span (CPU side) and the GPU work launched inside it.
struct KinetoStep {
  std::string name;
  double start_us = 0, dur_us = 0;  ///< the span on the CPU timeline
  ClassSums sums;
  double gpu_first_us = 0, gpu_last_us = 0;  ///< first start, last end of its GPU events (0 if none)
  double busy_us = 0;                        ///< union of its GPU events' intervals
};

/// GEMMs of one CPU op and shape: every launch of `op` with these input dims and types.
struct KinetoGemm {
  std::string op;     ///< aten::mm, aten::addmm, aten::bmm, aten::baddbmm, aten::linear, aten::matmul
  std::string dims;   ///< "Input Dims" as recorded, e.g. "[[64, 4096], [4096, 2798]]"
  std::string types;  ///< "Input type", e.g. "float, float"
  long long batch = 1, m = 0, n = 0, k = 0;
  long long calls = 0;    ///< op instances
  long long kernels = 0;  ///< GEMM-class kernels they launched
  double kernel_us = 0;   ///< their summed duration
  std::string kernel;     ///< name of the longest of those kernels
  [[nodiscard]] double flops() const {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(calls);
  }
  [[nodiscard]] double tflops() const { return kernel_us > 0 ? flops() / (kernel_us * 1e-6) / 1e12 : 0; }
};

struct KinetoTrace {
  std::string file;
  std::string device_name;  ///< deviceProperties of the kernels' device ("" if absent)
  int device = 0;
  int sms = 0;                                            ///< deviceProperties numSms (0 if absent)
  ClassSums sums;                                         ///< every kernel, memcpy and memset of the trace
  long long zero_duration = 0;                            ///< events of duration 0 (counted, adding no time)
  double gpu_first_us = 0, gpu_last_us = 0, busy_us = 0;  ///< the whole trace's GPU timeline
  std::vector<KinetoStep> steps;                          ///< in the order of their start
  ClassSums outside;                                      ///< GPU events launched outside every step
  long long launch_by_gpu_time = 0;     ///< events without a CPU launch, put in a step by their GPU start
  std::vector<KinetoGemm> gemms;        ///< shaped GEMMs, in order of kernel time (largest first)
  long long gemm_kernels_unshaped = 0;  ///< GEMM-class kernels whose op recorded no usable shape
  double gemm_us_unshaped = 0;
};

/// The precision a shaped GEMM ran at, from its kernel's name: "tf32" (CUTLASS s1688/s16816, cuBLAS
/// *tf32*), "fp16" (h1688, h16816, hgemm, bf16, f16), "fp32" (sgemm: SIMT, no tensor cores), else
/// from the op's input types (c10::Half, c10::BFloat16: fp16); "" when neither says.
[[nodiscard]] std::string gemm_precision(const KinetoGemm& g);

/// The events of a trace the summary takes, as the trace reader (config/kineto_reader.hpp) found
/// them, each list in the trace's order.
struct KinetoGpuEvent {  ///< categories kernel, gpu_memcpy, gpu_memset
  std::string name, cat;
  double ts = 0, dur = 0;
  long long correlation = -1;  ///< args.correlation (-1 if absent)
};
struct KinetoLaunch {  ///< a cuda_runtime or cuda_driver event with a correlation (cudaLaunchKernel, ...)
  long long correlation = -1;
  double ts = 0, dur = 0;
  std::string tid;
};
struct KinetoCpuOp {  ///< a cpu_op event
  double ts = 0, end = 0;
  std::string name, dims, types;              ///< dims, types: "Input Dims", "Input type" as written
  std::vector<std::vector<long long>> shape;  ///< Input Dims (empty if absent or not all numbers)
};
struct KinetoEvents {
  std::string file;
  std::string device_name;  ///< deviceProperties of the kernels' device ("" if absent)
  int device = 0, sms = 0;
  std::vector<KinetoGpuEvent> gpu;
  std::vector<KinetoLaunch> launches;  ///< a later launch of the same correlation replaces an earlier one
  std::vector<KinetoStep> steps;       ///< ProfilerStep#N spans: name, start_us, dur_us
  std::vector<std::pair<std::string, KinetoCpuOp>> ops;  ///< each with its thread (tid)
};

/// Classifies the GPU events and sums them per class and per step (a GPU event belongs to the step
/// whose span holds its CPU launch, else its GPU start), and the shaped GEMMs.
[[nodiscard]] KinetoTrace summarize_kineto(KinetoEvents ev);

}  // namespace ffsim::calib
