// NCCL's own choice of algorithm and protocol (NCCL 2.7 src/graph/tuning.cc, coll/nccl_select.cpp):
// the pick equals the argmin of tuning.cc's model with the constants of models/libraries/nccl.json,
// derived by hand below for several sizes and node counts on Fire-Flyer 2 and DGX-A100 nodes.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "coll/collective.hpp"
#include "coll/nccl_select.hpp"
#include "config/coll_reader.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using coll::NcclProtocol;

namespace {

constexpr double kUs = 1e-6;
constexpr double kGB = 1e9;
constexpr double kMiB = 1048576.0;

const platform::Platform& fire_flyer() {
  static const auto p = plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/fire-flyer-2.json", testing::catalog()));
  return *p;
}
const platform::Platform& dgx() {
  static const auto p = plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/dgx-a100-cluster.json", testing::catalog()));
  return *p;
}
const coll::LibraryParams& lib() {
  static const auto l = config::load_library_params(testing::catalog());
  return l;
}

struct Pick {
  const char* algorithm;
  NcclProtocol protocol;
};
void check_pick(const platform::Platform& p, int gpus, double bytes, Pick want) {
  CAPTURE(gpus);
  CAPTURE(bytes);
  const auto got = coll::nccl_pick(p, lib(), coll::Group::first_gpus(p, gpus), bytes);
  CHECK(got.algorithm == want.algorithm);
  CHECK(coll::protocol_name(got.protocol) == std::string(coll::protocol_name(want.protocol)));
}
double row_time(const platform::Platform& p, int gpus, double bytes, const char* algo, NcclProtocol proto) {
  return coll::nccl_row(coll::nccl_cost_table(p, lib(), coll::Group::first_gpus(p, gpus), bytes), algo, proto).time;
}
double row_latency(const platform::Platform& p, int gpus, double bytes, const char* algo, NcclProtocol proto) {
  return coll::nccl_row(coll::nccl_cost_table(p, lib(), coll::Group::first_gpus(p, gpus), bytes), algo, proto).latency;
}
double row_algbw(const platform::Platform& p, int gpus, double bytes, const char* algo, NcclProtocol proto) {
  return coll::nccl_row(coll::nccl_cost_table(p, lib(), coll::Group::first_gpus(p, gpus), bytes), algo, proto).algbw;
}

}  // namespace

// The constants (models/libraries/nccl.json, NCCL 2.7 tuning.cc; [S] where not verified):
//   baseLat (us)         Ring LL 3.6, LL128 10.0, Simple 8.4; Tree LL 4.4, LL128 4.4, Simple 0
//   hwLat (us) NVL/PCI/NET  Ring LL .47/1.0/2.7, LL128 1.9/2.5/4.0, Simple 3.4/5.7/9.6
//                           Tree LL .52/1.0/5.0 [S], LL128 1.25/1.9/8.5 [S], Simple 28/28/50
//   busBw = channels x speed, at most 235 GB/s; ring LL x 1/4, at most llMaxBw (1 node 87.7, 2
//   nodes 22.5, more 19.0 GB/s [S]); tree x 0.9 (every protocol), LL then / 3.8; LL128 x 0.92
//   (x 0.7 below 2 GPUs per node), at most channels x 16.7 GB/s; ring algBw = busBw n / 2(n-1),
//   tree algBw = busBw / 2 x treeCorrectionFactor[log2i(bytes / 64)] ([S]); ring latency = base +
//   (2(n-1) - 2(nodes-1)) intra + 2(nodes-1) net, Simple x 1.9 across nodes from n x 4 KiB; tree
//   latency = base + 2((ppn-1) intra + log2i(nodes) net); time = latency + bytes / algBw.
// Fire-Flyer 2: one NIC, 2 channels of min(PCIe 24, NIC 25) = 24 GB/s: busBw 48 GB/s; the hops
// inside a node are PCIe, so LL128 is off. DGX-A100: 8 NICs, 16 channels of 25 GB/s (one node:
// 24) = 400 (384), capped at 235 GB/s; NVLink inside the node, LL128 on.
TEST_CASE("coll::nccl tuning: hand-derived picks on Fire-Flyer 2 and DGX-A100") {
  const auto& ff = fire_flyer();
  const auto& dg = dgx();
  const double S184 = 184 * kMiB;

  // (1) Fire-Flyer 2, 16 GPUs (2 nodes, ppn 8), 1 MiB = 1,048,576 B (log2i(16384) = 14):
  //   ring LL:     lat 3.6 + (30-2) x 1.0 + 2 x 2.7 = 37.0 us; busBw min(48/4, 22.5) = 12 GB/s,
  //                algBw 12 x 16/30 = 6.4 GB/s; 37.0 + 1048576 / 6.4e3 = 37.0 + 163.84 = 200.84 us
  //   ring Simple: lat 1.9 x (8.4 + 28 x 5.7 + 2 x 9.6) = 1.9 x 187.2 = 355.68 us (1 MiB >= 16 x
  //                4 KiB); algBw 48 x 16/30 = 25.6 GB/s; 355.68 + 40.96 = 396.64 us
  //   tree LL:     lat 4.4 + 2 (7 x 1.0 + 1 x 5.0) = 28.4 us; algBw 48 x 0.9 / 3.8 / 2 x 0.5 (LL
  //                factor 14) = 2.842 GB/s; 28.4 + 368.94 = 397.34 us
  //   tree Simple: lat 2 (7 x 28 + 50) = 492 us, more than the others' times
  //   LL128: off (PCIe). Least: ring LL.
  check_pick(ff, 16, kMiB, {"nccl_ring", NcclProtocol::LL});
  CHECK(row_latency(ff, 16, kMiB, "nccl_ring", NcclProtocol::LL) == doctest::Approx(37.0 * kUs));
  CHECK(row_time(ff, 16, kMiB, "nccl_ring", NcclProtocol::LL) == doctest::Approx(200.84 * kUs));
  CHECK(row_time(ff, 16, kMiB, "nccl_ring", NcclProtocol::Simple) == doctest::Approx(396.64 * kUs));
  CHECK(row_time(ff, 16, kMiB, "nccl_tree", NcclProtocol::LL) == doctest::Approx(397.343 * kUs).epsilon(1e-5));

  // (2) Fire-Flyer 2, 128 GPUs (16 nodes), 184 MiB = 192,937,984 B (log2i(3,014,656) = 21):
  //   ring Simple: lat 1.9 x (8.4 + (254 - 30) x 5.7 + 30 x 9.6) = 1.9 x 1573.2 = 2989.08 us;
  //                algBw 48 x 128/254 = 24.189 GB/s; 2989.08 + 7976.28 = 10965.36 us
  //   tree Simple: lat 2 (7 x 28 + 4 x 50) = 792 us; algBw 48 x 0.9 / 2 x 0.9 (Simple factor 21)
  //                = 19.44 GB/s; 792 + 9924.79 = 10716.79 us
  //   ring LL:     algBw min(12, 19.0) x 128/254 = 6.047 GB/s: 32 ms; tree LL 2.842 x... slower still
  //   Least: tree Simple (the ring's 2(n-1) hop latencies, x 1.9 on the plateau, outweigh its 25% more algBw).
  check_pick(ff, 128, S184, {"nccl_tree", NcclProtocol::Simple});
  CHECK(row_time(ff, 128, S184, "nccl_ring", NcclProtocol::Simple) == doctest::Approx(10965.357 * kUs).epsilon(1e-6));
  CHECK(row_time(ff, 128, S184, "nccl_tree", NcclProtocol::Simple) == doctest::Approx(10716.793 * kUs).epsilon(1e-6));
  CHECK(row_algbw(ff, 128, S184, "nccl_tree", NcclProtocol::Simple) == doctest::Approx(19.44 * kGB));

  // (3) DGX-A100, 16 GPUs (2 nodes), 184 MiB:
  //   ring LL128:  lat 10.0 + 28 x 1.9 + 2 x 4.0 = 71.2 us; busBw min(235 x 0.92, 16 x 16.7) =
  //                min(216.2, 267.2) = 216.2; algBw 216.2 x 16/30 = 115.307 GB/s; 71.2 + 1673.26 = 1744.46 us
  //   ring Simple: lat 1.9 x (8.4 + 28 x 3.4 + 2 x 9.6) = 1.9 x 122.8 = 233.32 us; algBw 235 x
  //                16/30 = 125.333 GB/s; 233.32 + 1539.40 = 1772.72 us
  //   tree LL128:  lat 4.4 + 2 (7 x 1.25 + 8.5) = 38.9 us; algBw min(235 x 0.9 x 0.92, 267.2) / 2 x
  //                1.0 (LL128 factor 21) = 97.29 GB/s; 38.9 + 1983.12 = 2022.02 us
  //   Least: ring LL128, by 28 us over ring Simple.
  check_pick(dg, 16, S184, {"nccl_ring", NcclProtocol::LL128});
  CHECK(row_time(dg, 16, S184, "nccl_ring", NcclProtocol::LL128) == doctest::Approx(1744.46 * kUs).epsilon(1e-6));
  CHECK(row_time(dg, 16, S184, "nccl_ring", NcclProtocol::Simple) == doctest::Approx(1772.719 * kUs).epsilon(1e-6));
  CHECK(row_time(dg, 16, S184, "nccl_tree", NcclProtocol::LL128) == doctest::Approx(2022.022 * kUs).epsilon(1e-6));

  // (4) DGX-A100, 128 GPUs (16 nodes), 1 MiB (factor index 14):
  //   tree LL128:  lat 4.4 + 2 (7 x 1.25 + 4 x 8.5) = 89.9 us; algBw 194.58 / 2 x 0.6 = 58.374
  //                GB/s; 89.9 + 17.963 = 107.86 us
  //   tree LL:     lat 4.4 + 2 (7 x 0.52 + 4 x 5.0) = 51.68 us; algBw 235 x 0.9 / 3.8 / 2 x 0.5 =
  //                13.914 GB/s; 51.68 + 75.36 = 127.04 us
  //   ring LL:     lat 3.6 + 224 x 0.47 + 30 x 2.7 = 189.88 us, more than tree LL128's time
  //   ring LL128:  lat 10 + 224 x 1.9 + 30 x 4.0 = 555.6 us. Least: tree LL128.
  check_pick(dg, 128, kMiB, {"nccl_tree", NcclProtocol::LL128});
  CHECK(row_time(dg, 128, kMiB, "nccl_tree", NcclProtocol::LL128) == doctest::Approx(107.863 * kUs).epsilon(1e-5));
  CHECK(row_time(dg, 128, kMiB, "nccl_tree", NcclProtocol::LL) == doctest::Approx(127.039 * kUs).epsilon(1e-5));
  CHECK(row_latency(dg, 128, kMiB, "nccl_ring", NcclProtocol::LL) == doctest::Approx(189.88 * kUs));

  // (5) Fire-Flyer 2, one node (8 GPUs), 8 B: latencies decide.
  //   ring LL: 3.6 + 14 x 1.0 = 17.6 us (no network steps); tree LL: 4.4 + 2 (7 x 1.0) = 18.4 us;
  //   ring Simple 8.4 + 14 x 5.7 = 88.2 us. Least: ring LL (17.6 us + 8 B / 6.86 GB/s).
  check_pick(ff, 8, 8, {"nccl_ring", NcclProtocol::LL});
  CHECK(row_latency(ff, 8, 8, "nccl_ring", NcclProtocol::LL) == doctest::Approx(17.6 * kUs));
  CHECK(row_latency(ff, 8, 8, "nccl_tree", NcclProtocol::LL) == doctest::Approx(18.4 * kUs));

  // (6) DGX-A100, 24 GPUs (3 nodes: log2i(3) = 1 network level), 1,000,000 B (not a power of two:
  //   log2i(15625) = 13, LL factor 0.4, LL128 0.6):
  //   tree LL128:  lat 4.4 + 2 (7 x 1.25 + 1 x 8.5) = 38.9 us; algBw 58.374 GB/s; 38.9 + 17.13 = 56.03 us
  //   tree LL:     21.68 + 1e6 / (27.829 x 0.4 GB/s) = 21.68 + 89.83 = 111.52 us
  //   ring LL128:  lat 10 + (46 - 4) x 1.9 + 4 x 4.0 = 105.8 us. Least: tree LL128.
  check_pick(dg, 24, 1e6, {"nccl_tree", NcclProtocol::LL128});
  CHECK(row_time(dg, 24, 1e6, "nccl_tree", NcclProtocol::LL128) == doctest::Approx(56.031 * kUs).epsilon(1e-5));
  CHECK(row_latency(dg, 24, 1e6, "nccl_ring", NcclProtocol::LL128) == doctest::Approx(105.8 * kUs));

  // (7) Fire-Flyer 2, 1,024 GPUs (128 nodes), 1 MiB: the ring's 2046 hops cost it 2.5 ms even on
  //   LL (3.6 + (2046 - 254) x 1.0 + 254 x 2.7 = 2481.4 us); tree LL 4.4 + 2 (7 + 7 x 5.0) = 88.4
  //   us + 1 MiB / 2.842 GB/s = 457.3 us; tree Simple 1092 + 97.1 = 1189.1 us. Least: tree LL.
  check_pick(ff, 1024, kMiB, {"nccl_tree", NcclProtocol::LL});
  CHECK(row_time(ff, 1024, kMiB, "nccl_tree", NcclProtocol::LL) == doctest::Approx(457.343 * kUs).epsilon(1e-5));
  CHECK(row_latency(ff, 1024, kMiB, "nccl_ring", NcclProtocol::LL) == doctest::Approx(2481.4 * kUs));

  // (8) DGX-A100, one node (8 GPUs), 64 KiB (index 10): ring LL 3.6 + 14 x 0.47 = 10.18 us +
  //   65536 / (min(235/4, 87.7) x 8/14 = 33.57 GB/s) = 10.18 + 1.95 = 12.13 us; tree LL 4.4 + 2 x
  //   7 x 0.52 = 11.68 us + 65536 / (27.829 x 0.6) = 11.68 + 3.92 = 15.60 us. Least: ring LL.
  check_pick(dg, 8, 65536, {"nccl_ring", NcclProtocol::LL});
  CHECK(row_time(dg, 8, 65536, "nccl_ring", NcclProtocol::LL) == doctest::Approx(12.132 * kUs).epsilon(1e-4));
}

// The same model, written again straight from tuning.cc's formulas with the library's constants,
// over a grid of sizes and node counts: every row's time and the pick (argmin over the enabled rows,
// ties to the first in NCCL's order: tree before ring, LL before LL128 before Simple).
TEST_CASE("coll::nccl tuning: every row and the pick over sizes x node counts equal tuning.cc's formulas") {
  const auto& nc = lib().nccl;
  struct Case {
    const platform::Platform* p;
    const char* name;
    int channels;
    bool nvlink;
  };
  for (const Case& pc : {Case{&fire_flyer(), "fire-flyer-2", 2, false}, Case{&dgx(), "dgx-a100", 16, true}}) {
    CAPTURE(pc.name);
    for (int nodes : {1, 2, 3, 16, 128}) {
      const int n = 8 * nodes;
      CAPTURE(n);
      const auto g = coll::Group::first_gpus(*pc.p, n);
      for (double S : {0.0, 8.0, 63.0, 64.0, 65536.0, kMiB, 1e6, 3 * kMiB + 5, 184 * kMiB, 300 * kMiB}) {
        CAPTURE(S);
        // Speed per channel: one node PCIe's 24 GB/s (NCCL's intra-node rating), across nodes
        // the NIC's 25 GB/s or PCIe's 24 if that is slower.
        const double speed = nodes == 1  ? nc.pci_speed
                             : pc.nvlink ? nc.net_speed
                                         : std::min(nc.pci_speed, nc.net_speed);
        const double bus0 = std::min(pc.channels * speed, nc.max_bus_bw);
        const double ll_max = nodes == 1   ? nc.ll_max_bus_bw_one_node
                              : nodes == 2 ? nc.ll_max_bus_bw_two_nodes
                                           : nc.ll_max_bus_bw_more_nodes;
        const int level = nodes >= 128 ? 7 : nodes >= 16 ? 4 : nodes >= 2 ? 1 : 0;  // log2i(nodes)
        // log2i(floor(S / 64)): 0 below 128 B.
        int idx = 0;
        for (double q = std::floor(S / 64); q >= 2; q = std::floor(q / 2)) ++idx;
        const auto t = coll::nccl_cost_table(*pc.p, lib(), g, S);
        REQUIRE(t.size() == 6);
        double best = INFINITY;
        std::string best_algo;
        NcclProtocol best_proto = NcclProtocol::Simple;
        for (const char* algo : {"nccl_tree", "nccl_ring"}) {
          const bool ring = std::string(algo) == "nccl_ring";
          for (NcclProtocol proto : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
            CAPTURE(algo);
            CAPTURE(coll::protocol_name(proto));
            const coll::NcclProtocolLatencies L =
                proto == NcclProtocol::LL ? nc.ll
                : proto == NcclProtocol::LL128
                    ? nc.ll128
                    : coll::NcclProtocolLatencies{
                          nc.simple.ring_base_latency,    nc.simple.tree_base_latency,    nc.simple.ring_hop_latency_nvlink,
                          nc.simple.ring_hop_latency_pci, nc.simple.ring_hop_latency_net, nc.simple.tree_hop_latency_nvlink,
                          nc.simple.tree_hop_latency_pci, nc.simple.tree_hop_latency_net, nc.simple.tree_correction};
            double bus = bus0, lat = 0, alg = 0;
            if (ring) {
              if (proto == NcclProtocol::LL) bus = std::min(bus / 4, ll_max);
              if (proto == NcclProtocol::LL128) bus = std::min(bus * 0.92, 16.7e9 * pc.channels);
              alg = bus * n / (2.0 * (n - 1));
              const double hop = pc.nvlink ? L.ring_hop_latency_nvlink : L.ring_hop_latency_pci;
              lat = L.ring_base_latency + (2 * (n - 1) - 2 * (nodes - 1)) * hop +
                    2 * (nodes - 1) * L.ring_hop_latency_net;
              if (proto == NcclProtocol::Simple && nodes > 1 && S >= n / 16.0 * 65536) lat *= 1.9;
            } else {
              bus *= 0.9;
              if (proto == NcclProtocol::LL) bus /= 3.8;
              if (proto == NcclProtocol::LL128) bus = std::min(bus * 0.92, 16.7e9 * pc.channels);
              alg = bus / 2;
              if (idx < 23) alg *= L.tree_correction.at(static_cast<std::size_t>(idx));
              const double hop = pc.nvlink ? L.tree_hop_latency_nvlink : L.tree_hop_latency_pci;
              lat = L.tree_base_latency + 2 * (7 * hop + level * L.tree_hop_latency_net);
            }
            const double time = lat + S / alg;
            const auto& row = coll::nccl_row(t, algo, proto);
            CHECK(row.latency == doctest::Approx(lat).epsilon(1e-12).scale(testing::kRelative));
            CHECK(row.algbw == doctest::Approx(alg).epsilon(1e-12).scale(testing::kRelative));
            CHECK(row.time == doctest::Approx(time).epsilon(1e-12).scale(testing::kRelative));
            CHECK(row.channels == pc.channels);
            const bool on = proto != NcclProtocol::LL128 || pc.nvlink;
            CHECK(row.enabled == on);
            if (on && time < best) {
              best = time;
              best_algo = algo;
              best_proto = proto;
            }
          }
        }
        const auto pick = coll::nccl_pick(*pc.p, lib(), g, S);
        CHECK(pick.algorithm == best_algo);
        CHECK(pick.protocol == best_proto);
        // Fire-Flyer 2's PCIe nodes never pick LL128.
        if (!pc.nvlink) CHECK(pick.protocol != NcclProtocol::LL128);
      }
    }
  }
}

TEST_CASE("coll::nccl tuning: edge cases (one rank, 0 bytes, one GPU per node, the correction table's end)") {
  const auto& ff = fire_flyer();
  const auto& dg = dgx();
  // One rank: NCCL runs no tuning model (nRanks <= 1), its allreduce is a local copy: no rows, and
  // "nccl" runs the ring (which moves nothing on one rank), Simple.
  CHECK(coll::nccl_cost_table(ff, lib(), coll::Group::first_gpus(ff, 1), 184 * kMiB).empty());
  const auto one = coll::nccl_pick(ff, lib(), coll::Group::first_gpus(ff, 1), 184 * kMiB);
  CHECK(one.algorithm == "nccl_ring");
  CHECK(one.protocol == NcclProtocol::Simple);
  // 0 bytes: the latencies alone. Fire-Flyer 2, 24 GPUs (3 nodes): ring LL 3.6 + 42 x 1.0 + 4 x 2.7
  // = 56.4 us; tree LL 4.4 + 2 (7 x 1.0 + 1 x 5.0) = 28.4 us: the tree, LL. DGX-A100, one node: ring
  // LL 3.6 + 14 x 0.47 = 10.18 us; tree LL 4.4 + 14 x 0.52 = 11.68 us: the ring, LL.
  check_pick(ff, 24, 0, {"nccl_tree", NcclProtocol::LL});
  CHECK(row_time(ff, 24, 0, "nccl_tree", NcclProtocol::LL) == doctest::Approx(28.4 * kUs));
  check_pick(dg, 8, 0, {"nccl_ring", NcclProtocol::LL});
  CHECK(row_time(dg, 8, 0, "nccl_ring", NcclProtocol::LL) == doctest::Approx(10.18 * kUs));
  // Two ranks on one node (ppn 2): ring LL 3.6 + 2 x 1.0 = 5.6 us, tree LL 4.4 + 2 x 1.0 = 6.4 us at
  // 0 bytes on Fire-Flyer 2.
  check_pick(ff, 2, 0, {"nccl_ring", NcclProtocol::LL});
  CHECK(row_latency(ff, 2, 0, "nccl_ring", NcclProtocol::LL) == doctest::Approx(5.6 * kUs));
  // One GPU on each of 2 DGX nodes (ppn 1 < 2): LL128 busBw x 0.7 = min(235 x 0.7, 16 x 16.7) =
  // 164.5 GB/s, ring algBw 164.5 x 2/2 = 164.5 GB/s; no intra-node hop, so NVLink is not the
  // intra path and LL128 is off there (tuning.cc's typeIntra; nccl_view).
  {
    coll::Group g{{sched::Place::gpu(0, 0), sched::Place::gpu(1, 0)}};
    const auto t = coll::nccl_cost_table(dg, lib(), g, kMiB);
    const auto& r = coll::nccl_row(t, "nccl_ring", NcclProtocol::LL128);
    CHECK(r.algbw == doctest::Approx(164.5 * kGB));
    CHECK_FALSE(r.enabled);
    CHECK(coll::nccl_pick(t).protocol != NcclProtocol::LL128);
  }
  // The tree's correction table ends at index 22 (256 MiB .. 512 MiB - 1 B): 256 MiB takes its last
  // factor (Simple 0.9), 512 MiB none. Fire-Flyer 2 tree Simple algBw: 21.6 GB/s x 0.9 and x 1.
  CHECK(row_algbw(ff, 128, 256 * kMiB, "nccl_tree", NcclProtocol::Simple) == doctest::Approx(19.44 * kGB));
  CHECK(row_algbw(ff, 128, 512 * kMiB, "nccl_tree", NcclProtocol::Simple) == doctest::Approx(21.6 * kGB));
  // 127 B and 64 B share index 0, 128 B is index 1 (log2i(bytes >> 6)); LL rows 0 and 1 are 1.0 and
  // Simple's 0.9 and 0.9, so check the index where the rows change: 1023 B (index 3: LL 1.0) against
  // 1024 B (index 4: LL 0.9).
  CHECK(row_algbw(ff, 16, 1023, "nccl_tree", NcclProtocol::LL) == doctest::Approx(48e9 * 0.9 / 3.8 / 2));
  CHECK(row_algbw(ff, 16, 1024, "nccl_tree", NcclProtocol::LL) == doctest::Approx(48e9 * 0.9 / 3.8 / 2 * 0.9));
  // The ring's plateau is Simple's alone: LL's latency at 184 MiB equals its latency at 0 bytes.
  CHECK(row_latency(ff, 128, 184 * kMiB, "nccl_ring", NcclProtocol::LL) ==
        row_latency(ff, 128, 0, "nccl_ring", NcclProtocol::LL));
  CHECK(row_latency(ff, 128, 184 * kMiB, "nccl_ring", NcclProtocol::Simple) ==
        doctest::Approx(1.9 * row_latency(ff, 128, 0, "nccl_ring", NcclProtocol::Simple)));
}

TEST_CASE("coll::nccl tuning: Fire-Flyer 2 never picks LL128, DGX-A100 does") {
  // LL128 is on only with NVLink inside the node (tuning.cc's default protocol enable, [S]).
  for (int gpus : {8, 16, 24, 128, 1024})
    for (double S : {0.0, 65536.0, kMiB, 184 * kMiB}) {
      CAPTURE(gpus);
      CAPTURE(S);
      const auto t = coll::nccl_cost_table(fire_flyer(), lib(), coll::Group::first_gpus(fire_flyer(), gpus), S);
      for (const auto& r : t) CHECK(r.enabled == (r.protocol != NcclProtocol::LL128));
      CHECK(coll::nccl_pick(t).protocol != NcclProtocol::LL128);
    }
  // On DGX-A100 at 184 MiB: 16 GPUs ring LL128 (case 3 above), 1,024 GPUs tree LL128: tree LL128
  // 4.4 + 2 (7 x 1.25 + 7 x 8.5) = 140.9 us + 192,937,984 / 97.29e9 = 2124.0 us against tree
  // Simple 2 (7 x 28 + 7 x 50) = 1092 us + 192,937,984 / 95.175e9 (x 0.9 at index 21) = 3119.2 us.
  check_pick(dgx(), 1024, 184 * kMiB, {"nccl_tree", NcclProtocol::LL128});
  CHECK(row_time(dgx(), 1024, 184 * kMiB, "nccl_tree", NcclProtocol::LL128) ==
        doctest::Approx(2124.022 * kUs).epsilon(1e-6));
}
