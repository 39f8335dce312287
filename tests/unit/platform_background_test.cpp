// Tests of background traffic (platform/background.hpp): its flows, and how they share a NIC with
// a collective's flow under the three arbitrations of `ffsim collective --background`, on both
// engines. Expectations are derived from weighted max-min sharing (platform/traffic.hpp).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "app/collective_table.hpp"
#include "app/engines.hpp"
#include "coll/collective.hpp"
#include "config/background_reader.hpp"
#include "config/coll_reader.hpp"
#include "core/error.hpp"
#include "eval/engine.hpp"
#include "plan/scenario.hpp"
#include "platform/background.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using sched::Place;
using sched::TrafficClass;

namespace {

const config::Catalog& catalog() { return ffsim::testing::catalog(); }

// A small Fire-Flyer: 8 nodes on a two-layer tree and 2 storage nodes, with the lanes of
// scenarios/fire-flyer-2.json (hfreduce and nccl weight 4, storage and other weight 1).
plan::ScenarioSpec small_ff() {
  const std::string text = R"({"name": "small", "cluster": {"node": "fire_flyer_pcie", "nodes": 8,
      "storage": {"node": "fire_flyer_storage", "count": 2}},
      "fabric": {"topology": "two_layer", "switch": "qm8700"},
      "traffic": {"isolation": true,
      "service_levels": {"hfreduce": 1, "nccl": 2, "storage": 3, "other": 0},
      "virtual_lanes": [{"service_levels": [0], "weight": 1}, {"service_levels": [1, 2], "weight": 4},
                        {"service_levels": [3], "weight": 1}]}})";
  return plan::parse_scenario(config::Document::parse(text, "small.json", false), catalog());
}

std::unique_ptr<platform::Platform> platform_for(const plan::ScenarioSpec& sc, app::Arbitration a) {
  plan::ScenarioSpec s = sc;
  s.traffic = app::arbitration_traffic(sc.traffic, a);
  return plan::make_platform(s);
}

platform::BackgroundSpec one_stream(int first, int nodes, double rate, int targets = 1) {
  platform::BackgroundSpec b;
  b.file = "bg.json";
  b.name = "bg";
  platform::BackgroundStream st;
  st.name = "checkpoint";
  st.first_node = first;
  st.nodes = nodes;
  st.rate_per_node = rate;
  st.targets_per_node = targets;
  b.streams.push_back(st);
  return b;
}

constexpr double kS = 184.0 * 1048576.0;  // 184 MiB: ~10 ms on a NIC, against us of latency
constexpr double kEps = 1e-12;            // PlatformOptions::arbitration_latency (weight-1 delay)
constexpr double kHorizon = 1.0;          // s: far longer than the collective flow

// The smallest capacity on a path (one direction of each resource in use: no PcieBidir binds).
double path_min(const platform::Platform& p, std::uint32_t pid) {
  double c = std::numeric_limits<double>::infinity();
  for (std::uint32_t r : p.path(pid).resources) c = std::min(c, p.resource(r).capacity_when(false, false));
  return c;
}

struct Shared {
  double collective_end = 0, background_end = 0;
};

// One collective-class flow n0 -> n1 (DRAM on each NIC's socket, class `cls`) beside a background
// of node 0 writing to storage, on engine `engine`.
Shared run_pair(const char* engine, const platform::Platform& p, const platform::BackgroundSpec& bg,
                TrafficClass cls = TrafficClass::HFReduce) {
  sched::Schedule s;
  s.transfer(platform::storage_client_dram(p, 0), platform::storage_client_dram(p, 1), Bytes(kS), cls);
  const auto ops = platform::add_background(s, p, bg, kHorizon);
  const eval::Result r = app::make_engine(engine)->run(s, p);
  Shared out{r.ops[0].end, std::numeric_limits<double>::infinity()};
  for (auto o : ops) out.background_end = std::min(out.background_end, r.ops[o].end);
  return out;
}

// The collective flow's end when it shares a bottleneck of capacity C with the background, at
// `share` x C while both run and at C alone (derivation in the first test case).
double expected_end(const platform::Platform& p, double share, double alone_rate) {
  const std::uint32_t pc = p.path_id(platform::storage_client_dram(p, 0), platform::storage_client_dram(p, 1));
  const std::uint32_t pb = p.path_id(platform::storage_client_dram(p, 0), Place::storage_disk(0));
  const double w_c = p.traffic().weight(TrafficClass::HFReduce), w_b = p.traffic().weight(TrafficClass::Storage);
  const double a = p.path(pc).latency + kEps / w_c;  // the collective flow starts moving data
  const double b = p.path(pb).latency + kEps / w_b;  // the background flow does
  // Before b the collective flow runs alone (at alone_rate); from b on at its share.
  if (b <= a) return a + kS / share;
  return b + (kS - alone_rate * (b - a)) / share;
}

}  // namespace

TEST_CASE(
    "background: a collective flow and a checkpoint flow share node 0's NIC by their weights, 4:1, 1:1, one lane") {
  // Node 0 sends kS to node 1 (class hfreduce) while it writes to storage node 0 (class storage).
  // Both leave through n0's one NIC; their paths share n0's DRAM (160 GB/s), the NIC's root port
  // (27 GB/s, [I] models/nodes/fire_flyer_pcie.json) and the NIC's send side (HDR: 25 GB/s line,
  // the least of the three): the NIC binds both (checked below). Weighted max-min on one shared
  // bottleneck of capacity C gives each flow w_i / sum(w) of C while no cap binds:
  //   scenario weights 4 : 1 -> collective 0.8 C, background 0.2 C;
  //   equal weights    1 : 1 -> 0.5 C each; no isolation: one lane, weight 1 each -> 0.5 C each.
  // The background's cap here (1 TB/s) never binds, and it outlasts the collective flow
  // (kHorizon = 1 s of data at its cap), so the collective's time is its start plus kS / share
  // (the flows start at their paths' latencies plus arbitration delays, us apart: expected_end).
  const auto sc = small_ff();
  const auto bg = one_stream(0, 1, 1e12);
  const auto ps = platform_for(sc, app::Arbitration::Scenario);
  const auto pe = platform_for(sc, app::Arbitration::Equal);
  const auto pn = platform_for(sc, app::Arbitration::None);
  const std::uint32_t pc = ps->path_id(platform::storage_client_dram(*ps, 0), platform::storage_client_dram(*ps, 1));
  const std::uint32_t pb = ps->path_id(platform::storage_client_dram(*ps, 0), Place::storage_disk(0));
  // The premise: the NIC's send side is the least resource of both paths, and the same one.
  std::uint32_t nic = platform::kNoResource;
  for (std::uint32_t r : ps->path(pc).resources)
    if (ps->resource(r).kind == platform::ResourceKind::Nic && nic == platform::kNoResource) nic = r;
  REQUIRE(nic != platform::kNoResource);
  const double C = ps->resource(nic).capacity;
  CHECK(std::count(ps->path(pb).resources.begin(), ps->path(pb).resources.end(), nic) == 1);
  CHECK(path_min(*ps, pc) == C);
  CHECK(path_min(*ps, pb) == C);
  CHECK(C == doctest::Approx(24e9).epsilon(0.05));  // HDR payload: 25 GB/s line (fire-flyer-facts.md section 2)

  for (const char* engine : {"fluid", "simgrid"}) {
    CAPTURE(engine);
    // SimGrid moves whole units of 1/1024 byte and solves to 1e-12 (src/sim/simgrid_engine.cpp);
    // its times agree with the fluid engine's to 1e-6 relative in the platform's engine tests: the
    // tolerance here. The fluid engine solves the same max-min exactly: 1e-9.
    const double tol = std::string(engine) == "fluid" ? 1e-9 : 1e-6;
    const Shared s = run_pair(engine, *ps, bg), e = run_pair(engine, *pe, bg), n = run_pair(engine, *pn, bg);
    CHECK(s.collective_end ==
          doctest::Approx(expected_end(*ps, 0.8 * C, C)).epsilon(tol).scale(ffsim::testing::kRelative));
    CHECK(e.collective_end ==
          doctest::Approx(expected_end(*pe, 0.5 * C, C)).epsilon(tol).scale(ffsim::testing::kRelative));
    CHECK(n.collective_end ==
          doctest::Approx(expected_end(*pn, 0.5 * C, C)).epsilon(tol).scale(ffsim::testing::kRelative));
    // Per-flow weights: lanes of equal weight share as one lane does.
    CHECK(e.collective_end == doctest::Approx(n.collective_end).epsilon(tol).scale(ffsim::testing::kRelative));
    // Every background flow outlasts the collective and its horizon (it never beats its cap).
    for (const Shared& x : {s, e, n}) {
      CHECK(x.background_end > x.collective_end);
      CHECK(x.background_end >= kHorizon);
    }
    // The slowdown against the flow alone (at C): 1 / 0.8 = 1.25 with the weights, 2 without.
    sched::Schedule alone;
    alone.transfer(platform::storage_client_dram(*ps, 0), platform::storage_client_dram(*ps, 1), Bytes(kS),
                   TrafficClass::HFReduce);
    const double t_alone = app::make_engine(engine)->run(alone, *ps).makespan;
    CHECK((s.collective_end - ps->path(pc).latency) / (t_alone - ps->path(pc).latency) ==
          doctest::Approx(1.25).epsilon(1e-3));
    CHECK((n.collective_end - ps->path(pc).latency) / (t_alone - ps->path(pc).latency) ==
          doctest::Approx(2.0).epsilon(1e-3));
  }
}

TEST_CASE("background: a binding cap leaves the collective the rest of the link") {
  // The background capped at 10 GiB/s (the checkpoint rate of fire-flyer-facts.md section 5):
  // with equal weights its fair share 0.5 C = 12 GB/s is above the cap, so max-min freezes it at
  // the cap and the collective takes the rest, C - 10 GiB/s; with 4 : 1 its share 0.2 C = 4.8 GB/s
  // is below the cap, which then changes nothing (0.8 C as in the case above).
  const auto sc = small_ff();
  const double cap = 10.0 * 1073741824.0;
  const auto bg = one_stream(0, 1, cap);
  const auto ps = platform_for(sc, app::Arbitration::Scenario);
  const auto pe = platform_for(sc, app::Arbitration::Equal);
  const std::uint32_t pc = ps->path_id(platform::storage_client_dram(*ps, 0), platform::storage_client_dram(*ps, 1));
  const double C = path_min(*ps, pc);
  REQUIRE(0.5 * C > cap);
  REQUIRE(0.2 * C < cap);
  for (const char* engine : {"fluid", "simgrid"}) {
    CAPTURE(engine);
    const double tol = std::string(engine) == "fluid" ? 1e-9 : 1e-6;
    CHECK(run_pair(engine, *ps, bg).collective_end ==
          doctest::Approx(expected_end(*ps, 0.8 * C, C)).epsilon(tol).scale(ffsim::testing::kRelative));
    CHECK(run_pair(engine, *pe, bg).collective_end ==
          doctest::Approx(expected_end(*pe, C - cap, C)).epsilon(tol).scale(ffsim::testing::kRelative));
  }
}

TEST_CASE("background: several targets per node are several flows, each its own weight") {
  // Two flows of node 0 (to storage nodes 0 and 1), each of weight 1, against the collective's
  // one flow of weight 4 on the NIC: 4 / (4 + 1 + 1) = 2/3 of C for the collective.
  const auto sc = small_ff();
  const auto bg = one_stream(0, 1, 1e12, 2);
  const auto ps = platform_for(sc, app::Arbitration::Scenario);
  const std::uint32_t pc = ps->path_id(platform::storage_client_dram(*ps, 0), platform::storage_client_dram(*ps, 1));
  const double C = path_min(*ps, pc);
  sched::Schedule s;
  const auto ops = platform::add_background(s, *ps, bg, kHorizon);
  REQUIRE(ops.size() == 2);
  CHECK(s.op(ops[0]).to == Place::storage_disk(0));
  CHECK(s.op(ops[1]).to == Place::storage_disk(1));
  // Each flow is capped at its share of the node's rate and carries cap x horizon.
  CHECK(s.rate_cap(ops[0]) == 0.5e12);
  CHECK(s.op(ops[0]).amount == 0.5e12 * kHorizon);
  CHECK(s.op(ops[0]).cls == TrafficClass::Storage);
  CHECK(run_pair("fluid", *ps, bg).collective_end ==
        doctest::Approx(expected_end(*ps, 2.0 / 3.0 * C, C)).epsilon(1e-9).scale(ffsim::testing::kRelative));
}

TEST_CASE("background: writers are spread round-robin over the storage nodes, and reads run the other way") {
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  // 3 writers (an odd count) from node 5 onto 2 storage nodes: storage 0, 1, 0.
  sched::Schedule s;
  const auto ops = platform::add_background(s, *p, one_stream(5, 3, 1e9), 0.5);
  REQUIRE(ops.size() == 3);
  for (int j = 0; j < 3; ++j) {
    CAPTURE(j);
    CHECK(s.op(ops[static_cast<std::size_t>(j)]).at == platform::storage_client_dram(*p, 5 + j));
    CHECK(s.op(ops[static_cast<std::size_t>(j)]).to == Place::storage_disk(j % 2));
    CHECK(s.op(ops[static_cast<std::size_t>(j)]).amount == 1e9 * 0.5);
  }
  // fire_flyer_pcie's NIC hangs off cpu1 (models/nodes/fire_flyer_pcie.json: nic0 on cpu1.rp3).
  CHECK(platform::storage_client_dram(*p, 5) == Place::dram(5, 1));
  auto rd = one_stream(0, 1, 1e9);
  rd.streams[0].direction = platform::BackgroundDirection::Read;
  sched::Schedule r;
  const auto rops = platform::add_background(r, *p, rd, 1.0);
  CHECK(r.op(rops[0]).at == Place::storage_disk(0));
  CHECK(r.op(rops[0]).to == platform::storage_client_dram(*p, 0));
  CHECK(platform::background_rate(one_stream(5, 3, 1e9, 4)) == 3e9);
}

TEST_CASE("background: streams that do not fit the cluster are refused with the reason") {
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  CHECK(platform::background_fit(*p, one_stream(0, 8, 1e9)).stream == -1);  // every node: fits
  const auto over = platform::background_fit(*p, one_stream(7, 2, 1e9));    // nodes 7 and 8 of 0..7
  CHECK(over.stream == 0);
  CHECK(
      over.message ==
      "stream \"checkpoint\" needs compute nodes 7 to 8; the cluster has 8 (0 to 7); give at most 1 nodes from node 7");
  sched::Schedule s;
  CHECK_THROWS_AS((void)platform::add_background(s, *p, one_stream(7, 2, 1e9), 1.0), ValueError);
  CHECK_THROWS_AS((void)platform::add_background(s, *p, one_stream(0, 1, 1e9), 0.0), ValueError);
  // The reader's error points at the stream's node count.
  try {
    config::check_background_fits(one_stream(7, 2, 1e9), *p);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "bg.json");
    CHECK(e.pointer() == "/streams/0/nodes/value");
  }
  // A cluster without storage nodes has nothing to write to.
  const auto bare = plan::make_platform(ffsim::testing::cluster(2));
  const auto none = platform::background_fit(*bare, one_stream(0, 1, 1e9));
  CHECK(none.stream == 0);
  CHECK(none.message.find("the cluster has none") != std::string::npos);
}

TEST_CASE("background: the reader takes the shipped checkpoint storm") {
  const auto b =
      config::load_background(std::string(FFSIM_SOURCE_DIR) + "/scenarios/backgrounds/checkpoint-storm-128-nodes.json");
  REQUIRE(b.streams.size() == 1);
  CHECK(b.name == "checkpoint-storm-128-nodes");
  CHECK(b.streams[0].cls == TrafficClass::Storage);
  CHECK(b.streams[0].direction == platform::BackgroundDirection::Write);
  CHECK(b.streams[0].first_node == 0);
  CHECK(b.streams[0].nodes == 128);
  CHECK(b.streams[0].targets_per_node == 1);
  CHECK(b.streams[0].rate_per_node == 10.0 * 1073741824.0);  // 10 GiB/s
}

TEST_CASE("background: the arbitrations' traffic configurations") {
  const auto sc = small_ff();
  const auto s = app::arbitration_traffic(sc.traffic, app::Arbitration::Scenario);
  const auto e = app::arbitration_traffic(sc.traffic, app::Arbitration::Equal);
  const auto n = app::arbitration_traffic(sc.traffic, app::Arbitration::None);
  CHECK(s.weight(TrafficClass::HFReduce) == 4);
  CHECK(s.weight(TrafficClass::Storage) == 1);
  for (int c = 0; c < sched::kTrafficClasses; ++c) {
    CHECK(e.weight(static_cast<TrafficClass>(c)) == 1);
    CHECK(n.weight(static_cast<TrafficClass>(c)) == 1);
  }
  CHECK(e.isolation);
  CHECK(!n.isolation);
}

TEST_CASE("background: a 16-GPU HFReduce beside a storm of its own 2 nodes, on the app service, both engines") {
  // The collective alone does not depend on the weights (all its flows carry one class, so weights
  // 4 and 1 give the same max-min rates; only the arbitration delays, 1e-12 s / weight per op on
  // its critical path, differ): the row's alone time is run once. Beside the storm, the scenario's
  // weights favour the collective 4 : 1, so it is slowed less than with equal weights, which equal
  // no isolation (per-flow weights); a storm on nodes the collective does not use shares no
  // resource of its nodes and, on this non-blocking tree, slows it by no more than the arbitration.
  const auto sc = small_ff();
  app::CollectiveRequest req;
  req.algos = {"hfreduce"};
  req.gpus = {16};
  req.sizes = {8.0 * 1048576.0};
  req.threads = 1;
  req.background = one_stream(0, 2, 100e9);  // greedy: more than the NIC, so it always contends there
  std::vector<app::CollectiveRow> by_engine;
  for (const char* engine : {"fluid", "simgrid"}) {
    CAPTURE(engine);
    const app::EngineChoice ch = app::choose_engine(engine, app::Analytic::Fluid);
    const app::CollectiveResult res = app::run_collective(sc, catalog(), ch, req);
    REQUIRE(res.rows.size() == 1);
    const app::CollectiveRow& r = res.rows[0];
    REQUIRE(r.beside.size() == 3);
    CHECK(r.cls == TrafficClass::HFReduce);
    const auto& s = r.beside[0];
    const auto& e = r.beside[1];
    const auto& n = r.beside[2];
    CHECK(s.collective_weight == 4);
    CHECK(s.background_weight == 1);
    CHECK(e.collective_weight == 1);
    CHECK(s.slowdown > 1.0);
    CHECK(e.slowdown > s.slowdown);
    CHECK(e.time == doctest::Approx(n.time).epsilon(1e-9).scale(ffsim::testing::kRelative));
    for (const auto& b : r.beside) {
      CHECK(b.background_end > b.time);
      CHECK(b.horizon >= 4 * r.time);
      CHECK(b.slowdown == doctest::Approx(b.time / r.time).epsilon(1e-12).scale(ffsim::testing::kRelative));
    }
    // Alone, the equal-weight platform gives the same time (the row's alone run is the scenario's).
    const auto pe = platform_for(sc, app::Arbitration::Equal);
    const auto algo = coll::algorithms().get("hfreduce").factory();
    const auto lib = config::load_library_params(catalog());
    const auto g = coll::Group::first_gpus(*pe, 16);
    const double t_eq = algo->simulate_full(*app::make_engine(engine), *pe, lib, g, req.sizes[0]);
    CHECK(t_eq == doctest::Approx(r.time).epsilon(1e-6).scale(ffsim::testing::kRelative));
    by_engine.push_back(r);
  }
  // Both engines solve the same flows: their times agree to SimGrid's 1e-6 (see the first case).
  REQUIRE(by_engine.size() == 2);
  CHECK(by_engine[1].time == doctest::Approx(by_engine[0].time).epsilon(1e-6).scale(ffsim::testing::kRelative));
  for (std::size_t a = 0; a < 3; ++a) {
    CAPTURE(a);
    CHECK(by_engine[1].beside[a].time ==
          doctest::Approx(by_engine[0].beside[a].time).epsilon(1e-6).scale(ffsim::testing::kRelative));
  }
  // A storm of nodes 4-7 (not the collective's 0-1) on the fluid engine.
  req.background = one_stream(4, 4, 10.0 * 1073741824.0);
  const app::CollectiveResult far =
      app::run_collective(sc, catalog(), app::choose_engine("fluid", app::Analytic::Fluid), req);
  for (const auto& b : far.rows[0].beside) CHECK(b.slowdown == doctest::Approx(1.0).epsilon(1e-6));
}
