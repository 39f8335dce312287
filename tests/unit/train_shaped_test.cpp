// Tests of the networks by shape (ResNet bottlenecks, strides and paddings, encoder attention), of
// every layer's products by shape, of split-K and the best tile, of the shaped compute model, and of
// the throughput fit and its CSV (`ffsim calibrate --throughput`).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <limits>

#include "app/compute_calibration.hpp"
#include "calib/throughput_fit.hpp"
#include "config/catalog.hpp"
#include "config/reader.hpp"
#include "config/throughput_reader.hpp"
#include "config/train_reader.hpp"
#include "core/error.hpp"
#include "test_catalog.hpp"
#include "train/gemm_time.hpp"
#include "train/nn_model.hpp"
#include "train/shaped_compute.hpp"

using namespace ffsim;
using namespace ffsim::train;

namespace {

NnModelSpec model(const std::string& name) { return ffsim::testing::nn_model(name); }

NnModelSpec inline_model(const std::string& json) {
  config::CatalogEntry e;
  e.kind = config::kNnModel;
  e.name = "t";
  e.file = "t.json";
  e.document = config::Document::parse(json, "t.json", false);
  return config::parse_nn_model(e);
}

const LayerCost& layer(const std::vector<LayerCost>& v, const std::string& name) {
  const auto it = std::find_if(v.begin(), v.end(), [&](const LayerCost& l) { return l.name == name; });
  REQUIRE(it != v.end());
  return *it;
}

// Sum over a layer list of its products' FLOPs: 2 x batch x rows x n x k per sample.
double gemm_op_flops(const std::vector<LayerCost>& layers) {
  double f = 0;
  for (const auto& l : layers)
    for (const auto& g : l.gemms) f += 2 * g.batch * g.rows * g.n * g.k;
  return f;
}

const char* const kCnnHead = R"({"kind": "nn_model", "name": "t", "architecture": "cnn",
    "input": {"channels": 3, "size": 32}, "conv_kernel": 3, "cnn_layers": )";

}  // namespace

TEST_CASE("train::nn_model: ResNets by their bottleneck blocks") {
  SUBCASE("ResNet-50 v1.5: torchvision's 25,557,032 parameters") {
    const auto l = layer_costs(model("resnet50"), 1, true);
    // conv1 + pool + 16 blocks of (a, b, c, add) + 4 projections + pool + fc = 1 + 1 + 64 + 4 + 2.
    CHECK(l.size() == 72);
    CHECK(total_params(l) == doctest::Approx(25557032.0).epsilon(1e-15).scale(ffsim::testing::kRelative));
    // conv1: 7x7/2 from 3 to 64 channels on 224 -> 112: 2 x 49 x 3 x 64 x 112^2 FLOPs; no bias, a
    // batch-norm scale and shift per channel: 49 x 3 x 64 + 2 x 64 parameters.
    CHECK(layer(l, "conv1_1").conv_flops ==
          doctest::Approx(2.0 * 49 * 3 * 64 * 112 * 112).epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(layer(l, "conv1_1").params == 49 * 3 * 64 + 2 * 64);
    // The stem's 3x3/2 pool with "same" padding: 112 -> 56; res2.1's 1x1 from 64 to 64 on 56 x 56.
    CHECK(layer(l, "pool1").output_elems == 64.0 * 56 * 56);
    CHECK(layer(l, "res2.1a").conv_flops ==
          doctest::Approx(2.0 * 64 * 64 * 56 * 56).epsilon(1e-15).scale(ffsim::testing::kRelative));
    // v1.5: res3.1's stride is on the 3x3 (b): a keeps 56 x 56, b and c are 28 x 28; the projection
    // takes the block's input 256 channels at stride 2 to 512.
    CHECK(layer(l, "res3.1a").output_elems == 128.0 * 56 * 56);
    CHECK(layer(l, "res3.1b").output_elems == 128.0 * 28 * 28);
    CHECK(layer(l, "res3.1proj").conv_flops ==
          doctest::Approx(2.0 * 256 * 512 * 28 * 28).epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(layer(l, "res3.1add").output_elems == 512.0 * 28 * 28);
    // The last map is 2048 x 7 x 7, pooled to 2048 features: fc 2048 x 1000 + 1000.
    CHECK(layer(l, "pool2").output_elems == 2048);
    CHECK(layer(l, "fc3").params == 2048.0 * 1000 + 1000);
    // 4.09 GMACs per image, the figure usually quoted for v1.5 (v1: 3.86): within 1%.
    CHECK(forward_flops(l) / 2 == doctest::Approx(4.09e9).epsilon(0.01));
  }
  SUBCASE("ResNet-50 v1 strides the first 1x1: the same parameters, fewer FLOPs") {
    const auto v1 = layer_costs(model("resnet50_v1"), 1, true), v15 = layer_costs(model("resnet50"), 1, true);
    CHECK(total_params(v1) == total_params(v15));
    CHECK(layer(v1, "res3.1a").output_elems == 128.0 * 28 * 28);
    // res3.1a, 4.1: on 28^2 rather than 56^2; 3x3 b on 28^2 in both: 4 x fewer a-FLOPs per such block.
    CHECK(layer(v1, "res3.1a").conv_flops * 4 ==
          doctest::Approx(layer(v15, "res3.1a").conv_flops).epsilon(1e-15).scale(ffsim::testing::kRelative));
    CHECK(forward_flops(v1) / 2 == doctest::Approx(3.86e9).epsilon(0.01));
  }
  SUBCASE("ResNet-152: torchvision's 60,192,808 parameters") {
    CHECK(total_params(layer_costs(model("resnet152_v1"), 1, true)) ==
          doctest::Approx(60192808.0).epsilon(1e-15).scale(ffsim::testing::kRelative));
  }
}

TEST_CASE("train::nn_model: AlexNet's valid paddings and overlapping pools") {
  const auto l = layer_costs(model("alexnet"), 1, true);
  // 227 -> conv 11x11/4 valid: floor((227 - 11) / 4) + 1 = 55; pool 3/2 valid: floor(52 / 2) + 1 = 27;
  // conv 5x5 same: 27; pool: 13; three 3x3 convs: 13; pool: 6.
  CHECK(layer(l, "conv1_1").output_elems == 64.0 * 55 * 55);
  CHECK(layer(l, "pool1").output_elems == 64.0 * 27 * 27);
  CHECK(layer(l, "conv2_1").conv_flops ==
        doctest::Approx(2.0 * 25 * 64 * 192 * 27 * 27).epsilon(1e-15).scale(ffsim::testing::kRelative));
  CHECK(layer(l, "pool3").output_elems == 256.0 * 6 * 6);
  // fc6 (after three pools): 256 x 6 x 6 = 9216 inputs.
  CHECK(layer(l, "fc4").params == 9216.0 * 4096 + 4096);
}

TEST_CASE("train::nn_model: BERT is an encoder without the vocabulary head") {
  SUBCASE("parameters: HF BertModel's count less its pooler, token types and embedding norm, plus a final norm") {
    for (const auto& [name, h] : {std::pair{"bert_base", 768.0}, std::pair{"bert_large", 1024.0}}) {
      const auto m = model(name);
      const double expect = *m.published_parameters - (h * h + h) - 2 * h - 2 * h + 2 * h;
      CHECK(total_params(layer_costs(m, 128, false)) ==
            doctest::Approx(expect).epsilon(1e-15).scale(ffsim::testing::kRelative));
    }
  }
  SUBCASE("encoder attention is the full score matrix even blockwise; no head product") {
    const auto m = model("bert_large");
    const double s = 128, h = 1024;
    for (bool flash : {false, true}) {
      const auto l = layer_costs(m, 128, flash);
      // 2 s ctx heads (d_qk + d_v) with ctx = s: 2 x 128 x 128 x 16 x 128.
      CHECK(layer(l, "block 0").attention_flops ==
            doctest::Approx(2 * s * s * 16 * 128).epsilon(1e-15).scale(ffsim::testing::kRelative));
      CHECK(layer(l, "head").gemm_flops == 0);
      CHECK(layer(l, "head").gemms.empty());
      // Scores stored only when materialised: 2.5 heads s^2.
      CHECK(layer(l, "block 0").score_elems == (flash ? 0.0 : 2.5 * 16 * s * s));
    }
    // Its linear products: fused qkv (s, 3h, h), o (s, h, h), up (s, 4h, h), down (s, h, 4h).
    const auto costs = layer_costs(m, 128, false);
    const auto& g = layer(costs, "block 3").gemms;
    REQUIRE(g.size() == 6);
    CHECK((g[0].rows == s && g[0].n == 3 * h && g[0].k == h));
    CHECK((g[3].n == h && g[3].k == 4 * h));
    CHECK((g[4].kind == GemmOp::Kind::Attention && g[4].batch == 16 && g[4].n == s && g[4].k == 64));
  }
}

TEST_CASE("train::nn_model: every network's products by shape sum to its FLOPs") {
  // For each zoo model, sum_ops 2 batch rows n k = gemm + conv + attention FLOPs (forward, per sample):
  // the shapes describe the same work as the totals. Causal flash attention too (ctx = s / 2).
  for (const auto& name : ffsim::testing::catalog().names(config::kNnModel)) {
    CAPTURE(name);
    const auto m = model(name);
    for (bool flash : {false, true}) {
      const auto l = layer_costs(m, 64, flash);
      CHECK(gemm_op_flops(l) == doctest::Approx(forward_flops(l)).epsilon(1e-12).scale(ffsim::testing::kRelative));
    }
  }
}

TEST_CASE("config::parse_nn_model: CNN layer modifiers and their errors") {
  const auto cnn = [](const std::string& layers) { return inline_model(std::string(kCnnHead) + layers + "}"); };
  SUBCASE("a conv's kernel, stride and padding; a pool's stride; a bottleneck's repeat") {
    const auto l =
        layer_costs(cnn(R"([{"conv": 8, "kernel": 5, "stride": 2, "padding": "valid"}, {"pool": 3, "stride": 2},
        {"bottleneck": 4, "stride": 2, "repeat": 2}, {"fc": 10}])"),
                    1, true);
    // 32 -> conv 5/2 valid: floor(27 / 2) + 1 = 14; pool 3/2 same: ceil(14 / 2) = 7; the bottleneck's
    // stride 2: ceil(7 / 2) = 4 with 16 channels: fc from 16 x 4 x 4 = 256 features.
    CHECK(layer(l, "conv1_1").output_elems == 8.0 * 14 * 14);
    CHECK(layer(l, "pool1").output_elems == 8.0 * 7 * 7);
    CHECK(layer(l, "res2.2add").output_elems == 16.0 * 4 * 4);
    CHECK(layer(l, "fc2").params == 256.0 * 10 + 10);
    // Two blocks: a, b, c, proj, add then a, b, c, add.
    CHECK(l.size() == 1 + 1 + 9 + 1);
  }
  SUBCASE("errors name the layer and say what was expected") {
    CHECK_THROWS_WITH_AS(cnn(R"([{"pool": 2, "kernel": 3}])"), doctest::Contains("kernel"), ConfigError);
    CHECK_THROWS_WITH_AS(cnn(R"([{"conv": 2, "padding": "full"}])"), doctest::Contains("\"same\" or \"valid\""),
                         ConfigError);
    CHECK_THROWS_WITH_AS(cnn(R"([{"conv": 2, "fc": 3}])"), doctest::Contains("exactly one of"), ConfigError);
    CHECK_THROWS_WITH_AS(cnn(R"([{"cnv": 2}])"), doctest::Contains("did you mean \"conv\""), ConfigError);
    CHECK_THROWS_WITH_AS(cnn(R"([{"bottleneck": 2, "stride_on": "5x5"}])"), doctest::Contains("ResNet v1.5"),
                         ConfigError);
    // A window larger than what is left: 32 -> conv 15 valid: 18 -> conv 15 valid: 4 -> pool 5/1 valid: 0.
    CHECK_THROWS_WITH_AS(
        cnn(R"([{"conv": 2, "kernel": 15, "stride": 1, "padding": "valid"}, {"conv": 2, "kernel": 15, "padding": "valid"},
        {"pool": 5, "stride": 1, "padding": "valid"}])"),
        doctest::Contains("empty"), ConfigError);
    // Without a stride, a pool's window must divide the map (as before).
    CHECK_THROWS_WITH_AS(cnn(R"([{"pool": 5}])"), doctest::Contains("does not divide"), ConfigError);
  }
}

TEST_CASE("train::gemm_time: split-K and the best tile") {
  const GemmTile t{128, 64};
  GemmParams p;
  p.tile = t;
  p.ceiling = 1;
  const int sms = 108;
  const double peak = 100e12;
  SUBCASE("off by default and for shapes that fill the SMs: the time is unchanged") {
    const GemmShape small{1, 64, 64, 1 << 20};
    CHECK(gemm_k_splits(small, sms, p) == 1);
    p.split_k_min = 256;
    // 128 x 64 x 108 tiles fill the SMs: no split.
    CHECK(gemm_k_splits(GemmShape{1, 128 * 12, 64 * 9, 4096}, sms, p) == 1);
  }
  SUBCASE("one tile and a long k: sms slices, one wave of k / sms terms") {
    p.split_k_min = 256;
    const GemmShape s{1, 64, 64, 108 * 1024};
    // tiles = 1: splits = min(108 / 1, 110592 / 256 = 432) = 108; 108 tiles make 1 wave of 1024 terms:
    // 2 x 128 x 64 x 1024 x 108 / 1e14 s.
    CHECK(gemm_k_splits(s, sms, p) == 108);
    CHECK(gemm_time(s, sms, peak, p) == doctest::Approx(2.0 * 128 * 64 * 1024 * 108 / peak).epsilon(1e-12));
    // The slices are at least 256 terms: k = 1024 makes 4.
    CHECK(gemm_k_splits(GemmShape{1, 64, 64, 1024}, sms, p) == 4);
    // k below one slice: no split (and no slice of 0 terms).
    CHECK(gemm_k_splits(GemmShape{1, 64, 64, 100}, sms, p) == 1);
  }
  SUBCASE("the best tile is the fastest tile's time") {
    const GemmShape s{1, 4096, 4096, 4096};
    double best = std::numeric_limits<double>::infinity();
    for (const GemmTile& x : sm80_gemm_tiles()) {
      GemmParams q = p;
      q.tile = x;
      q.wave_overhead_s = 5e-6;
      best = std::min(best, gemm_time(s, sms, peak, q));
    }
    p.wave_overhead_s = 5e-6;
    CHECK(gemm_time_best_tile(s, sms, peak, p, sm80_gemm_tiles()) == best);
    // A single tile gives that tile's time.
    CHECK(gemm_time_best_tile(s, sms, peak, p, {t}) == gemm_time(s, sms, peak, p));
  }
}

TEST_CASE("train::shaped_step: forward, both gradients, memory-bound work and the optimizer by hand") {
  // A first layer (no input gradient) and one after it, 2 samples; a GEMM model of only a launch
  // cost (ceiling 1 on a huge peak makes the multiply-adds free): every product costs `launch`, so
  // the times count products. First layer: its linear product forward + weight gradient = 2, its
  // attention product 3; second: forward + input gradient + weight gradient = 3. Linear 5, attention 3.
  LayerCost a, b;
  a.needs_input_grad = false;
  a.gemms.push_back(GemmOp{GemmOp::Kind::Linear, 3, 4, 5, 1});
  // Attention's operands are activations: both gradients even in the first layer: 3.
  a.gemms.push_back(GemmOp{GemmOp::Kind::Attention, 3, 3, 2, 2});
  a.memory_elems = 10;
  a.params = 20;
  b.gemms.push_back(GemmOp{GemmOp::Kind::Linear, 3, 5, 4, 1});

  b.memory_elems = 6;
  b.score_elems = 2;
  b.params = 30;
  GemmParams p;
  p.launch_s = 1e-6;
  ShapedStep st;
  st.samples = 2;
  st.act_bytes = 2;
  st.memory_traffic = 6;
  st.optimizer_bytes_per_param = 28;
  const auto t = shaped_step({a, b}, st, ShapedGpu{108, 1e30, 1e9}, p);
  CHECK(t.gemms == 8);
  CHECK(t.linear_s == doctest::Approx(5e-6));
  CHECK(t.attention_s == doctest::Approx(3e-6));
  CHECK(t.conv_s == 0);
  // Memory: (10 + 6 - 2) elements x 2 samples x 2 B x 6 / 1e9 B/s; scores 2 x 2 x 2 x 6 / 1e9.
  CHECK(t.memory_s == doctest::Approx(14.0 * 2 * 2 * 6 / 1e9));
  CHECK(t.score_memory_s == doctest::Approx(2.0 * 2 * 2 * 6 / 1e9));
  // Optimizer: 50 parameters x 28 B / 1e9.
  CHECK(t.optimizer_s == doctest::Approx(50.0 * 28 / 1e9));
  ShapedMultipliers m;
  m.conv = 7;
  m.linear = 2;
  m.attention = 3;
  m.memory = 0.5;
  m.score_memory = 4;
  CHECK(shaped_total(t, m) ==
        doctest::Approx(2 * 5e-6 + 3 * 3e-6 + 0.5 * t.memory_s + 4 * t.score_memory_s + t.optimizer_s));
  CHECK(optimizer_bytes_per_param("sgd", false) == 20);
  CHECK(optimizer_bytes_per_param("adam", true) == 30);
  CHECK_THROWS_AS((void)optimizer_bytes_per_param("lion", false), ValueError);
}

namespace {

// A CSV row with planted times: measured = conv c + gemm g + memory m + optimizer.
struct Planted {
  std::string dataset;
  double conv, gemm, memory, opt;
};

calib::ThroughputCsv planted_csv(const std::vector<Planted>& rows, const train::ShapedMultipliers& truth,
                                 std::vector<calib::ThroughputCase>& cases) {
  calib::ThroughputCsv csv;
  csv.file = "planted.csv";
  int line = 1;
  for (const auto& p : rows) {
    calib::ThroughputCase c;
    c.modelled = true;
    c.times.conv_s = p.conv;
    c.times.linear_s = p.gemm;
    c.times.memory_s = p.memory;
    c.times.optimizer_s = p.opt;
    cases.push_back(c);
    calib::ThroughputRow r;
    r.line = ++line;
    r.dataset = p.dataset;
    r.batch = 1;
    r.throughput = 1 / shaped_total(c.times, truth);  // step = 1 sample / throughput
    csv.rows.push_back(r);
  }
  return csv;
}

}  // namespace

TEST_CASE("calib::fit_throughput: planted multipliers come back, leave one dataset out, bounds") {
  train::ShapedMultipliers truth;
  truth.conv = 1.3;
  truth.linear = truth.attention = 0.8;
  truth.memory = truth.score_memory = 1.7;
  SUBCASE("three datasets of exact rows: every fit, held out or not, gives the planted values") {
    std::vector<calib::ThroughputCase> cases;
    const auto csv = planted_csv({{"a", 1, 2, 3, 0.1},
                                  {"a", 2, 0, 1, 0},
                                  {"b", 0, 3, 1, 0.2},
                                  {"b", 1, 1, 1, 0},
                                  {"c", 4, 1, 0.5, 0},
                                  {"c", 0.5, 0.5, 2, 0.3}},
                                 truth, cases);
    const auto fit = calib::fit_throughput(csv, cases);
    CHECK(fit.values.conv == doctest::Approx(1.3).epsilon(1e-9));
    CHECK(fit.values.linear == doctest::Approx(0.8).epsilon(1e-9));
    CHECK(fit.values.memory == doctest::Approx(1.7).epsilon(1e-9));
    CHECK(fit.all.points == 6);
    CHECK(fit.all.max_abs < 1e-9);
    REQUIRE(fit.datasets.size() == 3);
    for (const auto& d : fit.datasets) {
      CHECK(d.rows == 2);
      CHECK(d.held_out.points == 2);
      CHECK(d.held_out.max_abs < 1e-9);
      CHECK(d.held_out_fixed.empty());
    }
  }
  SUBCASE("leaving one network out within a dataset: exact rows, any three of them full rank") {
    std::vector<calib::ThroughputCase> cases;
    auto csv =
        planted_csv({{"a", 1, 2, 3, 0}, {"a", 2, 0, 1, 0}, {"a", 0, 3, 1, 0.1}, {"a", 1, 1, 2, 0}}, truth, cases);
    for (std::size_t i = 0; i < csv.rows.size(); ++i) csv.rows[i].model = "net" + std::to_string(i);
    const auto fit = calib::fit_throughput(csv, cases);
    REQUIRE(fit.datasets.size() == 1);
    CHECK(fit.datasets[0].networks == 4);
    CHECK(fit.datasets[0].network_out.points == 4);
    CHECK(fit.datasets[0].network_out.max_abs < 1e-9);
    CHECK(fit.datasets[0].network_out_fixed.empty());
    // Two rows of one network: predicted together from the other two (still full rank? no: 2 rows,
    // 3 multipliers; the minimum-norm fit is not the planted one, so the error is not 0).
    csv.rows[1].model = "net0";
    const auto fit2 = calib::fit_throughput(csv, cases);
    CHECK(fit2.datasets[0].networks == 3);
    CHECK(fit2.datasets[0].network_out.points == 4);
    CHECK(fit2.datasets[0].network_out.max_abs > 1e-3);
  }
  SUBCASE("a kind no training row has is held at 1; an excluded row is shown but not fitted") {
    std::vector<calib::ThroughputCase> cases;
    // Dataset b alone has convolutions: held out, the others cannot fit conv (held at 1).
    auto csv = planted_csv(
        {{"a", 0, 2, 3, 0}, {"a", 0, 1, 1, 0}, {"b", 2, 1, 1, 0}, {"b", 1, 3, 1, 0}, {"a", 0, 1, 9, 0}}, truth, cases);
    csv.rows[4].excluded = "planted outlier";
    csv.rows[4].throughput *= 3;
    const auto fit = calib::fit_throughput(csv, cases);
    CHECK(fit.all.points == 4);
    CHECK(fit.values.memory == doctest::Approx(1.7).epsilon(1e-9));
    CHECK(!std::isnan(fit.model_s[4]));  // modelled, for the table
    REQUIRE(fit.datasets.size() == 2);
    CHECK(fit.datasets[0].excluded == 1);
    CHECK(fit.datasets[1].held_out_values.conv == 1);
    REQUIRE(fit.datasets[1].held_out_fixed.size() == 1);
    CHECK(fit.datasets[1].held_out_fixed[0].find("conv (held at 1") == 0);
  }
  SUBCASE("a negative free fit is held at 0 and the rest refitted") {
    // measured = gemm only, but conv features that anti-correlate: conv's free fit is negative.
    calib::ThroughputCsv csv;
    std::vector<calib::ThroughputCase> cases;
    const double conv[] = {1, 2, 3}, gemm[] = {3, 2, 1}, meas[] = {2, 1, 0.1};
    for (int i = 0; i < 3; ++i) {
      calib::ThroughputCase c;
      c.modelled = true;
      c.times.conv_s = conv[i];
      c.times.linear_s = gemm[i];
      cases.push_back(c);
      calib::ThroughputRow r;
      r.dataset = "a";
      r.batch = 1;
      r.throughput = 1 / meas[i];
      csv.rows.push_back(r);
    }
    const auto fit = calib::fit_throughput(csv, cases);
    CHECK(fit.values.conv == 0);
    CHECK(fit.values.linear > 0);
    REQUIRE(!fit.fixed.empty());
    CHECK(fit.fixed[0].find("conv (held at 0") == 0);
  }
  SUBCASE("a free fit below its lower bound is held at the bound and the rest refitted") {
    // The planted gemm multiplier 0.8 is below a bound of 0.95 (a GEMM ceiling): gemm is held at
    // 0.95 and conv and memory refitted on what is left; with the bound below 0.8 (0.7) the
    // planted values come back exactly (the bound does not bind).
    std::vector<calib::ThroughputCase> cases;
    const auto csv =
        planted_csv({{"a", 1, 2, 3, 0.1}, {"a", 2, 0, 1, 0}, {"b", 0, 3, 1, 0.2}, {"b", 1, 1, 1, 0}}, truth, cases);
    calib::ThroughputBounds bounds;
    bounds.lower = {0.95, 0.95, 0};
    bounds.why = {"a ceiling", "a ceiling", ""};
    const auto fit = calib::fit_throughput(csv, cases, bounds);
    CHECK(fit.values.linear == 0.95);
    CHECK(fit.values.conv >= 0.95);
    REQUIRE(fit.fixed.size() == 1);
    CHECK(fit.fixed[0] == "gemm (held at 0.95: a ceiling)");
    CHECK(fit.all.max_abs > 1e-3);  // no longer exact
    bounds.lower = {0.7, 0.7, 0};
    const auto free = calib::fit_throughput(csv, cases, bounds);
    CHECK(free.values.linear == doctest::Approx(0.8).epsilon(1e-9));
    CHECK(free.values.conv == doctest::Approx(1.3).epsilon(1e-9));
    CHECK(free.fixed.empty());
  }
}

TEST_CASE("app::calibrate_throughput: accumulated micro-batches and an optimizer sharded over a node's ranks") {
  // One row of a one-node FSDP run: a GPU's step of 6 sequences in micro-batches of 2 (3 passes),
  // its AdamW update on 1/8 of the parameters. Expected, from the same shaped model: the products
  // and the memory-bound work of one micro-batch of 2, times 3; the optimizer's pass over 1/8 of the
  // parameters. The same row without the two columns: one pass of 6, the optimizer over all of them.
  const std::string head =
      "dataset,source,model,gpu,precision,batch,seq,optimizer,attention,throughput,unit,micro_batch,shards,excluded,"
      "note\n";
  const auto csv =
      config::parse_throughput_csv(head + "d,s,mpt_125m,a100_sxm4_80gb,bf16,6,2048,adam,flash,100000,tokens/s,2,8,,\n" +
                                       "d,s,mpt_125m,a100_sxm4_80gb,bf16,6,2048,adam,flash,100000,tokens/s,,,,\n",
                                   "t.csv");
  REQUIRE(csv.rows.size() == 2);
  CHECK(csv.rows[0].micro_batch == 2);
  CHECK(csv.rows[0].shards == 8);
  CHECK(csv.rows[1].micro_batch == 0);
  CHECK(csv.rows[1].shards == 1);
  calib::GemmFitValues g;
  g.tile = train::GemmTile{128, 64};
  g.ceiling["sxm"]["fp16"] = calib::GemmCeiling{0.9, 1, ""};
  g.wave_overhead_s = 4e-6;
  g.launch_s = 5e-6;
  const auto out = app::calibrate_throughput(ffsim::testing::catalog(), csv, g);
  REQUIRE(out.cases.size() == 2);
  REQUIRE(out.cases[0].modelled);
  REQUIRE(out.cases[1].modelled);
  const auto& acc = out.cases[0].times;
  const auto& whole = out.cases[1].times;
  // The optimizer: 1/8 of the unsharded row's.
  CHECK(acc.optimizer_s == doctest::Approx(whole.optimizer_s / 8).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // The memory-bound work is linear in the samples: 3 passes of 2 = one of 6.
  CHECK(acc.memory_s == doctest::Approx(whole.memory_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // The products at the micro-batch's shapes: 3 times a micro-batch of 2 (M = 4096 tokens), which a
  // 12,288-token pass does not equal (wave quantisation and fixed costs per product).
  const auto net = config::parse_nn_model(*ffsim::testing::catalog().find(config::kNnModel, "mpt_125m"));
  train::ShapedStep step;
  step.samples = 2;
  step.act_bytes = 2;
  train::GemmParams gp = g.params("sxm", "fp16");
  gp.split_k_min = app::kSplitKMin;
  const auto one =
      train::shaped_step(train::layer_costs(net, 2048, true), step, train::ShapedGpu{108, 312e12, 2039e9}, gp);
  CHECK(acc.linear_s == doctest::Approx(3 * one.linear_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(acc.attention_s == doctest::Approx(3 * one.attention_s).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(acc.gemms == 3 * one.gemms);
  CHECK(acc.linear_s != doctest::Approx(whole.linear_s).epsilon(1e-6));
}

TEST_CASE("config::parse_throughput_csv: the columns, units and errors") {
  const std::string head =
      "dataset,source,model,gpu,precision,batch,seq,optimizer,attention,throughput,unit,excluded,note\n";
  SUBCASE("samples/s and tokens/s; excluded rows may be incomplete; quoted notes") {
    const auto csv = config::parse_throughput_csv(
        head + "d,s1,bert_large,a100_sxm4_80gb,fp16,32,512,adam,materialised,210,samples/s,,\"a, b\"\n" +
            "d,s2,bert_large,a100_sxm4_80gb,tf32,16,512,adam,flash,51200,tokens/s,,\n" +
            "e,s3,ssd,,,,,,,,,not in the zoo,\n",
        "t.csv");
    REQUIRE(csv.rows.size() == 3);
    CHECK(csv.rows[0].step_s() == doctest::Approx(32.0 / 210));
    CHECK(csv.rows[0].note == "a, b");
    CHECK_FALSE(csv.rows[0].flash_attention);
    // 16 sequences of 512 tokens at 51,200 tokens/s: 0.16 s.
    CHECK(csv.rows[1].step_s() == doctest::Approx(0.16));
    CHECK(csv.rows[1].flash_attention);
    CHECK(csv.rows[2].excluded == "not in the zoo");
    CHECK(csv.rows[2].line == 4);
  }
  SUBCASE("errors: file, line, column, expected, found") {
    const auto bad = [&](const std::string& row) { return config::parse_throughput_csv(head + row, "t.csv"); };
    CHECK_THROWS_WITH_AS(config::parse_throughput_csv("dataset,source\n", "t.csv"),
                         doctest::Contains("no column \"model\""), ConfigError);
    CHECK_THROWS_WITH_AS(bad("d,s,m,g,fp17,1,,sgd,,1,samples/s,,\n"), doctest::Contains("did you mean \"fp16\""),
                         ConfigError);
    CHECK_THROWS_WITH_AS(bad("d,s,m,g,fp16,0,,sgd,,1,samples/s,,\n"),
                         doctest::Contains("column batch: expected a positive number"), ConfigError);
    CHECK_THROWS_WITH_AS(bad("d,s,m,g,fp16,4,,sgd,,1,tokens/s,,\n"), doctest::Contains("needs the sequence length"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(bad("d,s,m,g,fp16,4,,lion,,1,samples/s,,\n"), doctest::Contains("column optimizer"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(bad("d,s,m,g\n"), doctest::Contains("line 2: expected 13 fields"), ConfigError);
    CHECK_THROWS_WITH_AS(config::parse_throughput_csv(head, "t.csv"), doctest::Contains("no rows"), ConfigError);
  }
}
