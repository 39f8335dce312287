// Tests of the capacity planner: Table III from counts x prices, power, performance,
// cost- and energy-performance, price books, comparisons and sweeps.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <string>

#include "config/catalog.hpp"
#include "config/scenario_doc.hpp"
#include "core/error.hpp"
#include "plan/design.hpp"
#include "plan/prices.hpp"
#include "plan/scenario.hpp"
#include "plan/sweep.hpp"

#include "test_catalog.hpp"

using namespace ffsim;
using namespace ffsim::plan;

namespace {

const config::Catalog& catalog() { return ffsim::testing::catalog(); }

std::string scenario_path(const std::string& name) { return std::string(FFSIM_SOURCE_DIR) + "/scenarios/" + name + ".json"; }

DesignPlan plan_of(const std::string& name) { return plan_design(load_scenario(scenario_path(name), catalog())); }

ScenarioSpec inline_scenario(const std::string& json) {
  return parse_scenario(config::Document::parse(json, "t.json", false), catalog());
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.file() + ":" + e.pointer() + "|" + e.message();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// The Table III price book's per-unit prices, read back from the catalog (so the tests below check
// the planner's arithmetic, not a retyped answer).
struct Prices {
  double sw, chassis, cable, pcie_node, dgx_node;
};
Prices table3_prices() {
  const PriceBook b = parse_price_book(*catalog().find(kPriceBook, "table3_relative"), catalog());
  hw::NodeSpec pcie, dgx;
  pcie.name = "fire_flyer_pcie";
  pcie.price = config::parse_node(*catalog().find("node", "fire_flyer_pcie"), catalog()).price;
  dgx.name = "dgx_a100";
  dgx.price = config::parse_node(*catalog().find("node", "dgx_a100"), catalog()).price;
  return {b.switch_price("qm8700"), b.chassis_price("cs8500"), b.cable_price("host_leaf"), b.node_price(pcie),
          b.node_price(dgx)};
}

}  // namespace

TEST_CASE("plan: Table III switch counts come from the generators") {
  // Fire-Flyer 2 at Table III's size: 2 zones x (40 leaves + 20 spines) + 2 inter-zone switches.
  const DesignPlan ff = plan_of("table3-fire-flyer-2");
  CHECK(ff.gpus == 10000);
  CHECK(ff.counts.switches == 2 * (40 + 20) + 2);
  CHECK(ff.counts.access_points == 1600);
  // PCIe three-layer, 1,600 access points: 4 pods x (20 + 20) + 4 x 400 / 40 = 40 core.
  const DesignPlan p3 = plan_of("pcie-3layer");
  CHECK(p3.counts.access_points == 1600);
  CHECK(p3.counts.switches == 4 * 40 + 40);
  // DGX three-layer, 10,000 access points: 25 pods x 40 + core for 32 pods (32 x 400 / 40 = 320).
  const DesignPlan dgx = plan_of("dgx-a100-cluster");
  CHECK(dgx.counts.access_points == 10000);
  CHECK(dgx.counts.switches == 25 * 40 + 320);
  // As built, with 180 dual-homed storage nodes and 1,200 GPU nodes: still 122 switches.
  const DesignPlan built = plan_of("fire-flyer-2");
  CHECK(built.counts.switches == 122);
  CHECK(built.counts.endpoints == 1200 + 2 * 180);
}

TEST_CASE("plan: Table III costs are counts x per-unit prices") {
  const Prices p = table3_prices();
  // Fire-Flyer 2: 2 chassis + 2 standalone switches + (1,250 host + 2 x 2 x 10 inter-zone) cables; servers 1,250 nodes.
  const DesignPlan ff = plan_of("table3-fire-flyer-2");
  REQUIRE(ff.cost);
  CHECK(ff.cost->network() == doctest::Approx(2 * p.chassis + 2 * p.sw + (1250 + 40) * p.cable).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(ff.cost->servers() == doctest::Approx(1250 * p.pcie_node).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // PCIe three-layer: 200 switches + 1,250 host + 1,600 leaf-spine + 1,600 spine-core cables.
  const DesignPlan p3 = plan_of("pcie-3layer");
  CHECK(p3.cost->network() == doctest::Approx(200 * p.sw + (1250 + 3200) * p.cable).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // DGX three-layer: 1,320 switches + 3 x 10,000 cables; servers 1,250 DGX nodes.
  const DesignPlan dgx = plan_of("dgx-a100-cluster");
  CHECK(dgx.cost->network() == doctest::Approx(1320 * p.sw + 30000 * p.cable).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(dgx.cost->servers() == doctest::Approx(1250 * p.dgx_node).epsilon(1e-12).scale(ffsim::testing::kRelative));

  // Consistency with Table III (the prices were fitted to its network column; see the price book):
  // network 350 / 600 / 4,000, servers 11,250 / 11,250 / 19,000, totals 11,600 / 11,850 / 23,000.
  CHECK(ff.cost->network() == doctest::Approx(350).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(p3.cost->network() == doctest::Approx(600).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(dgx.cost->network() == doctest::Approx(4000).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(ff.cost->servers() == doctest::Approx(11250).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(p3.cost->servers() == doctest::Approx(11250).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(dgx.cost->servers() == doctest::Approx(19000).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(ff.cost->total() == doctest::Approx(11600).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(p3.cost->total() == doctest::Approx(11850).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(dgx.cost->total() == doctest::Approx(23000).epsilon(1e-9).scale(ffsim::testing::kRelative));
  // The frame switch is what makes Fire-Flyer's network cheap: a zone as 60 discrete switches and
  // 1,600 cables would cost more than its chassis.
  CHECK(p.chassis < 60 * p.sw + 1600 * p.cable);
}

TEST_CASE("plan: the PCIe node against the DGX node: 1.38 cost-performance, 40% less energy") {
  const DesignPlan ff = plan_of("table3-fire-flyer-2");
  const DesignPlan dgx = plan_of("dgx-a100-cluster");
  const Relative r = compare(ff, dgx);
  CHECK(r.baseline == "dgx-a100-cluster");
  // TF32 GEMM 107 / 131 = 0.817 performance at 9 / 15.2 = 0.592 price -> 0.817 / 0.592 = 1.3795.
  CHECK(r.node_performance == doctest::Approx(107.0 / 131.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
  REQUIRE(r.node_price);
  CHECK(*r.node_price == doctest::Approx(9.0 / 15.2).epsilon(1e-12).scale(ffsim::testing::kRelative));
  REQUIRE(r.node_cost_performance);
  CHECK(*r.node_cost_performance == doctest::Approx(1.38).epsilon(0.01 / 1.38).scale(ffsim::testing::kRelative));
  // Node power 2,500 W vs 4,200 W: 1 - 2,500 / 4,200 = 40.5% less energy per node.
  REQUIRE(r.node_power_saving);
  CHECK(*r.node_power_saving == doctest::Approx(1.0 - 2500.0 / 4200.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(*r.node_power_saving == doctest::Approx(0.40).epsilon(0.05).scale(ffsim::testing::kRelative));
  // Whole designs with their networks: (1,070,000 TFLOPS / 11,600) / (1,310,000 / 23,000) = 1.6195.
  REQUIRE(r.cost_performance);
  CHECK(*r.cost_performance == doctest::Approx((1070000.0 / 11600.0) / (1310000.0 / 23000.0)).epsilon(1e-9).scale(ffsim::testing::kRelative));
  // The baseline against itself is 1.
  CHECK(*compare(dgx, dgx).node_cost_performance == doctest::Approx(1.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

TEST_CASE("plan: power, performance and their ratios") {
  const DesignPlan ff = plan_of("table3-fire-flyer-2");
  // 1,250 nodes x 2,500 W + 122 switches x 253 W (QM8700) = 3,125,000 + 30,866 W.
  REQUIRE(ff.power.total());
  CHECK(ff.power.total()->si() == doctest::Approx(1250 * 2500.0 + 122 * 253.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(ff.power_per_gpu()->si() == doctest::Approx((1250 * 2500.0 + 122 * 253.0) / 10000).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // 10,000 GPUs x 107 TFLOPS measured TF32 GEMM.
  CHECK(ff.gemm_measured);
  CHECK(ff.performance().si() == doctest::Approx(10000 * 107e12).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // Energy-performance: TFLOPS per kW; cost-performance: TFLOPS per price unit.
  CHECK(*ff.energy_performance() == doctest::Approx(10000 * 107.0 / ((1250 * 2500.0 + 122 * 253.0) / 1000)).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(*ff.cost_performance() == doctest::Approx(10000 * 107.0 / ff.cost->total()).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // As built, storage nodes draw 180 x 700 W too.
  const DesignPlan built = plan_of("fire-flyer-2");
  CHECK(built.power.storage_nodes->si() == doctest::Approx(180 * 700.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(built.power.total()->si() == doctest::Approx(1200 * 2500.0 + 180 * 700.0 + 122 * 253.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // fp16 instead of tf32: 220 TFLOPS measured per PCIe A100.
  PlanOptions o;
  o.precision = "fp16";
  CHECK(plan_design(load_scenario(scenario_path("table3-fire-flyer-2"), catalog()), o).gemm_per_gpu.si() == 220e12);
  o.precision = "fp8";
  CHECK(error_of([&] { (void)plan_design(load_scenario(scenario_path("table3-fire-flyer-2"), catalog()), o); }) ==
        "GPU model \"a100_pcie_40gb\" has no fp8 rate; it has bf16, fp16, fp32, fp64, tf32");
}

TEST_CASE("plan: the Sec. IX and DeepSeek-V3 multi-plane designs") {
  // 4 planes x (128 + 64) switches for 4 x 8,192 = 32,768 GPUs; 8 planes x (64 + 32) for 16,384.
  const DesignPlan next = plan_of("fire-flyer-next");
  CHECK(next.gpus == 32768);
  CHECK(next.counts.planes == 4);
  CHECK(next.counts.layers == 2);
  CHECK(next.counts.switches == 4 * (128 + 64));
  CHECK_FALSE(next.cost);  // no price book covers 400G parts
  CHECK_FALSE(next.gemm_measured);
  const DesignPlan v3 = plan_of("deepseek-v3-mpft");
  CHECK(v3.gpus == 16384);
  CHECK(v3.counts.planes == 8);
  CHECK(v3.counts.switches == 8 * (64 + 32));
  // Without prices on one side there is no cost ratio, but power and performance still compare.
  const Relative r = compare(next, v3);
  CHECK_FALSE(r.cost_performance);
  CHECK(r.performance == doctest::Approx(2.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

TEST_CASE("plan: an inline price book in a currency") {
  // 100 PCIe nodes on a two-layer tree of 40-port switches: 5 leaves + 20 spines, 100 host cables,
  // 5 x 20 leaf-spine cables with 2 optics each.
  const ScenarioSpec s = inline_scenario(R"({"name": "usd", "cluster": {"node": "fire_flyer_pcie", "nodes": 100},
    "fabric": {"topology": "two_layer", "switch": "qm8700"},
    "price_book": {"unit": "USD", "nodes": {"fire_flyer_pcie": 150000}, "switches": {"qm8700": 20000},
                   "cables": {"host_leaf": 100, "leaf_spine": 300}, "optic": 500}})");
  const DesignPlan d = plan_design(s);
  REQUIRE(d.cost);
  CHECK(d.cost->unit == "USD");
  CHECK(d.cost->price_book == "usd (inline)");
  CHECK(d.cost->switches == 25 * 20000.0);
  CHECK(d.cost->cables == 100 * 100.0 + 100 * 300.0);
  CHECK(d.cost->optics == 200 * 500.0);
  CHECK(d.cost->servers() == 100 * 150000.0);
  CHECK(d.cost->total() == 25 * 20000.0 + 100 * 100.0 + 100 * 300.0 + 200 * 500.0 + 100 * 150000.0);
  // Costs in different units do not compare.
  const Relative r = compare(d, plan_of("pcie-3layer"));
  CHECK_FALSE(r.node_price);
  CHECK_FALSE(r.cost);
  CHECK_FALSE(r.node_cost_performance);
  CHECK(r.node_power_saving);
}

TEST_CASE("plan: price book rejects") {
  const std::string head = R"({"name": "t", "cluster": {"node": "fire_flyer_pcie", "nodes": 100},
    "fabric": {"topology": "two_layer", "switch": "qm8700"}, "price_book": )";
  CHECK(error_of([&] { (void)inline_scenario(head + R"({"unit": "USD", "switches": {"qm8700": -1}}})"); }) ==
        "t.json:/price_book/switches/qm8700|expected a non-negative price, got number -1");
  CHECK(error_of([&] { (void)inline_scenario(head + R"({"unit": "USD", "switches": {"qm870": 1}}})"); }) ==
        "t.json:/price_book/switches/qm870|unknown switch model \"qm870\" (did you mean \"qm8700\"?); valid: qm8700, "
        "qm9700, switch_128x400g");
  CHECK(error_of([&] {
          (void)inline_scenario(head + R"({"unit": "USD", "nodes": {"fire_flyer_pcie": 1}, "switches": {"qm8700": 1},
            "cables": {"host_leaf": 1, "leaf_spine": 1}}})");
        }) == "t.json:/price_book|price book \"t (inline)\" has no price for optics (add \"optic\": the price of one "
              "transceiver)");
  CHECK(error_of([&] {
          (void)inline_scenario(head + R"({"unit": "USD", "nodes": {"fire_flyer_pcie": 1}, "switches": {"qm8700": 1},
            "cables": {"host_leaf": 1}, "optic": 0}})");
        }) == "t.json:/price_book/cables|price book \"t (inline)\" has no price for cables of kind \"leaf_spine\"; "
              "priced: host_leaf");
  CHECK(error_of([&] { (void)inline_scenario(head + R"({"unit": ""}})"); }) ==
        "t.json:/price_book/unit|expected the unit of the prices (e.g. \"USD\"), got an empty string");
  CHECK(error_of([&] { (void)inline_scenario(head + "3}"); }) ==
        "t.json:/price_book|expected the name of a price book in models/ or an inline price book object, got number 3");
  // A missing price of a catalog book is reported where the scenario names the book.
  CHECK(error_of([&] {
          (void)inline_scenario(R"({"name": "t", "cluster": {"node": "h800_8x400g", "nodes": 10},
            "fabric": {"topology": "two_layer", "switch": "qm9700"}, "price_book": "table3_relative"})");
        }) == "t.json:/price_book|price book \"table3_relative\" (" + std::string(FFSIM_MODELS_DIR) +
                  "/prices/table3_relative.json) has no price for switch \"qm9700\" (did you mean \"qm8700\"?); "
                  "priced: qm8700");
}

TEST_CASE("plan::parse_knob: ranges, lists, aliases and paths") {
  const config::Document doc = config::load_scenario(scenario_path("pcie-3layer"));
  // 2000:32000:2000 -> (32,000 - 2,000) / 2,000 + 1 = 16 values, the stop included.
  const Knob k = parse_knob("gpus=2000:32000:2000", doc);
  CHECK(k.values.size() == 16);
  CHECK(k.values.front() == 2000);
  CHECK(k.values.back() == 32000);
  CHECK(k.pointer() == "/cluster/gpus");
  CHECK(k.clear == std::vector<std::vector<std::string>>{{"cluster", "nodes"}});
  // A stop that the steps miss is not included: 1, 1.5, 2 (2.2 is beyond).
  CHECK(parse_knob("fabric.oversubscription=1:2.2:0.5", doc).values == std::vector<double>{1, 1.5, 2});
  CHECK(parse_knob("nodes=5,7,9", doc).values == std::vector<double>{5, 7, 9});
  CHECK(parse_knob("core_sizing=1", doc).pointer() == "/fabric/core_sizing");  // a key of the fabric section
  CHECK(error_of([&] { (void)parse_knob("gpus", doc); }) ==
        "--sweep expects KNOB=START:STOP:STEP or KNOB=V1,V2,... (e.g. gpus=2000:32000:2000), got \"gpus\"");
  CHECK(error_of([&] { (void)parse_knob("gpus=1:2", doc); }) == "--sweep gpus: expected START:STOP:STEP, got \"1:2\"");
  CHECK(error_of([&] { (void)parse_knob("gpus=1:2:0", doc); }) == "--sweep gpus: the step must be positive, got 0");
  CHECK(error_of([&] { (void)parse_knob("gpus=9:2:1", doc); }) == "--sweep gpus: STOP (2) is below START (9)");
  CHECK(error_of([&] { (void)parse_knob("gpus=1,x", doc); }) == "--sweep gpus: expected a number, got \"x\"");
  CHECK(error_of([&] { (void)parse_knob("zones=1", doc); }) ==
        "unknown knob \"zones\": use gpus, nodes, storage, a key of the scenario's fabric or cluster section, or a "
        "dotted path such as fabric.oversubscription");
  CHECK(error_of([&] { (void)parse_knob("fabrc.zones=1", doc); }) ==
        "--sweep fabrc.zones: the scenario has no object \"fabrc\" (did you mean \"fabric\"?)");
}

TEST_CASE("plan::sweep: growth, the third layer, and where a design stops fitting") {
  const config::Document p3 = config::load_scenario(scenario_path("pcie-3layer"));
  // 3,200 GPUs = 400 nodes: one pod, 2 layers; 3,208 GPUs = 401 nodes: 2 pods, a core: 3 layers.
  // 3,204 GPUs is not a multiple of 8: invalid at the knob's own pointer.
  const auto rows = sweep(p3, catalog(), parse_knob("gpus=3200,3208,3204", p3));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].fits);
  CHECK(rows[0].plan->counts.layers == 2);
  CHECK(rows[0].plan->counts.switches == 40);
  CHECK(rows[0].note.empty());
  CHECK(rows[1].plan->counts.layers == 3);
  CHECK(rows[1].note == "now 3 layers");
  // The 3,208-GPU row by hand (src/topo/three_layer.cpp: k = 40 ports, a pod is always k/2 = 20
  // leaves of 20 hosts under k/2 = 20 spines, each spine k/2 = 20 links up; "exact" core sizing):
  // P = ceil(401 / 400) = 2 pods; cores = P x 20 spines x 20 uplinks / 40 ports = 20;
  // switches = P x (20 + 20) + 20 = 100; cables = 401 host + P x 20 x 20 leaf-spine (800)
  // + P x 20 x 20 spine-core (800) = 2,001.
  CHECK(rows[1].plan->counts.switches == 100);
  CHECK(rows[1].plan->counts.cables == 2001);
  CHECK_FALSE(rows[2].fits);
  CHECK(rows[2].note == "invalid: 3204 GPUs is not a multiple of the 8 GPUs per node of \"fire_flyer_pcie\"");

  // Fire-Flyer's two zones hold 2 x (800 - 20) ports: 1,200 nodes + 360 storage ports fit, 1,210 do not.
  const config::Document ff = config::load_scenario(scenario_path("fire-flyer-2"));
  const auto z = sweep(ff, catalog(), parse_knob("nodes=1200,1210", ff));
  CHECK(z[0].fits);
  CHECK(z[0].plan->counts.switches == 122);
  CHECK_FALSE(z[1].fits);
  CHECK(z[1].gpus == 1210 * 8);
  CHECK(z[1].note ==
        "does not fit: zone 0: a two-layer fat-tree of 40-port switches at 20:20 holds at most 800 endpoints (40 "
        "leaves x 20 hosts); the cluster needs 805 (785 host ports + 20 inter-zone links)");

  // A misspelt key at the knob's path is a configuration error, not a row.
  CHECK(error_of([&] { (void)sweep(p3, catalog(), parse_knob("fabric.core_sizng=1", p3)); }).find(
            "unknown key \"core_sizng\" (did you mean \"core_sizing\"?)") != std::string::npos);
  // The sweep patches a copy: the document itself is unchanged.
  CHECK(parse_scenario(p3, catalog()).cluster.nodes == 1250);
  // Costs grow with the counts: every row is priced from its own counts and cluster; the switch
  // count never shrinks as GPUs grow.
  const Knob k = parse_knob("gpus=2000:20000:2000", p3);
  const auto g = sweep(p3, catalog(), k);
  int last_switches = 0;
  for (const auto& row : g) {
    CAPTURE(row.value);
    REQUIRE(row.fits);
    const ScenarioSpec at = parse_scenario(patch(p3, k, row.value), catalog());
    CHECK(row.plan->cost->total() == doctest::Approx(price_design(*at.prices, at.cluster, row.plan->counts).total()).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(row.plan->counts.switches >= last_switches);
    last_switches = row.plan->counts.switches;
  }
}
