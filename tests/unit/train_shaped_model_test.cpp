// The calibrated shaped compute model in `ffsim train`: per-layer times (train::shaped_layer and
// train::layer_times) and the scope its reader enforces (issue 29).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>

#include "config/reader.hpp"
#include "core/error.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"
#include "train/shaped_compute.hpp"
#include "train/workload.hpp"

using namespace ffsim;
using namespace ffsim::train;

namespace {

// A DDP workload of `model` at `precision` on 2 nodes of `node`, with the extra members `extra`.
plan::ScenarioSpec scenario(const std::string& node, const std::string& kind, const std::string& model,
                            const std::string& precision, const std::string& extra = "") {
  const std::string text = R"({"name": "t", "cluster": {"node": ")" + node +
                           R"(", "nodes": 2}, "fabric": {"topology": "two_layer", "switch": "qm8700"},
      "workload": {"kind": ")" +
                           kind + R"(", "model": ")" + model + R"(", "scaling": "weak", "batch": 4,
        "optimizer": "sgd", "precision": ")" +
                           precision + R"(", "grad_dtype": "fp32", "gpus": [16])" + extra + "}}";
  return plan::parse_scenario(config::Document::parse(text, "t.json", false), testing::catalog());
}

std::string config_error(const std::string& node, const std::string& kind, const std::string& model,
                         const std::string& precision, const std::string& extra) {
  try {
    (void)scenario(node, kind, model, precision, extra);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("train::shaped_layer: a layer's forward and backward, summing to shaped_step") {
  // As in train_shaped_test's hand-derived step: a GEMM model of only a launch cost makes every
  // product cost `launch`. First layer a (no input gradient): linear forward 1, backward (weight
  // gradient) 1; attention forward 1, backward 2 (both operands are activations). Layer b: linear
  // forward 1, backward 2. Memory: a's 10 elements, b's 6 of which 2 scores, x 2 samples x 2 B x 6 /
  // 1e9 B/s, a third in the forward (forward_memory_share 1/3: passes 2 of 2 x (1 + 2)).
  LayerCost a, b;
  a.needs_input_grad = false;
  a.gemms.push_back(GemmOp{GemmOp::Kind::Linear, 3, 4, 5, 1});
  a.gemms.push_back(GemmOp{GemmOp::Kind::Attention, 3, 3, 2, 2});
  a.memory_elems = 10;
  b.gemms.push_back(GemmOp{GemmOp::Kind::Linear, 3, 5, 4, 1});
  b.memory_elems = 6;
  b.score_elems = 2;
  GemmParams p;
  p.launch_s = 1e-6;
  ShapedStep st;
  st.samples = 2;
  st.act_bytes = 2;
  st.memory_traffic = 6;
  const ShapedGpu gpu{108, 1e30, 1e9};
  const auto tiles = sm80_gemm_tiles();
  const ShapedLayer la = shaped_layer(a, st, gpu, p, tiles), lb = shaped_layer(b, st, gpu, p, tiles);
  CHECK(la.fwd.linear_s == doctest::Approx(1e-6));
  CHECK(la.bwd.linear_s == doctest::Approx(1e-6));
  CHECK(la.fwd.attention_s == doctest::Approx(1e-6));
  CHECK(la.bwd.attention_s == doctest::Approx(2e-6));
  CHECK(lb.fwd.linear_s == doctest::Approx(1e-6));
  CHECK(lb.bwd.linear_s == doctest::Approx(2e-6));
  CHECK(la.fwd.gemms + la.bwd.gemms + lb.fwd.gemms + lb.bwd.gemms == 8);
  const double per = 2.0 * 2 * 6 / 1e9;
  CHECK(la.fwd.memory_s == doctest::Approx(10 * per / 3));
  CHECK(la.bwd.memory_s == doctest::Approx(10 * per * 2 / 3));
  CHECK(lb.fwd.memory_s == doctest::Approx(4 * per / 3));
  CHECK(lb.fwd.score_memory_s == doctest::Approx(2 * per / 3));
  CHECK(lb.bwd.score_memory_s == doctest::Approx(2 * per * 2 / 3));
  CHECK(la.fwd.optimizer_s == 0);
  // The layers' sums are the whole step's (but for the optimizer, which shaped_layer leaves out).
  const ShapedTimes t = shaped_step({a, b}, st, gpu, p);
  CHECK(la.fwd.linear_s + la.bwd.linear_s + lb.fwd.linear_s + lb.bwd.linear_s == doctest::Approx(t.linear_s));
  CHECK(la.fwd.attention_s + la.bwd.attention_s == doctest::Approx(t.attention_s));
  CHECK(la.fwd.memory_s + la.bwd.memory_s + lb.fwd.memory_s + lb.bwd.memory_s == doctest::Approx(t.memory_s));
  CHECK(lb.fwd.score_memory_s + lb.bwd.score_memory_s == doctest::Approx(t.score_memory_s));
  // Edge: all of the traffic in the forward.
  st.forward_memory_share = 1;
  const ShapedLayer all = shaped_layer(a, st, gpu, p, tiles);
  CHECK(all.fwd.memory_s == doctest::Approx(10 * per));
  CHECK(all.bwd.memory_s == 0);
}

TEST_CASE("train::layer_times: a workload on the calibrated shaped model (models/calibrated/a100_shaped.json)") {
  // VGG16 in TF32 on Fire-Flyer's A100 PCIe: each layer's time is the shaped model's, each kind
  // times the file's multiplier; the per-layer sums equal the whole step of shaped_step with the
  // same inputs (the optimizer apart), and recomputation adds the forward to the backward.
  const plan::ScenarioSpec sc =
      scenario("fire_flyer_pcie", "ddp", "vgg16", "tf32", R"(, "compute_model": "a100_shaped")");
  REQUIRE(sc.workload);
  const WorkloadSpec& w = *sc.workload;
  REQUIRE(w.compute.shaped);
  const ShapedCalibration& c = *w.compute.shaped;
  const hw::GpuSpec& gpu = sc.cluster.node.gpus.front().gpu;
  CHECK(gpu.name == "a100_pcie_40gb");
  REQUIRE(c.gemm_of("pcie", "tf32"));  // the PCIe card's own ceiling, not the SXM4's
  REQUIRE(c.gemm_of("sxm", "tf32"));
  CHECK(c.gemm_of("pcie", "tf32")->ceiling != c.gemm_of("sxm", "tf32")->ceiling);
  const auto layers = layer_costs(w.model, w.seq, w.flash_attention);
  for (const double samples : {1.0, 3.0, 50.0}) {
    const LayerTimes lt = layer_times(w, gpu, layers, samples, false);
    REQUIRE(lt.fwd.size() == layers.size());
    double sum = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) sum += lt.fwd[i] + lt.bwd[i];
    ShapedStep st;
    st.samples = samples;
    st.act_bytes = 4;
    st.memory_traffic = w.compute.memory_passes * (1 + w.compute.backward_memory);
    const ShapedTimes t =
        shaped_step(layers, st, ShapedGpu{gpu.sms, gpu.compute.at("tf32").peak.si(), gpu.memory_bandwidth.si()},
                    *c.gemm_of("pcie", "tf32"));
    CHECK(sum == doctest::Approx(shaped_total(t, c.multipliers) - t.optimizer_s).epsilon(1e-9));
    const LayerTimes rc = layer_times(w, gpu, layers, samples, true);
    for (std::size_t i = 0; i < layers.size(); ++i) CHECK(rc.bwd[i] == doctest::Approx(lt.bwd[i] + lt.fwd[i]));
  }
  // The optimizer's pass at the datasheet bandwidth: SGD over fp32 state, (4 x 4 + 4) B per parameter.
  CHECK(optimizer_time(w, gpu, 1e6) == doctest::Approx(1e6 * 20 / gpu.memory_bandwidth.si()));
}

TEST_CASE("config::parse_workload: a shaped model only where it was fitted") {
  // H800s are not among the file's GPU models; fp32 is not among its precisions (fp16/bf16, tf32);
  // efficiency overrides would change nothing.
  const std::string m = R"(, "compute_model": "a100_shaped")";
  std::string e = config_error("h800_8x400g", "ddp", "vgg16", "bf16", m);
  CHECK(e.find("/workload/compute_model") != std::string::npos);
  CHECK(e.find("fitted on GPU models a100_pcie_40gb") != std::string::npos);
  CHECK(e.find("found h800_sxm") != std::string::npos);
  e = config_error("fire_flyer_pcie", "ddp", "vgg16", "fp32", m);
  CHECK(e.find("/workload/compute_model") != std::string::npos);
  CHECK(e.find("found fp32") != std::string::npos);
  e = config_error("fire_flyer_pcie", "ddp", "vgg16", "tf32", m + R"(, "efficiency": {"gemm": 0.5})");
  CHECK(e.find("/workload/efficiency") != std::string::npos);
  CHECK(e.find("not used") != std::string::npos);
  // bf16 runs on the fp16 fit.
  CHECK(config_error("fire_flyer_pcie", "ddp", "vgg16", "bf16", m).empty());
  // The transformer kind runs on it (its tensor-parallel shares: tensor_parallel_share).
  CHECK(
      config_error("dgx_a100", "transformer", "gpt2_medium", "bf16", m + R"(, "seq": 1024, "tp": 2, "pp": 1)").empty());
}
