// Tests of the platform (paths, lowering) and the two engines on the Fire-Flyer node and fabric.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "app/engines.hpp"
#include "config/catalog.hpp"
#include "core/error.hpp"
#include "eval/engine.hpp"
#include "plan/scenario.hpp"
#include "random_schedule.hpp"
#include "sim/simgrid_engine.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using namespace ffsim::literals;
using sched::Place;
using sched::TrafficClass;

namespace {

const config::Catalog& catalog() { return ffsim::testing::catalog(); }

// A small Fire-Flyer: 8 nodes on a two-layer tree, plus 2 storage nodes.
plan::ScenarioSpec small_ff(bool isolation = false) {
  std::string traffic = isolation ? R"(, "traffic": {"isolation": true,
      "service_levels": {"hfreduce": 1, "nccl": 2, "storage": 3, "other": 0},
      "virtual_lanes": [{"service_levels": [0], "weight": 1}, {"service_levels": [1, 2], "weight": 4},
                        {"service_levels": [3], "weight": 1}]})"
                                  : "";
  const std::string text = R"({"name": "small", "cluster": {"node": "fire_flyer_pcie", "nodes": 8,
      "storage": {"node": "fire_flyer_storage", "count": 2}},
      "fabric": {"topology": "two_layer", "switch": "qm8700"})" + traffic + "}";
  return plan::parse_scenario(config::Document::parse(text, "small.json", false), catalog());
}

eval::Result run(const char* engine, const sched::Schedule& s, const platform::Platform& p) {
  return app::make_engine(engine)->run(s, p);
}

// Both engines, and their agreement to 1e-6 relative on every op's end.
std::pair<eval::Result, eval::Result> both(const sched::Schedule& s, const platform::Platform& p) {
  auto a = run("analytic", s, p);
  auto b = run("simgrid", s, p);
  REQUIRE(a.ops.size() == b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    CAPTURE(i);
    CHECK(b.ops[i].end == doctest::Approx(a.ops[i].end).epsilon(1e-6).scale(ffsim::testing::kRelative));
  }
  return {std::move(a), std::move(b)};
}

using ffsim::testing::Rng;

constexpr double kS = 184.0 * 1048576.0;  // 184 MiB
constexpr double kEps = 1e-12;            // arbitration latency of weight-1 flows

}  // namespace

TEST_CASE("platform: one GPU's D2H runs at its PCIe rate, in both engines") {
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  sched::Schedule s;
  s.transfer(Place::gpu(0, 0), Place::dram(0, 0), Bytes(kS), TrafficClass::Other);
  const auto [a, b] = both(s, *p);
  // gpu0 -> cpu0.dram: GPU link 27 GB/s, root port 37.5 GB/s, DRAM 160 GB/s -> 27 GB/s;
  // latency: one PCIe traversal 1 us + arbitration 1e-12 s.
  CHECK(a.makespan == doctest::Approx(1e-6 + kEps + kS / 27e9).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(p->resource_label(a.ops[0].limiter) == "GPU gpu0 PCIe link, GPU->CPU");
}

TEST_CASE("platform: a transfer's own latency (Schedule::set_latency) replaces its path's, in both engines") {
  // The D2H above with its latency set to 5 us (longer than its path's 1 us) and to 0 (shorter):
  // each pays exactly that, then moves at 27 GB/s; a transfer beside them without one pays its
  // path's. Lowering reads it; a latency is only for transfers, finite and not negative.
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  for (const double own : {5e-6, 0.0}) {
    CAPTURE(own);
    sched::Schedule s;
    const auto t = s.transfer(Place::gpu(0, 0), Place::dram(0, 0), Bytes(kS), TrafficClass::Other);
    const auto u = s.transfer(Place::gpu(0, 1), Place::dram(0, 0), Bytes(1e6), TrafficClass::Other);
    CHECK(std::isnan(s.latency(t)));
    s.set_latency(t, own);
    CHECK(s.latency(t) == own);
    CHECK(std::isnan(s.latency(u)));
    platform::Lowered low;
    p->lower(s, t, low);
    CHECK(low.latency == own);
    p->lower(s, u, low);
    CHECK(low.latency == doctest::Approx(1e-6).epsilon(1e-12));
    const auto [a, b] = both(s, *p);
    // gpu1's 1 MB D2H shares no resource below its own link with gpu0's except DRAM (160 GB/s: not saturated).
    CHECK(a.ops[t].end == doctest::Approx(own + kEps + kS / 27e9).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(a.ops[u].end == doctest::Approx(1e-6 + kEps + 1e6 / 27e9).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  // Set out of the order the transfers were made in, and set again: each keeps its own, the last set.
  {
    sched::Schedule s;
    std::vector<sched::OpId> t;
    for (int i = 0; i < 4; ++i)
      t.push_back(s.transfer(Place::gpu(0, i), Place::dram(0, 0), Bytes(1), TrafficClass::Other));
    s.set_latency(t[2], 3e-6);
    s.set_latency(t[0], 1e-6);
    s.set_latency(t[3], 4e-6);
    s.set_latency(t[0], 0.5e-6);
    CHECK(s.latency(t[0]) == 0.5e-6);
    CHECK(std::isnan(s.latency(t[1])));
    CHECK(s.latency(t[2]) == 3e-6);
    CHECK(s.latency(t[3]) == 4e-6);
  }
  sched::Schedule s;
  const auto d = s.delay(Seconds(1));
  const auto t = s.transfer(Place::gpu(0, 0), Place::dram(0, 0), Bytes(1), TrafficClass::Other);
  CHECK_THROWS(s.set_latency(d, 1e-6));
  CHECK_THROWS(s.set_latency(t, -1e-6));
  CHECK_THROWS(s.set_latency(t, std::numeric_limits<double>::infinity()));
}

TEST_CASE("platform: all 8 GPUs' D2H at once: GPU5 and GPU6 share their root port") {
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  sched::Schedule s;
  for (int g = 0; g < 8; ++g) s.transfer(Place::gpu(0, g), Place::dram(0, g < 4 ? 0 : 1), Bytes(kS), TrafficClass::Other);
  const auto [a, b] = both(s, *p);
  // GPU5 and GPU6 share cpu1.rp1 (37.5 GB/s per direction and both directions together): 18.75 GB/s each.
  // The others run at their own 27 GB/s. DRAM cpu0 carries 4 x 27 = 108 <= 160; cpu1 27 + 37.5 + 27 = 91.5.
  for (int g = 0; g < 8; ++g) {
    CAPTURE(g);
    const double rate = (g == 5 || g == 6) ? 37.5e9 / 2 : 27e9;
    CHECK(a.ops[static_cast<std::size_t>(g)].end == doctest::Approx(1e-6 + kEps + kS / rate).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  CHECK(p->resource_label(a.ops[5].limiter).rfind("root port cpu1.rp1 (gpu5+gpu6)", 0) == 0);
}

TEST_CASE("platform: GPU5's D2H and GPU6's H2D at once share the bridge's bidirectional cap, then run alone") {
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  sched::Schedule s;
  const auto d2h = s.transfer(Place::gpu(0, 5), Place::dram(0, 1), Bytes(kS), TrafficClass::Other);
  const auto h2d = s.transfer(Place::dram(0, 1), Place::gpu(0, 6), Bytes(kS / 2), TrafficClass::Other);
  const auto [a, b] = both(s, *p);
  // cpu1.rp1 carries 37.5 GB/s per direction, and 33.9 GB/s in all while both directions carry
  // traffic (models/nodes/fire_flyer_pcie.json): 16.95 GB/s each (GPU links 27, DRAM 160 do not
  // bind). The H2D of S/2 ends after (S/2) / 16.95 GB/s; the D2H has S/2 left and runs alone at its
  // GPU link's 27 GB/s (one direction: the bidirectional cap no longer holds). Latency 1 us + 1e-12.
  const double t1 = 1e-6 + kEps + (kS / 2) / (33.9e9 / 2);
  CHECK(a.ops[h2d].end == doctest::Approx(t1).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(a.ops[d2h].end == doctest::Approx(t1 + (kS / 2) / 27e9).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(p->resource_label(a.ops[h2d].limiter) == "root port cpu1.rp1 (gpu5+gpu6), both directions at once");
  // Without the H2D the D2H runs at 27 GB/s from the start (the unidirectional case above).
  sched::Schedule alone;
  alone.transfer(Place::gpu(0, 5), Place::dram(0, 1), Bytes(kS), TrafficClass::Other);
  CHECK(run("analytic", alone, *p).makespan == doctest::Approx(1e-6 + kEps + kS / 27e9).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

TEST_CASE("platform: GPU->NIC peer-to-peer is capped near 9 GiB/s, node to node runs at the HDR rate") {
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  sched::Schedule s;
  const auto p2p = s.transfer(Place::gpu(0, 7), Place::gpu(1, 7), Bytes(kS), TrafficClass::Other);
  const auto net = s.transfer(Place::dram(2, 1), Place::dram(3, 1), Bytes(kS), TrafficClass::Other);
  const auto [a, b] = both(s, *p);
  // GPUDirect gpu7 -> remote gpu7: capped by Rome's GPU<->NIC peer-to-peer at 9 GiB/s.
  const double lat = p->path(p->path_id(Place::gpu(0, 7), Place::gpu(1, 7))).latency;
  CHECK(a.ops[p2p].end == doctest::Approx(lat + kEps + kS / (9.0 * 1073741824.0)).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(p->resource_label(a.ops[p2p].limiter) == "GPU->NIC peer-to-peer (root complex)");
  // DRAM to remote DRAM: the NIC's 24 GB/s payload rate binds (fabric links 25 GB/s).
  const double lat2 = p->path(p->path_id(Place::dram(2, 1), Place::dram(3, 1))).latency;
  CHECK(a.ops[net].end == doctest::Approx(lat2 + kEps + kS / 24e9).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(p->resource_label(a.ops[net].limiter) == "NIC nic0 send");
}

TEST_CASE("platform: weighted classes share 4:1 and the survivor takes the whole link, 1:1 without isolation") {
  for (bool iso : {true, false}) {
    CAPTURE(iso);
    const auto sc = small_ff(iso);
    const auto p = plan::make_platform(sc);
    sched::Schedule s;
    // Two flows from node 0's DRAM to node 1's DRAM through the same NIC: hfreduce (weight 4) and storage
    // (weight 1), 1 GB each. While both run, hfreduce gets 4/5 of 24 GB/s = 19.2 GB/s and storage 4.8 GB/s.
    const double X = 1e9, B = 24e9;
    const auto hf = s.transfer(Place::dram(0, 1), Place::dram(1, 1), Bytes(X), TrafficClass::HFReduce);
    const auto st = s.transfer(Place::dram(0, 1), Place::dram(1, 1), Bytes(X), TrafficClass::Storage);
    const auto [a, b] = both(s, *p);
    const double lat = p->path(p->path_id(Place::dram(0, 1), Place::dram(1, 1))).latency;
    if (iso) {
      // hfreduce ends after X / (0.8 B); storage then has X - 0.2 B * X/(0.8 B) = 0.75 X left at full B.
      const double t1 = X / (0.8 * B);
      CHECK(a.ops[hf].end == doctest::Approx(lat + kEps / 4 + t1).epsilon(1e-9).scale(ffsim::testing::kRelative));
      CHECK(a.ops[st].end == doctest::Approx(lat + kEps + t1 + 0.75 * X / B).epsilon(1e-9).scale(ffsim::testing::kRelative));
    } else {
      // Equal shares: both end together after 2X / B.
      CHECK(a.ops[hf].end == doctest::Approx(lat + kEps + 2 * X / B).epsilon(1e-9).scale(ffsim::testing::kRelative));
      CHECK(a.ops[st].end == doctest::Approx(lat + kEps + 2 * X / B).epsilon(1e-9).scale(ffsim::testing::kRelative));
    }
  }
}

TEST_CASE("engines: a DAG of compute, delays, reduces and transfers agrees in both engines") {
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  sched::Schedule s;
  // Chain: compute 2 ms on gpu0 -> D2H 64 MiB -> CPU reduce of 2 inputs -> H2D to gpu1; in parallel a
  // delay of 1 ms then a node-to-node transfer. Nothing shares a resource, so each op is its closed form.
  const double M = 64.0 * 1048576.0;
  const auto c = s.compute(Place::gpu(0, 0), Seconds(2e-3));
  const auto d = s.transfer(Place::gpu(0, 0), Place::dram(0, 0), Bytes(M), TrafficClass::HFReduce);
  const auto r = s.reduce(Place::cpu(0, 0), {Place::dram(0, 0), Place::dram(0, 1)}, Place::dram(0, 1), Bytes(M));
  const auto h = s.transfer(Place::dram(0, 1), Place::gpu(0, 5), Bytes(M), TrafficClass::HFReduce);
  s.depend(d, c);
  s.depend(r, d);
  s.depend(h, r);
  const auto w = s.delay(Seconds(1e-3));
  const auto n = s.transfer(Place::dram(4, 1), Place::dram(5, 1), Bytes(M), TrafficClass::Other);
  s.depend(n, w);
  const auto zero = s.transfer(Place::dram(6, 0), Place::dram(7, 0), Bytes(0), TrafficClass::Other);
  const auto [a, b] = both(s, *p);
  // compute: exactly 2 ms alone.
  CHECK(a.ops[c].end == doctest::Approx(2e-3).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // D2H: 1 us + eps + M / 27 GB/s after the compute.
  const double t_d = 2e-3 + 1e-6 + kEps + M / 27e9;
  CHECK(a.ops[d].end == doctest::Approx(t_d).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // Reduce on cpu0's cores of two inputs into cpu1 DRAM (epyc_7502 has no reduce rate in the catalog, so
  // only memory and links bind). Flows: read cpu0 DRAM -> cpu0 cores (cpu0 DRAM 160 GB/s); read cpu1 DRAM ->
  // cpu0 cores (cpu1 DRAM, socket link cpu1->cpu0 100 GB/s); write cpu0 cores -> cpu1 DRAM (socket link
  // cpu0->cpu1, cpu1 DRAM). cpu1 DRAM carries two flows: max-min gives each 80 GB/s, the first flow 160.
  // The op ends with its slowest flows: M / 80 GB/s.
  const double t_r = t_d + kEps + M / 80e9;
  CHECK(a.ops[r].end == doctest::Approx(t_r).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // H2D to gpu5 on cpu1's shared root port, alone: 27 GB/s.
  CHECK(a.ops[h].end == doctest::Approx(t_r + 1e-6 + kEps + M / 27e9).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // Delay then a 24 GB/s node-to-node transfer.
  const double lat = p->path(p->path_id(Place::dram(4, 1), Place::dram(5, 1))).latency;
  CHECK(a.ops[n].end == doctest::Approx(1e-3 + lat + kEps + M / 24e9).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // A zero-byte transfer costs its latency only.
  const double lat0 = p->path(p->path_id(Place::dram(6, 0), Place::dram(7, 0))).latency;
  CHECK(a.ops[zero].end == doctest::Approx(lat0 + kEps).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

TEST_CASE("engines: an empty schedule, a cycle, and determinism") {
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  sched::Schedule empty;
  CHECK(run("analytic", empty, *p).makespan == 0.0);
  CHECK(run("simgrid", empty, *p).makespan == 0.0);
  sched::Schedule cyc;
  const auto x = cyc.delay(Seconds(1e-3));
  const auto y = cyc.delay(Seconds(1e-3));
  cyc.depend(x, y);
  cyc.depend(y, x);
  CHECK_THROWS_AS((void)run("analytic", cyc, *p), SimulationError);
  CHECK_THROWS_AS((void)run("simgrid", cyc, *p), SimulationError);
  // The fluid engine runs what it can and then names the cycle (two ops can never start), also
  // beside ops that run.
  (void)cyc.transfer(Place::gpu(0, 0), Place::dram(0, 0), Bytes(kS), TrafficClass::Other);
  CHECK_THROWS_WITH_AS((void)run("analytic", cyc, *p), doctest::Contains("contain a cycle: 2 operations"),
                       SimulationError);
  // Contended: 8 D2H at once, twice; bit-identical results.
  sched::Schedule s;
  for (int g = 0; g < 8; ++g) s.transfer(Place::gpu(0, g), Place::dram(0, 1), Bytes(kS), TrafficClass::Other);
  const auto r1 = run("analytic", s, *p), r2 = run("analytic", s, *p);
  const auto s1 = run("simgrid", s, *p), s2 = run("simgrid", s, *p);
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(r1.ops[i].end == r2.ops[i].end);
    CHECK(s1.ops[i].end == s2.ops[i].end);
    CHECK(s1.ops[i].end == doctest::Approx(r1.ops[i].end).epsilon(1e-6).scale(ffsim::testing::kRelative));
  }
}

TEST_CASE("platform: traffic section errors") {
  auto parse = [](const std::string& traffic) {
    const std::string text = R"({"name": "t", "cluster": {"node": "fire_flyer_pcie", "nodes": 2},
        "fabric": {"topology": "two_layer", "switch": "qm8700"}, "traffic": )" + traffic + "}";
    return plan::parse_scenario(config::Document::parse(text, "t.json", false), catalog());
  };
  CHECK_NOTHROW(parse(R"({"isolation": false})"));
  CHECK_THROWS_WITH_AS(parse(R"({"isolation": true})"),
                       "t.json:/traffic: missing required key \"virtual_lanes\" (isolation needs lanes with arbitration weights)",
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse(R"({"isolation": true, "service_levels": {"hfreduce": 1, "nccl": 1, "other": 0, "storage": 2},
      "virtual_lanes": [{"service_levels": [0, 1], "weight": 1}]})"),
                       "t.json:/traffic/virtual_lanes: no virtual lane carries service level 2 (traffic class \"storage\")",
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse(R"({"isolation": true, "service_levels": {"hfreduse": 1},
      "virtual_lanes": [{"service_levels": [0, 1], "weight": 1}]})"),
                       "t.json:/traffic/service_levels: unknown traffic class \"hfreduse\" (did you mean \"hfreduce\"?); "
                       "valid: hfreduce, nccl, other, storage",
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse(R"({"isolation": true, "service_levels": {"hfreduce": 1, "nccl": 1, "other": 0, "storage": 0},
      "virtual_lanes": [{"service_levels": [0, 1], "weight": 0}]})"),
                       "t.json:/traffic/virtual_lanes/0/weight: expected an integer in [1, 255], got number 0", ConfigError);
}

TEST_CASE("eval::FluidEngine: random contended flows get the max-min rates of a plain water-filling") {
  // The engine's progressive filling (a heap of levels, lazily refreshed; lazy constraints) against
  // the textbook algorithm written out here: repeatedly find the resource with the lowest fair share
  // (remaining capacity / unfrozen flows through it) and freeze its flows at that share. Random
  // transfers inside one node between a device (a GPU off the GPU5/GPU6 bridge, whose bidirectional
  // cap is tested above, or the NIC) and a socket's DRAM, either way, all start together and share
  // one path latency, so the first to end does at latency + arbitration delay + min of bytes / rate.
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  Rng rnd;
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    // A device (a GPU or the NIC) and a socket's DRAM, either way: the D2H, H2D and NIC DMA paths.
    auto device = [&] {
      const int k = rnd(7);
      return k < 6 ? Place::gpu(0, std::array<int, 6>{0, 1, 2, 3, 4, 7}[static_cast<std::size_t>(k)]) : Place::nic(0, 0);
    };
    sched::Schedule s;
    const int n = 2 + rnd(12);
    for (int k = 0; k < n; ++k) {
      const Place a = device(), b = Place::dram(0, rnd(2));
      const bool down = rnd(2) == 0;
      s.transfer(down ? a : b, down ? b : a, Bytes((1 + rnd(64)) * 1048576.0), TrafficClass::Other);
    }
    // Lower every op: one flow each; all must share one latency and delay for the check.
    std::vector<std::uint32_t> path;
    std::vector<double> bytes;
    double lat = -1, delay = -1;
    bool same = true;
    for (sched::OpId i = 0; i < s.size(); ++i) {
      platform::Lowered low;
      p->lower(s, i, low);
      REQUIRE(low.flows.size() == 1);
      if (lat < 0) lat = low.latency, delay = low.flows[0].start_delay;
      same = same && low.latency == lat && low.flows[0].start_delay == delay && low.flows[0].weight == 1 &&
             !std::isfinite(low.flows[0].rate_cap);
      path.push_back(low.flows[0].path);
      bytes.push_back(low.flows[0].amount);
    }
    if (!same) continue;
    // Water-filling.
    std::vector<double> rate(path.size(), -1);
    for (std::size_t left = path.size(); left > 0;) {
      std::map<std::uint32_t, std::pair<double, int>> res;  // resource -> (capacity left, unfrozen flows)
      for (std::size_t f = 0; f < path.size(); ++f)
        for (std::uint32_t r : p->path(path[f]).resources) {
          auto [it, fresh] = res.try_emplace(r, p->resource(r).capacity, 0);
          if (rate[f] >= 0) it->second.first -= rate[f];
          else ++it->second.second;
        }
      double level = std::numeric_limits<double>::infinity();
      std::uint32_t arg = 0;
      for (const auto& [r, cu] : res)
        if (cu.second > 0 && cu.first / cu.second < level) level = cu.first / cu.second, arg = r;
      for (std::size_t f = 0; f < path.size(); ++f) {
        if (rate[f] >= 0) continue;
        const auto& rs = p->path(path[f]).resources;
        if (std::find(rs.begin(), rs.end(), arg) != rs.end()) rate[f] = level, --left;
      }
    }
    double first = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < path.size(); ++f) first = std::min(first, bytes[f] / rate[f]);
    const auto r = run("analytic", s, *p);
    double got = std::numeric_limits<double>::infinity();
    for (const auto& o : r.ops) got = std::min(got, o.end);
    CHECK(got - lat - delay == doctest::Approx(first).epsilon(1e-12).scale(ffsim::testing::kRelative));
    ++checked;
  }
  CHECK(checked >= 20);  // most trials are checked
}

TEST_CASE("engines: random contended schedules agree in both engines (two max-min solvers)") {
  // The fluid engine's progressive filling against SimGrid's LMM solver (Full updates): random
  // transfers and reduces between GPUs, DRAMs and NICs of 3 nodes, random sizes (rates change at
  // many instants), a third of them chained to an earlier op. Every op's end agrees to 1e-9
  // relative. (With SimGrid's default Lazy updates this failed by up to 3e-4: src/sim.)
  const auto sc = small_ff();
  const auto p = plan::make_platform(sc);
  Rng rnd;
  double worst = 0;
  for (int trial = 0; trial < 6; ++trial) {
    CAPTURE(trial);
    sched::Schedule s;
    std::vector<sched::OpId> ops;
    for (int k = 0; k < 40; ++k) {
      const double bytes = (1 + rnd(64)) * 1048576.0;
      sched::OpId op;
      if (rnd(5) == 0) {
        const int node = rnd(3);
        op = s.reduce(Place::cpu(node, rnd(2)), {Place::dram(node, 0), Place::dram(node, 1)}, Place::dram(node, rnd(2)),
                      Bytes(bytes));
      } else {
        op = ffsim::testing::random_transfer(s, rnd, 3, bytes);
      }
      if (!ops.empty() && rnd(3) == 0) s.depend(op, ops[static_cast<std::size_t>(rnd(static_cast<int>(ops.size())))]);
      ops.push_back(op);
    }
    const auto a = run("analytic", s, *p), b = run("simgrid", s, *p);
    for (std::size_t i = 0; i < a.ops.size(); ++i) {
      CAPTURE(i);
      CHECK(b.ops[i].end == doctest::Approx(a.ops[i].end).epsilon(1e-9).scale(ffsim::testing::kRelative));
      worst = std::max(worst, std::abs(b.ops[i].end - a.ops[i].end) / a.ops[i].end);
    }
  }
  MESSAGE("largest relative difference " << worst);
}

TEST_CASE("platform: on separate planes a transfer leaves through the sender node's NIC in the receiver's plane") {
  // Two nodes of 8 GPUs and 8 NICs (NIC i in plane i mod 4, as in fire-flyer-next.json): GPU3's
  // own NIC is nic3 (plane 3), GPU0's nic0 (plane 0). Planes are separate fabrics, so n0.gpu3 ->
  // n1.gpu0 leaves through n0's NIC of plane 0 nearest GPU3 (nic0, under cpu0 with GPU3's switch;
  // nic4 hangs off cpu1) and arrives at n1.nic0; a same-plane pair keeps its own NICs.
  const std::string text = R"({"name": "planes", "cluster": {"node": "h800_8x400g", "nodes": 2},
      "fabric": {"topology": "multi_plane", "switch": "switch_128x400g", "planes": 4}})";
  const auto p = plan::make_platform(plan::parse_scenario(config::Document::parse(text, "planes.json", false), catalog()));
  REQUIRE(p->nic_for(Place::gpu(0, 3)) == 3);
  REQUIRE(p->nic_for(Place::gpu(1, 0)) == 0);
  auto names = [&](Place a, Place b) {
    std::vector<std::string> v;
    for (std::uint32_t r : p->path(p->path_id(a, b)).resources) v.push_back(p->resource_name(r));
    return v;
  };
  auto has = [](const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  const auto cross = names(Place::gpu(0, 3), Place::gpu(1, 0));
  CHECK(has(cross, "n0.nic0.tx"));
  CHECK(has(cross, "n1.nic0.rx"));
  CHECK_FALSE(has(cross, "n0.nic3.tx"));
  // PXN: nic0 hangs off another PCIe switch than GPU3, so GPU3 hands the data over NVSwitch to
  // GPU0 (nic0's own GPU under that switch), which sends it: NVLink out of GPU3, into GPU0, up
  // GPU0's link, and no hop through the root complex (the node's peer-to-peer resource).
  CHECK(has(cross, "n0.gpu3.nvl.tx"));
  CHECK(has(cross, "n0.gpu0.nvl.rx"));
  CHECK(has(cross, "n0.gpu0.pcie.up"));
  CHECK_FALSE(has(cross, "n0.gpu3.pcie.up"));
  for (std::uint32_t r : p->path(p->path_id(Place::gpu(0, 3), Place::gpu(1, 0))).resources)
    CHECK(p->resource(r).kind != platform::ResourceKind::PeerToPeer);
  // To a GPU on plane 1: nic1 (also under sw0, beside GPU0 and GPU1); its own GPU, GPU1, relays,
  // so that the relayed traffic of a switch's two NICs spreads over its two GPUs.
  const auto to1 = names(Place::gpu(0, 3), Place::gpu(1, 1));
  CHECK(has(to1, "n0.nic1.tx"));
  CHECK(has(to1, "n0.gpu1.nvl.rx"));
  CHECK_FALSE(has(to1, "n0.gpu0.nvl.rx"));
  CHECK(p->nic_for(Place::gpu(0, 3), 0) == 0);
  CHECK(p->nic_for(Place::gpu(0, 3), 7) == -1);  // no plane 7
  const auto same = names(Place::gpu(0, 3), Place::gpu(1, 3));
  CHECK(has(same, "n0.nic3.tx"));
  CHECK(has(same, "n1.nic3.rx"));
  CHECK_FALSE(has(same, "n0.gpu3.nvl.tx"));  // its own NIC: no relay
  // A transfer on the planes runs (both engines agree) where it had no route before.
  sched::Schedule s;
  s.transfer(Place::gpu(0, 3), Place::gpu(1, 0), Bytes(64e6), TrafficClass::NCCL);
  (void)both(s, *p);
}

TEST_CASE("platform: GPU-NIC peer-to-peer inside a PCIe switch is the pair's own cap, through the root complex the node's") {
  // DGX-A100: GPU0, GPU1, NIC0 and NIC1 share switch sw0. GPU0 -> NIC0 turns inside the switch:
  // GPUDirect RDMA at the node's gpu_nic_p2p_bandwidth (24 GB/s) as a cap on that flow alone, so
  // the 8 GPU-NIC pairs of a node run at once (8 x 24 GB/s). GPU0 -> NIC2 (switch sw1) goes up
  // through the root complex: the node-wide peer-to-peer resource, as on Fire-Flyer's node.
  const std::string text = R"({"name": "dgx", "cluster": {"node": "dgx_a100", "nodes": 2},
      "fabric": {"topology": "two_layer", "switch": "qm8700"}})";
  const auto p = plan::make_platform(plan::parse_scenario(config::Document::parse(text, "dgx.json", false), catalog()));
  auto has_p2p = [&](Place a, Place b) {
    for (std::uint32_t r : p->path(p->path_id(a, b)).resources)
      if (p->resource(r).kind == platform::ResourceKind::PeerToPeer) return true;
    return false;
  };
  const auto& in = p->path(p->path_id(Place::gpu(0, 0), Place::nic(0, 0)));
  CHECK_FALSE(has_p2p(Place::gpu(0, 0), Place::nic(0, 0)));
  CHECK(in.rate_cap == doctest::Approx(24e9).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK_FALSE(has_p2p(Place::nic(0, 1), Place::gpu(0, 1)));
  CHECK(has_p2p(Place::gpu(0, 0), Place::nic(0, 2)));
  // All 8 GPUs send to their own NICs at once: each pair at its cap, none shares a resource.
  sched::Schedule s;
  for (int k = 0; k < 8; ++k) s.transfer(Place::gpu(0, k), Place::nic(0, k), Bytes(24e6), TrafficClass::Other);
  const auto r = run("analytic", s, *p);
  for (const auto& o : r.ops) CHECK(o.end - o.start == doctest::Approx(1e-3).epsilon(1e-3).scale(ffsim::testing::kRelative));
  // Fire-Flyer's NIC hangs off its own root port: every GPU's path to it crosses the root complex.
  const auto ff = plan::make_platform(small_ff());
  bool all = true;
  for (int k = 0; k < 8; ++k) {
    bool found = false;
    for (std::uint32_t x : ff->path(ff->path_id(Place::gpu(0, k), Place::nic(0, 0))).resources)
      found = found || ff->resource(x).kind == platform::ResourceKind::PeerToPeer;
    all = all && found;
  }
  CHECK(all);
}
