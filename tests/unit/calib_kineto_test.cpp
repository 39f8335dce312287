// torch.profiler traces read by config::load_kineto: classification, per-class and per-step sums,
// shaped GEMMs, bad files.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "calib/kineto.hpp"
#include "config/kineto_reader.hpp"
#include "core/error.hpp"

using namespace ffsim;
using calib::KernelClass;

namespace {

std::string data(const std::string& name) { return std::string(FFSIM_TEST_DATA_DIR) + "/kineto/" + name; }
int ix(KernelClass c) { return static_cast<int>(c); }
double t(const calib::ClassSums& s, KernelClass c) { return s.time_us[ix(c)]; }
long long n(const calib::ClassSums& s, KernelClass c) { return s.count[ix(c)]; }

// Each error names the file and says what was expected.
void check_error(const std::string& file, const std::string& expected_part) {
  try {
    (void)config::load_kineto(data(file));
    FAIL("no error for " << file);
  } catch (const ConfigError& e) {
    CHECK(e.file() == data(file));
    CHECK_MESSAGE(std::string(e.what()).find(expected_part) != std::string::npos, e.what());
  }
}

}  // namespace

TEST_CASE("calib::classify_kernel: the ordered rules") {
  auto c = [](const char* name, const char* cat = "kernel") { return calib::classify_kernel(name, cat); };
  CHECK(c("ampere_sgemm_32x32_sliced1x4_tn") == KernelClass::Gemm);
  CHECK(c("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_tn_align1>(Params)") == KernelClass::Gemm);
  CHECK(c("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32") == KernelClass::Gemm);
  CHECK(c("void splitKreduce_kernel<32, 16, int, float>(cublasSplitKParams<float>)") == KernelClass::Gemm);
  // conv before gemm: implicit-GEMM convolutions say "gemm"
  CHECK(c("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16") ==
        KernelClass::Conv);
  CHECK(c("_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionE") == KernelClass::Conv);
  CHECK(c("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1") == KernelClass::Conv);
  CHECK(c("void fft2d_r2c_32x32<float, false, 5u, true>(float2*)") == KernelClass::Conv);
  CHECK(c("ampere_gcgemm_64x64_nt") == KernelClass::Conv);
  // attention before gemm (fused attention is built of CUTLASS GEMMs); softmax alone is memory-bound
  CHECK(c("fmha_cutlassF_f16_aligned_64x64_rf_sm80(AttentionKernel)") == KernelClass::Attention);
  CHECK(c("flash_fwd_kernel<Flash_fwd_kernel_traits<64> >") == KernelClass::Attention);
  CHECK(c("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*)") == KernelClass::MemoryBound);
  // NCCL first: "AllReduce" is not a reduction kernel of the model
  CHECK(c("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)") == KernelClass::Nccl);
  CHECK(c("ncclDevKernel_SendRecv(ncclDevComm*)") == KernelClass::Nccl);
  CHECK(c("void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float>(int)") ==
        KernelClass::Optimizer);
  // fbgemm_gpu is not a GEMM
  CHECK(c("void fbgemm_gpu::permute_2D_data_kernel<false, int, int>(int)") == KernelClass::MemoryBound);
  CHECK(c("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float)") == KernelClass::MemoryBound);
  CHECK(
      c("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>(cudnn::ops::nchw2nhwc_params_t<float>)") ==
      KernelClass::MemoryBound);
  CHECK(c("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)") ==
        KernelClass::MemoryBound);
  CHECK(c("triton__0d1d2d3d") == KernelClass::MemoryBound);
  CHECK(c("my_custom_kernel(float*)") == KernelClass::Other);
  // substrings that would mislead: a C++ lambda is not LAMB, "convert" is not a convolution
  CHECK(
      c("void at::native::vectorized_elementwise_kernel<4, at::native::launch_clamp_scalar(...)::{lambda()#1}>(int)") ==
      KernelClass::MemoryBound);
  CHECK(c("void at::native::unrolled_elementwise_kernel<at::native::convert_functor<float> >(int)") ==
        KernelClass::MemoryBound);
  CHECK(c("void multi_tensor_apply_kernel<TensorListMetadata<2>, LAMBStage1Functor<float>, float>(int)") ==
        KernelClass::Optimizer);
  CHECK(c("void at::native::conv_depthwise2d_forward_kernel<float>(float*)") == KernelClass::Conv);
  CHECK(c("") == KernelClass::Other);
  // the category decides for copies, whatever the name
  CHECK(c("Memcpy HtoD (Pageable -> Device)", "gpu_memcpy") == KernelClass::Memcpy);
  CHECK(c("Memset (Device)", "gpu_memset") == KernelClass::Memcpy);
  CHECK(c("gemm", "gpu_memcpy") == KernelClass::Memcpy);
  int rule = -2;
  CHECK(calib::classify_kernel("NCCLKERNEL", "kernel", &rule) == KernelClass::Nccl);  // case-blind
  CHECK(rule == 0);
  (void)calib::classify_kernel("my_custom_kernel", "kernel", &rule);
  CHECK(rule == -1);
}

// tests/data/kineto/small_trace.json (make_traces.py). Steps: #1 [1000, 1100], #2 [1100, 1200] (us).
// GPU events (start, duration, launch time, class):
//   ampere_sgemm          1030 40  launch 1015  gemm    -> step 1 (aten::mm [[256,512],[512,1024]] encloses the launch)
//   vectorized_elementwise 1075 10 launch 1050  memory  -> step 1
//   cutlass s1688gemm     1086 15  launch 1060  gemm    -> step 1 (no op around the launch: unshaped)
//   ncclKernel_AllReduce  1105 50  launch 1095  nccl    -> step 1 (runs in step 2's time: the launch decides)
//   xmma fprop implicit   1120 30  launch 1110  conv    -> step 2 (overlaps the NCCL kernel on another stream)
//   AdamFunctor           1160 20  launch 1150  optimizer -> step 2
//   flash_fwd_kernel      1185  0  launch 1160  attention -> step 2 (duration 0)
//   Memcpy HtoD           1190  5  launch 1170  memcpy  -> step 2
//   reduce_kernel         1195  3  no launch    memory  -> step 2 by its GPU start
//   my_custom_kernel      1310  7  launch 1300  other   -> outside every step
//   fbgemm_gpu permute    1320  4  no launch    memory  -> outside (GPU start 1320)
// Totals: gemm 55 (2), conv 30, attention 0, memory 17 (3), optimizer 20, nccl 50, memcpy 5, other 7:
// 184 us in 11 events. Step 1: gemm 55 + memory 10 + nccl 50 = 115 (4 events), intervals
// [1030,1070] [1075,1085] [1086,1101] [1105,1155] union 115, window 1030..1155 = 125. Step 2: conv 30
// + optimizer 20 + attention 0 + memcpy 5 + memory 3 = 58 (5 events), union 58, window 1120..1198 = 78.
// Outside: 7 + 4 = 11 (2 events). 115 + 58 + 11 = 184. Whole timeline: 1030..1324 = 294 us, busy
// 115 + 58 (the conv lies inside the NCCL kernel, which step 1 counted) + 7 + 4 = 184 - 30 = 154.
// Shaped: aten::mm M 256, K 512, N 1024: 2 x 256 x 512 x 1024 = 268,435,456 FLOPs in 40 us = 6.7108864 TFLOP/s.
TEST_CASE("calib: config::load_kineto: a hand-made trace, plain and gzipped") {
  for (const char* f : {"small_trace.json", "small_trace.json.gz"}) {
    CAPTURE(f);
    const auto tr = config::load_kineto(data(f));
    CHECK(tr.device_name == "NVIDIA A100-SXM4-80GB");
    CHECK(tr.sms == 108);
    CHECK(tr.sums.total_count() == 11);
    CHECK(tr.sums.total_us() == doctest::Approx(184));
    CHECK(t(tr.sums, KernelClass::Gemm) == 55);
    CHECK(n(tr.sums, KernelClass::Gemm) == 2);
    CHECK(t(tr.sums, KernelClass::Conv) == 30);
    CHECK(t(tr.sums, KernelClass::Attention) == 0);
    CHECK(n(tr.sums, KernelClass::Attention) == 1);
    CHECK(t(tr.sums, KernelClass::MemoryBound) == 17);
    CHECK(n(tr.sums, KernelClass::MemoryBound) == 3);
    CHECK(t(tr.sums, KernelClass::Optimizer) == 20);
    CHECK(t(tr.sums, KernelClass::Nccl) == 50);
    CHECK(t(tr.sums, KernelClass::Memcpy) == 5);
    CHECK(t(tr.sums, KernelClass::Other) == 7);
    CHECK(tr.zero_duration == 1);
    CHECK(tr.gpu_last_us - tr.gpu_first_us == 294);
    CHECK(tr.busy_us == 154);
    REQUIRE(tr.steps.size() == 2);
    CHECK(tr.steps[0].name == "ProfilerStep#1");
    CHECK(tr.steps[0].sums.total_us() == 115);
    CHECK(tr.steps[0].sums.total_count() == 4);
    CHECK(t(tr.steps[0].sums, KernelClass::Nccl) == 50);
    CHECK(tr.steps[0].busy_us == 115);
    CHECK(tr.steps[0].gpu_last_us - tr.steps[0].gpu_first_us == 125);
    CHECK(tr.steps[1].sums.total_us() == 58);
    CHECK(tr.steps[1].sums.total_count() == 5);
    CHECK(t(tr.steps[1].sums, KernelClass::MemoryBound) == 3);
    CHECK(tr.steps[1].busy_us == 58);
    CHECK(tr.steps[1].gpu_last_us - tr.steps[1].gpu_first_us == 78);
    CHECK(tr.outside.total_us() == 11);
    CHECK(tr.outside.total_count() == 2);
    CHECK(tr.launch_by_gpu_time == 2);
    REQUIRE(tr.gemms.size() == 1);
    const auto& g = tr.gemms[0];
    CHECK(g.op == "aten::mm");
    CHECK(g.dims == "[[256, 512], [512, 1024]]");
    CHECK(g.types == "float, float");
    CHECK((g.m == 256 && g.k == 512 && g.n == 1024 && g.batch == 1 && g.calls == 1));
    CHECK(g.flops() == 268435456.0);
    CHECK(g.tflops() == doctest::Approx(6.7108864));
    CHECK(calib::gemm_precision(g) == "fp32");  // ampere_sgemm: SIMT FP32
    CHECK(tr.gemm_kernels_unshaped == 1);
    CHECK(tr.gemm_us_unshaped == 15);
  }
}

TEST_CASE("calib: config::load_kineto: edges (no kernels, one step)") {
  const auto none = config::load_kineto(data("no_kernels.json"));
  CHECK(none.sums.total_count() == 0);
  CHECK(none.busy_us == 0);
  REQUIRE(none.steps.size() == 1);  // a step with no GPU work
  CHECK(none.steps[0].sums.total_us() == 0);
  CHECK(none.gemms.empty());
  // one step [0, 100]: a GEMM of 30 us and an elementwise kernel of 10 us, both launched inside it
  const auto one = config::load_kineto(data("one_step.json"));
  REQUIRE(one.steps.size() == 1);
  CHECK(one.steps[0].sums.total_us() == 40);
  CHECK(t(one.steps[0].sums, KernelClass::Gemm) == 30);
  CHECK(t(one.steps[0].sums, KernelClass::MemoryBound) == 10);
  CHECK(one.outside.total_count() == 0);
  CHECK(one.sms == 0);  // no deviceProperties
  CHECK(one.gemm_kernels_unshaped == 1);
}

TEST_CASE("calib: config::load_kineto: bad files name the file and what was expected") {
  check_error("not_a_trace.json", "no \"traceEvents\" member: expected a torch.profiler (Kineto) Chrome trace");
  check_error("not_json.json", data("not_json.json"));
  check_error("two_devices.json", "expected the trace of one GPU");
  check_error("negative_duration.json", "expected a duration >= 0 microseconds");
  check_error("truncated.json.gz", "gzip");
  check_error("does_not_exist.json", "cannot open");
}

// The real AlexNet trace (tests/data/kineto, a copy of shared/reference/traces'). Independent sums
// (python3: json.load(gzip.open(f))["traceEvents"], events ph "X" of cat kernel/gpu_memcpy/gpu_memset):
// 98 GPU events, 66,203 us in all, 79 kernels 10,692 us, memcpy+memset 55,511 us, no NCCL, no steps.
TEST_CASE("calib: config::load_kineto: the AlexNet trace, sums against the trace's own") {
  const auto tr = config::load_kineto(data("a100-40gb-alexnet-1gpu.json.gz"));
  CHECK(tr.sums.total_count() == 98);
  CHECK(tr.sums.total_us() == doctest::Approx(66203).epsilon(1e-9));
  CHECK(t(tr.sums, KernelClass::Memcpy) == doctest::Approx(55511).epsilon(1e-9));
  CHECK(t(tr.sums, KernelClass::Nccl) == 0);
  CHECK(tr.steps.empty());
  CHECK(tr.sms == 108);
  CHECK(tr.device_name == "NVIDIA A100-PG509-200");
  // every kernel lands in one class: the classes' counts add up to the events
  long long sum = 0;
  for (long long c : tr.sums.count) sum += c;
  CHECK(sum == 98);
  CHECK(tr.outside.total_us() == doctest::Approx(tr.sums.total_us()));  // no steps: all outside
}

// The two larger shared traces, where shared/ is at hand (the workplace; not in a bare checkout).
// Independent sums as above: cnn-ddp 3,774 GPU events, 165,185.838 us, kernels 162,532.340 us,
// NCCL (name contains "nccl") 46,876.493 us, 3 steps; 16-rank: 7,747 events, 449,763 us, NCCL
// 190,345 us, Adam ("adam") 38,447 us, 5 steps.
TEST_CASE("calib: config::load_kineto: the shared A100 traces, sums against the traces' own") {
  const std::string dir = std::string(FFSIM_SOURCE_DIR) + "/../shared/reference/traces/";
  if (!std::filesystem::exists(dir + "a100-40gb-cnn-ddp-2rank.json.gz")) {
    MESSAGE("shared/reference/traces not found beside the source tree: skipped");
    return;
  }
  {
    const auto tr = config::load_kineto(dir + "a100-40gb-cnn-ddp-2rank.json.gz");
    CHECK(tr.sums.total_count() == 3774);
    CHECK(tr.sums.total_us() == doctest::Approx(165185.838).epsilon(1e-6));
    CHECK(tr.sums.total_us() - t(tr.sums, KernelClass::Memcpy) == doctest::Approx(162532.340).epsilon(1e-6));
    CHECK(t(tr.sums, KernelClass::Nccl) == doctest::Approx(46876.493).epsilon(1e-6));
    REQUIRE(tr.steps.size() == 3);
    CHECK(tr.steps[0].name == "ProfilerStep#4");
    double in_steps = tr.outside.total_us();
    for (const auto& s : tr.steps) in_steps += s.sums.total_us();
    CHECK(in_steps == doctest::Approx(tr.sums.total_us()).epsilon(1e-9));
  }
  {
    const auto tr = config::load_kineto(dir + "a100-sxm4-80gb-16rank-step.json.gz");
    CHECK(tr.sums.total_count() == 7747);
    CHECK(tr.sums.total_us() == doctest::Approx(449763).epsilon(1e-9));
    CHECK(t(tr.sums, KernelClass::Nccl) == 190345);
    CHECK(t(tr.sums, KernelClass::Optimizer) >= 38447);  // Adam, and other foreach kernels
    REQUIRE(tr.steps.size() == 5);
    CHECK(!tr.gemms.empty());
    double in_steps = tr.outside.total_us();
    for (const auto& s : tr.steps) in_steps += s.sums.total_us();
    CHECK(in_steps == doctest::Approx(tr.sums.total_us()).epsilon(1e-9));
  }
}
