// Tests of the model zoo (parameters and FLOPs derived from architectures), the compute model,
// PyTorch's bucket assignment, pipeline stage orders and stage partitions.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "config/catalog.hpp"
#include "config/train_reader.hpp"
#include "core/error.hpp"
#include "config/hw_reader.hpp"
#include "test_catalog.hpp"
#include "train/compute.hpp"
#include "train/ddp.hpp"
#include "train/nn_model.hpp"
#include "train/pipeline.hpp"

using namespace ffsim;
using namespace ffsim::train;

namespace {

NnModelSpec model(const std::string& name) { return ffsim::testing::nn_model(name); }

ComputeModel default_compute() {
  const auto* e = ffsim::testing::catalog().find(config::kComputeModel, "default");
  REQUIRE(e != nullptr);
  return config::parse_compute_model(*e);
}

hw::GpuSpec a100_pcie() { return config::parse_gpu(*ffsim::testing::catalog().find(config::kGpu, "a100_pcie_40gb")); }

const LayerCost& layer(const std::vector<LayerCost>& v, const std::string& name) {
  const auto it = std::find_if(v.begin(), v.end(), [&](const LayerCost& l) { return l.name == name; });
  REQUIRE(it != v.end());
  return *it;
}

}  // namespace

TEST_CASE("train::nn_model: VGG16's parameters and FLOPs from its layer table") {
  const auto m = model("vgg16");
  const auto l = layer_costs(m, 1, true);
  // 13 conv + 5 pool + 3 fc.
  CHECK(l.size() == 21);
  // sum over conv layers of 9 Cin Cout + Cout and over fc layers of in out + out, with
  // in(fc6) = 512 x 7 x 7 = 25088: 138,357,544 (torchvision's count).
  CHECK(total_params(l) == doctest::Approx(138357544.0).epsilon(1e-15).scale(ffsim::testing::kRelative));
  CHECK(total_params(l) == doctest::Approx(*m.published_parameters).epsilon(1e-15).scale(ffsim::testing::kRelative));
  // conv1_1: 2 x 3^2 x 3 x 64 x 224^2 = 173,408,256 FLOPs per image.
  CHECK(layer(l, "conv1_1").conv_flops == doctest::Approx(2.0 * 9 * 3 * 64 * 224 * 224).epsilon(1e-15).scale(ffsim::testing::kRelative));
  // fc6: 25088 x 4096 weights + 4096 biases; 2 x 25088 x 4096 FLOPs.
  CHECK(layer(l, "fc6").params == doctest::Approx(25088.0 * 4096 + 4096).epsilon(1e-15).scale(ffsim::testing::kRelative));
  CHECK(layer(l, "fc6").gemm_flops == doctest::Approx(2.0 * 25088 * 4096).epsilon(1e-15).scale(ffsim::testing::kRelative));
  // 15.47 GMACs per 224x224 image (the figure torchvision and fvcore report): 30,940,528,640 FLOPs.
  CHECK(forward_flops(l) == doctest::Approx(30940528640.0).epsilon(1e-15).scale(ffsim::testing::kRelative));
  // Only the first layer skips its input gradient; pools halve the map: pool5 outputs 512 x 7 x 7.
  CHECK_FALSE(l.front().needs_input_grad);
  CHECK(std::count_if(l.begin(), l.end(), [](const LayerCost& x) { return !x.needs_input_grad; }) == 1);
  CHECK(layer(l, "pool5").output_elems == doctest::Approx(512.0 * 7 * 7).epsilon(1e-15).scale(ffsim::testing::kRelative));
}

TEST_CASE("train::nn_model: transformer parameter counts match the published exact counts") {
  SUBCASE("GPT2-medium: 24 (12 h^2 + 13 h) + (50257 + 1024) h + 2 h, tied head") {
    const auto m = model("gpt2_medium");
    const double h = 1024;
    const double expect = 24 * (12 * h * h + 13 * h) + (50257 + 1024) * h + 2 * h;  // 354,823,168
    CHECK(total_params(layer_costs(m, 256, true)) == doctest::Approx(expect).epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(expect == doctest::Approx(*m.published_parameters).epsilon(1e-15).scale(ffsim::testing::kRelative));
  }
  SUBCASE("LLaMA-13B: 40 (4 h^2 + 3 h f + 2 h) + 2 x 32000 h + h") {
    const auto m = model("llama_13b");
    const double h = 5120, f = 13824;
    const double expect = 40 * (4 * h * h + 3 * h * f + 2 * h) + 2 * 32000 * h + h;  // 13,015,864,320
    CHECK(total_params(layer_costs(m, 2048, true)) == doctest::Approx(expect).epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(expect == doctest::Approx(*m.published_parameters).epsilon(1e-15).scale(ffsim::testing::kRelative));
  }
  SUBCASE("MPT (llm-foundry): l (12 h^2 + 13 h) + (50368 + 2048) h + 2 h, tied head, learned positions") {
    // llm-foundry's published counts at sequence 2048 (its benchmarking README, NumParams).
    const std::vector<std::tuple<std::string, double, double, double>> sizes{
        {"mpt_125m", 12, 768, 125311488.0},   {"mpt_350m", 24, 1024, 355985408.0},
        {"mpt_760m", 24, 1536, 760470528.0},  {"mpt_1b", 24, 2048, 1315950592.0},
        {"mpt_3b", 32, 2560, 2651837440.0},   {"mpt_7b", 32, 4096, 6658859008.0},
        {"mpt_13b", 40, 5120, 12853954560.0}, {"mpt_30b", 48, 7168, 29975214080.0},
        {"mpt_70b", 80, 8192, 64862437376.0}};
    for (const auto& [name, l, h, published] : sizes) {
      CAPTURE(name);
      const auto m = model(name);
      const double expect = l * (12 * h * h + 13 * h) + (50368 + 2048) * h + 2 * h;
      CHECK(expect == published);
      CHECK(total_params(layer_costs(m, 2048, true)) ==
            doctest::Approx(expect).epsilon(1e-15).scale(ffsim::testing::kRelative));
      CHECK(*m.published_parameters == published);
    }
  }
  SUBCASE("LLaMA-2-70B: grouped-query attention, k and v of 8 heads of 128") {
    const auto m = model("llama2_70b");
    const double h = 8192, f = 28672, kv = 8 * 128;
    const double expect = 80 * (2 * h * h + 2 * h * kv + 3 * h * f + 2 * h) + 2 * 32000 * h + h;  // 68,976,648,192
    CHECK(total_params(layer_costs(m, 4096, true)) == doctest::Approx(expect).epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(expect == doctest::Approx(*m.published_parameters).epsilon(1e-15).scale(ffsim::testing::kRelative));
  }
}

TEST_CASE("train::nn_model: MoE models, total and activated parameters") {
  SUBCASE("DeepSeekMoE-16B: 16.4B total, 2.8B activated") {
    const auto m = model("deepseek_moe_16b");
    const auto l = layer_costs(m, 4096, true);
    // 27 MoE layers of 66 experts of 3 x 2048 x 1408 + a 64 x 2048 router + 4 h^2 attention + 2 norms,
    // one dense layer of 3 x 2048 x 10944, untied 102400 x 2048 embedding and head: 16,375,728,128.
    const double h = 2048, expert = 3 * h * 1408, attn = 4 * h * h;
    const double total = 27 * (66 * expert + 64 * h + attn + 2 * h) + (3 * h * 10944 + attn + 2 * h) + 2 * 102400 * h + h;
    CHECK(total_params(l) == doctest::Approx(total).epsilon(1e-15).scale(ffsim::testing::kRelative));
    // The published 16.4B is rounded: within 0.2%.
    CHECK(total == doctest::Approx(*m.published_parameters).epsilon(2e-3).scale(ffsim::testing::kRelative));
    // Activated per token: 6 routed + 2 shared experts: 2,828,650,496, the paper's "2.8B".
    double active = 0;
    for (const auto& x : l) active += x.active_params;
    CHECK(active == doctest::Approx(27 * (8 * expert + 64 * h + attn + 2 * h) + (3 * h * 10944 + attn + 2 * h) +
                                    2 * 102400 * h + h)
                        .epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(active == doctest::Approx(2.8e9).epsilon(0.02).scale(ffsim::testing::kRelative));
    // Dispatch: 4096 tokens x top-6 x 2048 elements per sequence and MoE layer.
    CHECK(layer(l, "block 1").dispatch_elems == doctest::Approx(4096.0 * 6 * 2048).epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(layer(l, "block 0").dispatch_elems == 0);
  }
  SUBCASE("DeepSeek-V2: MLA and 160 routed experts, 236B total, 21B activated") {
    const auto m = model("deepseek_v2");
    const auto l = layer_costs(m, 4096, true);
    // MLA per layer: 5120 x 1536 + 1536 x 128 x 192 + 5120 x 576 + 512 x 128 x 256 + 128 x 128 x 5120.
    const double h = 5120;
    const double attn = h * 1536 + 1536.0 * 128 * 192 + h * 576 + 512.0 * 128 * 256 + 128.0 * 128 * h;
    CHECK(layer(l, "block 0").gemm_flops ==
          doctest::Approx(2.0 * 4096 * (attn + 3 * h * 12288)).epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(total_params(l) == doctest::Approx(*m.published_parameters).epsilon(2e-3).scale(ffsim::testing::kRelative));  // 235.74B
    double active = 0;
    for (const auto& x : l) active += x.active_params;
    CHECK(active == doctest::Approx(21e9).epsilon(0.02).scale(ffsim::testing::kRelative));  // 21.38B
  }
}

TEST_CASE("train::nn_model: transformer FLOPs per sequence") {
  const auto m = model("llama_13b");
  const double h = 5120, f = 13824, s = 2048, a = 40, hd = 128;
  const auto flash = layer_costs(m, 2048, true), full = layer_costs(m, 2048, false);
  // Linear layers: 2 FLOPs per weight and token.
  CHECK(layer(flash, "block 3").gemm_flops == doctest::Approx(2 * s * (4 * h * h + 3 * h * f)).epsilon(1e-15).scale(ffsim::testing::kRelative));
  // Attention: q.k and p.v over s keys, 2 FLOPs each, halved by causal blockwise kernels.
  CHECK(layer(full, "block 3").attention_flops == doctest::Approx(2 * s * s * a * (hd + hd)).epsilon(1e-15).scale(ffsim::testing::kRelative));
  CHECK(layer(flash, "block 3").attention_flops == doctest::Approx(s * s * a * (hd + hd)).epsilon(1e-15).scale(ffsim::testing::kRelative));
  // Stored activations: 9h + 3f per token (SwiGLU), plus 2.5 a s per token when scores are materialised.
  CHECK(layer(flash, "block 3").memory_elems == doctest::Approx(s * (9 * h + 3 * f)).epsilon(1e-15).scale(ffsim::testing::kRelative));
  CHECK(layer(full, "block 3").memory_elems == doctest::Approx(s * (9 * h + 3 * f) + 2.5 * a * s * s).epsilon(1e-15).scale(ffsim::testing::kRelative));
  // The head's GEMM: 2 h V per token.
  CHECK(layer(flash, "head").gemm_flops == doctest::Approx(2 * s * h * 32000).epsilon(1e-15).scale(ffsim::testing::kRelative));
}

TEST_CASE("train::compute: kernel times from the GPU's rates and the efficiencies") {
  const ComputeModel c = default_compute();
  const GpuRates r = rates_of(a100_pcie(), "tf32");
  // TF32: measured GEMM 107 TFLOPS (Table II); HBM 1,555 GB/s.
  CHECK(r.gemm_measured);
  CHECK(r.gemm.si() == doctest::Approx(107e12).epsilon(1e-15).scale(ffsim::testing::kRelative));
  Work w;
  w.conv_flops = 1e12;
  w.memory_bytes = 1e9;
  // 1e12 / (107e12 x conv) + 1e9 / (1555e9 x memory).
  CHECK(kernel_time(c, r, w).si() ==
        doctest::Approx(1e12 / (107e12 * c.conv_efficiency) + 1e9 / (1555e9 * c.memory_efficiency)).epsilon(1e-12).scale(ffsim::testing::kRelative));
  SUBCASE("conv1_1 of VGG16 for 50 images") {
    const auto l = layer_costs(model("vgg16"), 1, true);
    const Work f = forward_work(l.front(), 50, 4, c);
    // conv: 50 x 2 x 9 x 3 x 64 x 224^2; memory: 2 passes over 64 x 224^2 fp32 outputs per image.
    CHECK(f.conv_flops == doctest::Approx(50 * 2.0 * 9 * 3 * 64 * 224 * 224).epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(f.memory_bytes == doctest::Approx(50 * 64.0 * 224 * 224 * 4 * c.memory_passes).epsilon(1e-15).scale(ffsim::testing::kRelative));
    // The first layer's backward computes only weight gradients: half of the usual 2x.
    const Work b = backward_work(l.front(), 50, 4, c, false);
    CHECK(b.conv_flops == doctest::Approx(f.conv_flops * c.backward_gemm / 2).epsilon(1e-15).scale(ffsim::testing::kRelative));
    const Work br = backward_work(l.front(), 50, 4, c, true);
    CHECK(br.conv_flops == doctest::Approx(b.conv_flops + f.conv_flops).epsilon(1e-15).scale(ffsim::testing::kRelative));
  }
  SUBCASE("a precision the GPU lacks is an error naming the ones it has") {
    CHECK_THROWS_WITH_AS((void)rates_of(a100_pcie(), "fp8"),
                         "GPU a100_pcie_40gb has no rate for precision \"fp8\"; it has: bf16, fp16, fp32, fp64, tf32",
                         ValueError);
  }
  CHECK(element_bytes("bf16") == 2);
  CHECK(element_bytes("tf32") == 4);
}

TEST_CASE("train::assign_buckets: PyTorch's reverse-order bucket assignment on VGG16") {
  const auto l = layer_costs(model("vgg16"), 1, true);
  const double MiB = 1048576;
  const auto b = assign_buckets(l, 4, 25 * MiB, 1 * MiB);
  // fp32 gradients, reverse order: fc8 (16.4 MB >= 1 MiB closes the first bucket), fc7 (67.1 MB),
  // fc6 (411 MB), conv5_3..5_1 (3 x 9.44 MB = 28.3 MB >= 26.2 MB), conv4_3, 4_2, 4_1, 3_3, 3_2
  // (9.44 + 9.44 + 4.72 + 2.36 + 2.36 = 28.3 MB), and the rest (2.22 MB).
  REQUIRE(b.size() == 6);
  auto names = [&](const Bucket& x) {
    std::vector<std::string> n;
    for (auto k : x.layers) n.push_back(l[k].name);
    return n;
  };
  CHECK(names(b[0]) == std::vector<std::string>{"fc8"});
  CHECK(names(b[1]) == std::vector<std::string>{"fc7"});
  CHECK(names(b[2]) == std::vector<std::string>{"fc6"});
  CHECK(names(b[3]) == std::vector<std::string>{"conv5_3", "conv5_2", "conv5_1"});
  CHECK(names(b[4]) == std::vector<std::string>{"conv4_3", "conv4_2", "conv4_1", "conv3_3", "conv3_2"});
  CHECK(names(b[5]) == std::vector<std::string>{"conv3_1", "conv2_2", "conv2_1", "conv1_2", "conv1_1"});
  double sum = 0;
  for (const auto& x : b) sum += x.bytes;
  CHECK(sum == doctest::Approx(138357544.0 * 4).epsilon(1e-15).scale(ffsim::testing::kRelative));
  SUBCASE("a cap below every layer: one bucket per layer with parameters") {
    CHECK(assign_buckets(l, 4, 1, 1).size() == 16);
  }
  SUBCASE("a cap above the model: one bucket") {
    CHECK(assign_buckets(l, 4, 1e12, 1e12).size() == 1);
  }
  SUBCASE("no layers: no buckets") {
    CHECK(assign_buckets({}, 4, MiB, MiB).empty());
  }
}

TEST_CASE("train::stage_order: 1F1B and GPipe") {
  using V = std::vector<std::pair<bool, int>>;
  // p = 4, m = 6: stage 0 warms up with 3 forwards, alternates, drains 3 backwards.
  CHECK(stage_order("1f1b", 0, 4, 6) ==
        V{{true, 0}, {true, 1}, {true, 2}, {true, 3}, {false, 0}, {true, 4}, {false, 1}, {true, 5}, {false, 2},
          {false, 3}, {false, 4}, {false, 5}});
  // The last stage alternates from the start.
  CHECK(stage_order("1f1b", 3, 4, 2) == V{{true, 0}, {false, 0}, {true, 1}, {false, 1}});
  // Fewer micro-batches than stages: the warm-up is cut to m.
  CHECK(stage_order("1f1b", 0, 4, 2) == V{{true, 0}, {true, 1}, {false, 0}, {false, 1}});
  CHECK(stage_order("gpipe", 1, 4, 2) == V{{true, 0}, {true, 1}, {false, 0}, {false, 1}});
  // One stage (no pipeline): no warm-up, each micro-batch forward then backward.
  CHECK(stage_order("1f1b", 0, 1, 3) == V{{true, 0}, {false, 0}, {true, 1}, {false, 1}, {true, 2}, {false, 2}});
  CHECK(stage_order("1f1b", 0, 1, 1) == V{{true, 0}, {false, 0}});
  // Every micro-batch once forward and once backward, forward first, on every stage, for m in 1..9.
  for (int m = 1; m <= 9; ++m)
    for (int s = 0; s < 5; ++s) {
      const auto o = stage_order("1f1b", s, 5, m);
      REQUIRE(o.size() == static_cast<std::size_t>(2 * m));
      for (int i = 0; i < m; ++i) {
        const auto f = std::find(o.begin(), o.end(), std::make_pair(true, i));
        const auto b = std::find(o.begin(), o.end(), std::make_pair(false, i));
        CHECK(f < b);
      }
    }
}

TEST_CASE("train::partition_stages: uniform blocks and the balanced linear partition") {
  const auto l = layer_costs(model("llama_13b"), 2048, true);  // embedding, 40 blocks, head
  const std::vector<double> ones(l.size(), 1.0);
  SUBCASE("uniform: 10 blocks per stage, embedding first, head last") {
    const auto p = partition_stages(l, ones, 4, "uniform");
    using R = std::vector<std::pair<std::size_t, std::size_t>>;
    CHECK(p == R{{0, 11}, {11, 21}, {21, 31}, {31, 42}});
  }
  SUBCASE("balanced: the least slowest stage over contiguous splits") {
    // costs 1 2 3 4 5 in 2 stages: {1,2,3} | {4,5} has max 9; {1,2,3,4} | {5} has 10.
    std::vector<LayerCost> five(5);
    const auto p = partition_stages(five, {1, 2, 3, 4, 5}, 2, "balanced");
    CHECK(p == std::vector<std::pair<std::size_t, std::size_t>>{{0, 3}, {3, 5}});
    // Equal costs split evenly: 42 layers in 4 stages, two of 10 and two of 11. Every such split is
    // optimal (slowest stage 11); the search keeps the first cut that is strictly better, so the
    // extra layers go to the last stages: 10, 10, 11, 11 (under 1F1B the first stages hold the
    // most micro-batches in flight, so that is also the kinder tie-break for memory).
    const auto q = partition_stages(l, ones, 4, "balanced");
    std::vector<std::size_t> sizes;
    for (auto [a, b] : q) sizes.push_back(b - a);
    CHECK(sizes == std::vector<std::size_t>{10, 10, 11, 11});
  }
  SUBCASE("one stage: every layer") {
    using R = std::vector<std::pair<std::size_t, std::size_t>>;
    CHECK(partition_stages(l, ones, 1, "balanced") == R{{0, l.size()}});
    CHECK(partition_stages(l, ones, 1, "uniform") == R{{0, l.size()}});
  }
  SUBCASE("as many stages as layers: one each") {
    std::vector<LayerCost> three(3);
    using R = std::vector<std::pair<std::size_t, std::size_t>>;
    CHECK(partition_stages(three, {5, 1, 1}, 3, "balanced") == R{{0, 1}, {1, 2}, {2, 3}});
  }
  SUBCASE("more stages than layers: refused (the workload's check says so first)") {
    std::vector<LayerCost> three(3);
    CHECK_THROWS((void)partition_stages(three, {1, 1, 1}, 4, "balanced"));
  }
}
