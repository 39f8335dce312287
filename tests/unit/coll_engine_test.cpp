// Collectives on the engines: exact shortcuts, closed forms on contention-free cases, sweeps.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <unistd.h>

#include "app/engines.hpp"
#include "coll/collective.hpp"
#include "coll/common.hpp"
#include "coll/nccl_select.hpp"
#include "cli/context.hpp"
#include "config/catalog.hpp"
#include "config/coll_reader.hpp"
#include "core/error.hpp"
#include "plan/scenario.hpp"
#include "sim/simgrid_engine.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

namespace {

using testing::cluster;

eval::Engine& engine(const char* name) {
  static std::unique_ptr<eval::Engine> fluid = app::make_engine("analytic");
  static std::unique_ptr<eval::Engine> simgrid = app::make_engine("simgrid");
  return std::string(name) == "simgrid" ? *simgrid : *fluid;
}

// The closed form of `algo` within `tol` (relative) of the fluid simulation of its whole schedule,
// 184 MiB on 2, 4 and 8 whole nodes of a shipped scenario.
void closed_form_tracks(const std::string& algo, const std::string& scenario, double tol) {
  const auto lib = config::load_library_params(testing::catalog());
  const double S = 184.0 * 1048576;
  const auto a = coll::algorithms().get(algo).factory();
  const auto p = plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/" + scenario + ".json", testing::catalog()));
  for (int nodes : {2, 4, 8}) {
    CAPTURE(algo);
    CAPTURE(scenario);
    CAPTURE(nodes);
    const auto g = coll::Group::first_gpus(*p, nodes * 8);
    const double sim = a->simulate(engine("analytic"), *p, lib, g, S);
    CHECK(a->estimate(*p, lib, g, S).time == doctest::Approx(sim).epsilon(tol).scale(ffsim::testing::kRelative));
  }
}

}  // namespace

TEST_CASE("coll::nccl_ring: one simulated step per phase, reused, equals the full schedule") {
  const auto sc = cluster(4);
  const auto p = plan::make_platform(sc);
  const auto lib = config::load_library_params(testing::catalog());
  const auto ring = coll::algorithms().get("nccl_ring").factory();
  const auto rs = coll::algorithms().get("reduce_scatter").factory();
  const auto ag = coll::algorithms().get("allgather").factory();
  for (const char* e : {"analytic", "simgrid"}) {
    for (int n : {2, 3, 8, 13, 32}) {
      CAPTURE(e);
      CAPTURE(n);
      const auto g = coll::Group::first_gpus(*p, n);
      for (double bytes : {1.0 * 1048576, 184.0 * 1048576}) {
        // Every step moves bytes/n per link over the same links, after a barrier: n-1 copies of one
        // reduce-scatter step and n-1 of one allgather step give the whole schedule's time.
        CHECK(ring->simulate(engine(e), *p, lib, g, bytes) ==
              doctest::Approx(ring->simulate_full(engine(e), *p, lib, g, bytes)).epsilon(1e-9).scale(ffsim::testing::kRelative));
        CHECK(rs->simulate(engine(e), *p, lib, g, bytes) ==
              doctest::Approx(rs->simulate_full(engine(e), *p, lib, g, bytes)).epsilon(1e-9).scale(ffsim::testing::kRelative));
        CHECK(ag->simulate(engine(e), *p, lib, g, bytes / n) ==
              doctest::Approx(ag->simulate_full(engine(e), *p, lib, g, bytes / n)).epsilon(1e-9).scale(ffsim::testing::kRelative));
      }
    }
  }
}

TEST_CASE("coll: closed forms equal both engines on contention-free cases") {
  const auto sc = cluster(2);
  const auto p = plan::make_platform(sc);
  const auto lib = config::load_library_params(testing::catalog());
  const double S = 64.0 * 1048576;
  SUBCASE("sendrecv across nodes") {
    // gpu3 of node 0 -> gpu5 of node 1 over GPUDirect: the node's GPU->NIC peer-to-peer cap binds
    // (9 GiB/s); time = NCCL's NET hop latency (it exceeds the physical one) + eps + S / 9 GiB/s.
    const coll::Group g{{sched::Place::gpu(0, 3), sched::Place::gpu(1, 5)}};
    const auto a = coll::algorithms().get("sendrecv").factory();
    const double closed = lib.nccl.simple.ring_hop_latency_net +
                          p->options().arbitration_latency + S / (9.0 * 1073741824.0);
    // The fire-flyer test cluster has no traffic section: weights are 1.
    CHECK(a->estimate(*p, lib, g, S).time == doctest::Approx(closed).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(a->simulate(engine("analytic"), *p, lib, g, S) == doctest::Approx(closed).epsilon(1e-9).scale(ffsim::testing::kRelative));
    CHECK(a->simulate(engine("simgrid"), *p, lib, g, S) == doctest::Approx(closed).epsilon(1e-9).scale(ffsim::testing::kRelative));
  }
  SUBCASE("ring allreduce of 2 GPUs on their own root ports") {
    // gpu0 <-> gpu1: each direction has its own links, nothing shared. Per step: NCCL's PCI hop
    // latency + eps + (S/2) / 20 GB/s (the GPU peer-to-peer cap), plus the GPU reduce kernel in the
    // reduce-scatter step (3 x S/2 / 1555 GB/s); one step per phase, plus the ring's base latency.
    const coll::Group g{{sched::Place::gpu(0, 0), sched::Place::gpu(0, 1)}};
    const auto a = coll::algorithms().get("nccl_ring").factory();
    const double step = lib.nccl.simple.ring_hop_latency_pci + p->options().arbitration_latency + (S / 2) / 20e9;
    const double closed = lib.nccl.simple.ring_base_latency + 2 * step + 3 * (S / 2) / 1555e9;
    CHECK(a->estimate(*p, lib, g, S).time == doctest::Approx(closed).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(a->simulate(engine("analytic"), *p, lib, g, S) == doctest::Approx(closed).epsilon(1e-9).scale(ffsim::testing::kRelative));
    CHECK(a->simulate(engine("simgrid"), *p, lib, g, S) == doctest::Approx(closed).epsilon(1e-9).scale(ffsim::testing::kRelative));
  }
}

TEST_CASE("coll: every algorithm runs on ranks {1,2,3,4,5,7,8,16} x sizes {0,1,3,4,100,1001,4097,16388} bytes") {
  const auto sc = cluster(2);
  const auto p = plan::make_platform(sc);
  auto lib = config::load_library_params(testing::catalog());
  lib.hfreduce.chunk_bytes = 1024;
  for (const auto& name : coll::algorithms().names()) {
    if (name == "hfreduce_nvlink" || name == "sendrecv") continue;  // NVLink pairs / exactly 2 ranks: own tests
    const auto a = coll::algorithms().get(name).factory();
    for (int n : {1, 2, 3, 4, 5, 7, 8, 16}) {
      if ((name == "hfreduce") && n > 8 && n % 8 != 0) continue;  // whole nodes beyond one node
      const auto g = coll::Group::first_gpus(*p, n);
      double prev = -1;
      // Odd byte counts too: sizes need not be whole elements of any dtype.
      for (double bytes : {0.0, 1.0, 3.0, 4.0, 100.0, 1001.0, 4097.0, 16388.0}) {
        CAPTURE(name);
        CAPTURE(n);
        CAPTURE(bytes);
        const double t = a->simulate(engine("analytic"), *p, lib, g, bytes);
        const double est = a->estimate(*p, lib, g, bytes).time;
        CHECK(std::isfinite(t));
        CHECK(std::isfinite(est));
        // The HFReduce family moves nothing for zero bytes: our library returns at once
        // (src/hfreduce/pipeline.cpp returns at count 0), so schedule and closed form are free.
        const bool host_family = name == "hfreduce" || name == "hf_reduce_scatter" || name == "hf_allgather";
        if (host_family && bytes == 0) {
          CHECK(t == 0.0);
          CHECK(est == 0.0);
        }
        if (n == 1) {
          if (name == "hfreduce") {
            // One GPU still goes through the host (Algorithm 1 with one device: D2H, then the
            // write-back; the library's one-device pipeline copies too): free only without data.
            CHECK((t > 0) == (bytes > 0));
            CHECK((est > 0) == (bytes > 0));
          } else {
            // One rank has nothing to exchange: NCCL returns at once, and so do the host-path
            // shards (the shard is the whole vector, already in place).
            CHECK(t == 0.0);
            CHECK(est == 0.0);
          }
        } else {
          CHECK(t >= 0);
          CHECK(est >= 0);
          if (bytes > 0) CHECK(t > 0);  // two or more ranks with data always move some of it
        }
        // More bytes never take less time.
        CHECK(t >= prev * (1 - 1e-12));
        prev = t;
      }
    }
  }
}

TEST_CASE("coll: the HFReduce family checks its group at zero bytes too") {
  // Zero bytes move nothing, but a group the algorithm cannot run (unequal GPUs per node) is still
  // an error, in the schedule and the closed form alike.
  const auto sc = cluster(2);
  const auto p = plan::make_platform(sc);
  const auto lib = config::load_library_params(testing::catalog());
  const coll::Group bad{{sched::Place::gpu(0, 0), sched::Place::gpu(0, 1), sched::Place::gpu(1, 0)}};
  for (const char* name : {"hfreduce", "hf_reduce_scatter", "hf_allgather"}) {
    CAPTURE(name);
    const auto a = coll::algorithms().get(name).factory();
    CHECK_THROWS_AS((void)a->estimate(*p, lib, bad, 0.0), ValueError);
    CHECK_THROWS_AS((void)a->simulate(engine("analytic"), *p, lib, bad, 0.0), ValueError);
  }
}

TEST_CASE("coll::nccl: NCCL's own model picks the ring at small scale and the tree at large scale") {
  const auto lib = config::load_library_params(testing::catalog());
  const auto p = plan::make_platform(cluster(180));
  // 184 MiB: the ring's latency 2(n-1) hops grows linearly, the tree's logarithmically.
  const double S = 184.0 * 1048576;
  CHECK(coll::nccl_pick(*p, lib, coll::Group::first_gpus(*p, 16), S).algorithm == "nccl_ring");
  const auto g = coll::Group::first_gpus(*p, 1440);
  CHECK(coll::nccl_pick(*p, lib, g, S).algorithm == "nccl_tree");
  const auto t = coll::nccl_cost_table(*p, lib, g, S);
  REQUIRE(t.size() == 6);  // ring and tree x LL, LL128, Simple (coll_nccl_tuning_test.cpp)
  const auto& ring = coll::nccl_row(t, "nccl_ring", coll::NcclProtocol::Simple);
  const auto& tree = coll::nccl_row(t, "nccl_tree", coll::NcclProtocol::Simple);
  // Ring latency per tuning.cc: base + (2(n-1) - 2(nodes-1)) PCI hops + 2(nodes-1) NET hops; one
  // compute NIC: `channels` channels at min(pci, net) speed each; algBw = busBw n / 2(n-1).
  // 184 MiB is above the plateau's threshold (1,440 x 4 KiB = 5.6 MiB): the latency x 1.9.
  const int n = 1440, nodes = 180;
  const double ring_lat = lib.nccl.ring_plateau_factor *
                          (lib.nccl.simple.ring_base_latency + (2 * (n - 1) - 2 * (nodes - 1)) * lib.nccl.simple.ring_hop_latency_pci +
                           2 * (nodes - 1) * lib.nccl.simple.ring_hop_latency_net);
  CHECK(lib.nccl.ring_plateau_factor == 1.9);
  CHECK(ring.latency == doctest::Approx(ring_lat).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(ring.channels == lib.nccl.channels);
  const double bus = lib.nccl.channels * std::min(lib.nccl.pci_speed, lib.nccl.net_speed);
  CHECK(ring.algbw == doctest::Approx(bus * n / (2.0 * (n - 1))).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // The tree's algBw x its correction factor for 184 MiB (index log2(192,937,984 / 64) = 21).
  CHECK(tree.algbw == doctest::Approx(bus * lib.nccl.tree_bw_factor / 2 * lib.nccl.simple.tree_correction.at(21))
                          .epsilon(1e-12)
                          .scale(ffsim::testing::kRelative));
}

TEST_CASE("coll::nccl: the ring's plateau (tuning.cc) multiplies its latency across nodes from nRanks x 4 KiB on") {
  const auto lib = config::load_library_params(testing::catalog());
  const auto& nc = lib.nccl;
  const auto p = plan::make_platform(cluster(180));
  // Unscaled ring latency: base + (2(n-1) - 2(nodes-1)) PCI hops + 2(nodes-1) NET hops.
  auto raw = [&](int n, int nodes) {
    return nc.simple.ring_base_latency + (2 * (n - 1) - 2 * (nodes - 1)) * nc.simple.ring_hop_latency_pci +
           2 * (nodes - 1) * nc.simple.ring_hop_latency_net;
  };
  for (int n : {8, 16, 24, 128, 1440}) {
    CAPTURE(n);
    const auto g = coll::Group::first_gpus(*p, n);
    const int nodes = (n + 7) / 8;
    const double threshold = n * nc.ring_plateau_bytes_per_rank;  // nRanks / 16 x 65536 = nRanks x 4 KiB
    CHECK(threshold == n * 4096.0);
    // One node: never; several: from the threshold on (>=), not one byte below it.
    const double factor = nodes > 1 ? nc.ring_plateau_factor : 1.0;
    const auto ring_lat = [&](double bytes) {
      return coll::nccl_row(coll::nccl_cost_table(*p, lib, g, bytes), "nccl_ring", coll::NcclProtocol::Simple).latency;
    };
    const auto tree_lat = [&](double bytes) {
      return coll::nccl_row(coll::nccl_cost_table(*p, lib, g, bytes), "nccl_tree", coll::NcclProtocol::Simple).latency;
    };
    CHECK(ring_lat(threshold) ==
          doctest::Approx(factor * raw(n, nodes)).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(ring_lat(threshold - 1) == doctest::Approx(raw(n, nodes)).epsilon(1e-12).scale(ffsim::testing::kRelative));
    // Size 0 is below every threshold; the tree's latency never changes.
    CHECK(ring_lat(0) == doctest::Approx(raw(n, nodes)).epsilon(1e-12));
    CHECK(tree_lat(threshold) == tree_lat(0));
  }
  // 184 MiB on 16 nodes (128 GPUs): ring 1.9 x 1.57 ms + 193 MB / 24.2 GB/s = 11.0 ms against the
  // tree's 2 (7 x 28 + 4 x 50) us + 193 MB / (21.6 x 0.9 correction) GB/s = 10.7 ms: the tree
  // (without the plateau the ring, 9.5 ms, would win); 8 nodes (64 GPUs): ring 1.9 x 0.78 + 7.9 =
  // 9.4 ms < tree 0.69 + 9.9 = 10.6 ms. (LL and LL128 lose at this size: LL128 is off on PCIe
  // nodes, LL's busBw is a quarter; coll_nccl_tuning_test.cpp.)
  const double S = 184.0 * 1048576;
  CHECK(coll::nccl_pick(*p, lib, coll::Group::first_gpus(*p, 128), S).algorithm == "nccl_tree");
  CHECK(coll::nccl_pick(*p, lib, coll::Group::first_gpus(*p, 64), S).algorithm == "nccl_ring");
  auto flat = lib;
  flat.nccl.ring_plateau_factor = 1;
  CHECK(coll::nccl_pick(*p, flat, coll::Group::first_gpus(*p, 128), S).algorithm == "nccl_ring");
}

TEST_CASE("coll::nccl: on 8-NIC NVSwitch nodes NCCL's model counts a rail's channels per NIC and NVLink hops") {
  const auto lib = config::load_library_params(testing::catalog());
  const auto p = plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/dgx-a100-cluster.json", testing::catalog()));
  const double S = 184.0 * 1048576;
  const auto& nc = lib.nccl;
  // DGX-A100: 8 compute NICs -> 8 x channels; per channel min(NVLink (above the NIC), net) = net
  // speed; busBw = min(16 x 25 GB/s, 235 GB/s) = 235 GB/s (the sm80 cap).
  for (int gpus : {16, 64, 256}) {
    CAPTURE(gpus);
    const auto g = coll::Group::first_gpus(*p, gpus);
    const int nodes = gpus / 8;
    const auto v = coll::nccl_view(*p, lib, g);
    CHECK(v.nics == 8);
    CHECK(v.channels == 8 * nc.channels);
    CHECK(v.intra_nvlink);
    const double bus = std::min(v.channels * nc.net_speed, nc.max_bus_bw);
    CHECK(v.bus_bw == doctest::Approx(bus).epsilon(1e-12).scale(ffsim::testing::kRelative));
    const auto t = coll::nccl_cost_table(*p, lib, g, S);
    // Ring (Simple): intra-node steps at NVLink's hop latency.
    const double ring_lat = nc.ring_plateau_factor *  // several nodes, 184 MiB >= gpus x 4 KiB
                            (nc.simple.ring_base_latency + (2 * (gpus - 1) - 2 * (nodes - 1)) * nc.simple.ring_hop_latency_nvlink +
                             2 * (nodes - 1) * nc.simple.ring_hop_latency_net);
    const double ring = ring_lat + S / (bus * gpus / (2.0 * (gpus - 1)));
    // Tree (Simple): a chain of 7 NVLink hops and log2(nodes) network hops (nodes a power of two
    // here), up and down; algBw busBw x 0.9 / 2 x the correction factor at 184 MiB (index 21).
    const double tree_lat = nc.simple.tree_base_latency + 2 * (7 * nc.simple.tree_hop_latency_nvlink + std::log2(nodes) * nc.simple.tree_hop_latency_net);
    const double tree = tree_lat + S / (bus * nc.tree_bw_factor / 2 * nc.simple.tree_correction.at(21));
    CHECK(coll::nccl_row(t, "nccl_ring", coll::NcclProtocol::Simple).time ==
          doctest::Approx(ring).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(coll::nccl_row(t, "nccl_tree", coll::NcclProtocol::Simple).time ==
          doctest::Approx(tree).epsilon(1e-12).scale(ffsim::testing::kRelative));
    // NVLink inside the node: LL128 is on, and at 184 MiB it beats Simple on both algorithms
    // (busBw 235 x 0.92 = 216 GB/s with a tenth of Simple's hop latencies).
    CHECK(coll::nccl_pick(*p, lib, g, S).protocol == coll::NcclProtocol::LL128);
  }
  // With 235 GB/s the ring's 2(n-1) hop latencies weigh more: LL128 at 16 GPUs ring 1.74 against
  // tree 2.02 ms, at 64 ring 2.04 against 2.06 ms, at 256 ring 2.89 against tree 2.09 ms.
  CHECK(coll::nccl_pick(*p, lib, coll::Group::first_gpus(*p, 16), S).algorithm == "nccl_ring");
  CHECK(coll::nccl_pick(*p, lib, coll::Group::first_gpus(*p, 64), S).algorithm == "nccl_ring");
  CHECK(coll::nccl_pick(*p, lib, coll::Group::first_gpus(*p, 256), S).algorithm == "nccl_tree");
}

TEST_CASE("coll::hfreduce: host-memory accounting per node, GDRCopy and cudaMemcpy write-back") {
  // arXiv 2408.14158 Sec. IV, per node in multiples of S: D2H 8 writes; intra-node add 8 reads + 1 write;
  // IB send 2 reads, receive 2 writes; tree add 1 read; H2D 2 reads with GDRCopy (one per socket),
  // 8 with cudaMemcpy (one per GPU): 24 S and 30 S. The model counts its own flows' DRAM bytes.
  const auto sc = cluster(4);
  const auto p = plan::make_platform(sc);
  auto lib = config::load_library_params(testing::catalog());
  const auto hf = coll::algorithms().get("hfreduce").factory();
  const auto g = coll::Group::first_gpus(*p, 32);
  const double S = 184.0 * 1048576;
  CHECK(hf->estimate(*p, lib, g, S).host_traffic_per_byte == doctest::Approx(24.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
  lib.hfreduce.h2d = "memcpy";
  CHECK(hf->estimate(*p, lib, g, S).host_traffic_per_byte == doctest::Approx(30.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // The same traffic, measured by the fluid engine on the whole schedule: DRAM bytes of node 1 / S.
  lib.hfreduce.h2d = "gdrcopy";
  sched::Schedule s;
  (void)hf->emit(s, *p, lib, g, S, coll::Options{});
  const auto r = engine("analytic").run(s, *p);
  double dram = 0;
  for (std::uint32_t i = 0; i < r.usage.size(); ++i)
    if (p->resource(i).kind == platform::ResourceKind::Dram && p->node_of_resource(i) == std::make_pair(false, 1))
      dram += r.usage[i].bytes;
  CHECK(dram / S == doctest::Approx(24.0).epsilon(1e-6).scale(ffsim::testing::kRelative));
}

TEST_CASE("coll::hfreduce: the closed form tracks the fluid simulation of the whole schedule") {
  // The closed form is a pipeline's time: K - 1 periods (the bottleneck bound of one chunk of every
  // stage of a node) plus the fill, one period in the node's stages and per tree level one hop of
  // the first part up (only the up traffic in flight: the larger of the node's parent and child
  // counts of parts share the NIC; the receiver adds it) and one down (every part in flight, no
  // add). The simulation runs every chunk, GPU and node of the same schedule, so the two differ
  // only by what the pipeline formula leaves out (stage overlap inside a period, the last chunk's
  // drain, max-min sharing of the host memory between stages): measured 0.6-1.2% below the
  // simulation on 2-8 nodes (2026-12-01, since every flow of a class carries its lane weight; 0.4-0.8%
  // before, when a lone HFReduce's sends outweighed its copies 4:1), 1.5% here. The earlier fill
  // (every hop at the full NIC share, adds on the way down too) was 1.9-4.9% slow from 4 nodes on
  // and fails. With NVLink the period is the NIC's and the pair exchange adds stages: 2.0-3.8%
  // below (2.3-3.4% before), 4.5% here.
  closed_form_tracks("hfreduce", "fire-flyer-2", 0.015);
  closed_form_tracks("hfreduce_nvlink", "fire-flyer-2-nvlink", 0.045);
}

TEST_CASE("coll: NCCL's rings on DGX-A100 nodes: one per NIC, the step shortcut exact, the NICs all used") {
  // ring_orders: 8 rings (one per compute NIC), each a permutation of the group's ranks; ring r
  // enters every node at GPU r (whose NIC is nic r) and leaves from its switch partner r ^ 1, so
  // that the hop between nodes runs NIC r's GPU pair to NIC r's GPU pair. Then every NIC sends one
  // ring's segment per step: at 2 nodes the step's bound is one segment of S / n / 8 per NIC, and
  // the allreduce moves 8x what one ring through one NIC (the old model) could.
  const std::string text = R"({"name": "t", "cluster": {"node": "dgx_a100", "nodes": 4},
      "fabric": {"topology": "two_layer", "switch": "qm8700"}})";
  const auto p = plan::make_platform(plan::parse_scenario(config::Document::parse(text, "t.json", false), testing::catalog()));
  const auto lib = config::load_library_params(testing::catalog());
  const auto g = coll::Group::first_gpus(*p, 32);
  const auto orders = coll::ring_orders(*p, g, lib.nccl.numa_restricted);
  REQUIRE(orders.size() == 8);
  for (std::size_t r = 0; r < orders.size(); ++r) {
    CAPTURE(r);
    std::vector<int> sorted = orders[r];
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 32; ++i) CHECK(sorted[static_cast<std::size_t>(i)] == i);
    for (int v = 0; v < 4; ++v) {
      CHECK(g.ranks[static_cast<std::size_t>(orders[r][static_cast<std::size_t>(8 * v)])].index == static_cast<int>(r));
      CHECK(g.ranks[static_cast<std::size_t>(orders[r][static_cast<std::size_t>(8 * v + 7)])].index == static_cast<int>(r ^ 1));
    }
  }
  const auto ring = coll::algorithms().get("nccl_ring").factory();
  const auto rs = coll::algorithms().get("reduce_scatter").factory();
  for (const char* e : {"analytic", "simgrid"}) {
    for (int n : {16, 24, 32}) {
      CAPTURE(e);
      CAPTURE(n);
      const auto gn = coll::Group::first_gpus(*p, n);
      const double S = 64.0 * 1048576;
      CHECK(ring->simulate(engine(e), *p, lib, gn, S) ==
            doctest::Approx(ring->simulate_full(engine(e), *p, lib, gn, S)).epsilon(1e-9).scale(ffsim::testing::kRelative));
      CHECK(rs->simulate(engine(e), *p, lib, gn, S) ==
            doctest::Approx(rs->simulate_full(engine(e), *p, lib, gn, S)).epsilon(1e-9).scale(ffsim::testing::kRelative));
    }
  }
  // Every compute NIC of node 0 carries traffic, as much each way on each (fluid engine's bytes).
  sched::Schedule s;
  (void)ring->emit(s, *p, lib, coll::Group::first_gpus(*p, 16), 64.0 * 1048576, coll::Options{});
  const auto res = engine("analytic").run(s, *p);
  std::vector<double> tx;
  for (std::uint32_t i = 0; i < p->resource_count(); ++i) {
    const std::string name = p->resource_name(i);
    if (name.rfind("n0.nic", 0) == 0 && name.size() > 8 && name.substr(name.size() - 3) == ".tx" && name != "n0.nic8.tx")
      tx.push_back(res.usage[i].bytes);
  }
  REQUIRE(tx.size() == 8);
  for (double b : tx) CHECK(b == doctest::Approx(tx.front()).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(tx.front() > 0);
}

TEST_CASE("coll::nccl_tree: the closed form tracks the fluid simulation, one rail or eight") {
  // The closed form: K - 1 periods (the bottleneck bound of one chunk of every rail's trees at one
  // node; the hop latencies overlap the previous chunks' sends) and the fill, the first chunk up
  // the chain and the tree and down again, each hop at its latency plus both trees' chunks at its
  // path's own rate; a head sends and receives one chunk per tree link of the busiest node (4 over
  // both trees from 4 nodes on, 2 on 2 nodes). Measured (2026-11-30, time closed form / simulation
  // - 1): Fire-Flyer 2-8 nodes +12.8% .. +13.1%, DGX-A100 (8 rails) +1.4% .. -4.9%. Before the
  // links were counted (4 everywhere) and while a parent's sends to its two children went one after
  // the other: +12% .. -4% and +24% .. -10%; with the latency in every period +14% .. -11% and +1%
  // .. -23% at 2-64 nodes; with every hop half a period in the fill +5% .. +34% and +38% .. +171%.
  closed_form_tracks("nccl_tree", "fire-flyer-2", 0.15);
  closed_form_tracks("nccl_tree", "dgx-a100-cluster", 0.10);
}

TEST_CASE("coll::nccl_tree: a parent sends each chunk to its two children at once") {
  // NCCL's tree kernel broadcasts down with one primitive for all of a rank's children
  // (FanAsymmetric<1, NCCL_MAX_TREE_ARITY>): one pass copies a step to every send peer. So a
  // node head's network sends of one chunk to its two child nodes overlap in time. On 4 Fire-Flyer
  // nodes (32 GPUs) both trees have an interior node with two child nodes. The schedule until
  // 2026-11-30 sent to the second child after the first had its chunk: no two down sends of one
  // head overlapped, and this test failed.
  const auto p = plan::make_platform(cluster(4));
  const auto lib = config::load_library_params(testing::catalog());
  const auto tree = coll::algorithms().get("nccl_tree").factory();
  sched::Schedule s;
  (void)tree->emit(s, *p, lib, coll::Group::first_gpus(*p, 32), 32.0 * 1048576, coll::Options{});
  const auto res = engine("analytic").run(s, *p);
  std::uint32_t down = 0;
  while (down < s.tags().size() && s.tags()[down] != "nccl tree down") ++down;
  REQUIRE(down < s.tags().size());
  std::map<std::string, std::vector<sched::OpId>> by_head;  // network sends down, by sending GPU
  for (sched::OpId i = 0; i < s.size(); ++i) {
    const auto& op = s.op(i);
    if (op.kind == sched::OpKind::Transfer && op.tag == down && op.at.node != op.to.node)
      by_head[sched::place_name(op.at)].push_back(i);
  }
  int heads_with_two = 0, overlapping = 0;
  for (const auto& [head, ops] : by_head) {
    std::set<int> to_nodes;
    for (auto i : ops) to_nodes.insert(s.op(i).to.node);
    if (to_nodes.size() < 2) continue;
    ++heads_with_two;
    bool any = false;
    for (auto i : ops)
      for (auto j : ops)
        if (s.op(i).to.node != s.op(j).to.node && res.ops[i].start < res.ops[j].end && res.ops[j].start < res.ops[i].end)
          any = true;
    overlapping += any;
  }
  CHECK(heads_with_two >= 2);
  CHECK(overlapping == heads_with_two);
}

TEST_CASE("coll::piece_count: pieces of at most a size, at least one, and no more than a schedule holds") {
  const double MiB = 1048576;
  // ceil(bytes / piece), at least 1: 0 bytes or no piece size is one piece; an exact multiple is not
  // rounded up; one byte more is one piece more.
  CHECK(coll::piece_count(0, 4 * MiB, 16) == 1);
  CHECK(coll::piece_count(184 * MiB, 0, 16) == 1);
  CHECK(coll::piece_count(184 * MiB, 4 * MiB, 16) == 46);
  CHECK(coll::piece_count(184 * MiB + 1, 4 * MiB, 16) == 47);
  CHECK(coll::piece_count(1, 4 * MiB, 16) == 1);
  // The limit is on pieces x copies: 2^23 operations. 2^19 pieces for 16 ranks is exactly 2^23
  // (allowed); one rank more, or one piece more, is over.
  const double limit = static_cast<double>(sched::Schedule::kMaxOps);
  CHECK(coll::piece_count(limit / 16 * 4, 4, 16) == static_cast<int>(limit / 16));
  CHECK_THROWS_AS((void)coll::piece_count(limit / 16 * 4, 4, 17), SimulationError);
  CHECK_THROWS_AS((void)coll::piece_count(limit / 16 * 4 + 1, 4, 16), SimulationError);
  // Sizes beyond an int's range give the error, not an overflowed count; closed forms count in doubles.
  CHECK_THROWS_AS((void)coll::piece_count(1e30, 4 * MiB, 1), SimulationError);
  CHECK(coll::piece_count_real(1e30, 4e6) == doctest::Approx(2.5e23));
}

TEST_CASE("coll::nccl_tree_chunk: NCCL's chunk rule (\"nccl\") and a fixed chunk") {
  // NCCL 2.x (src/enqueue.cc computeColl): chunk = one step (512 KiB), halved while a channel's
  // bytes / chunk (integer) < depth x 8 and chunk > 128 KiB, then < depth x 4 and > 64 KiB, then
  // < depth and > 32 KiB; depth = ranks / nodes - 1 + floor(log2(nodes)).
  auto lib = config::load_library_params(testing::catalog());
  CHECK(lib.nccl.step_size == 524288);
  const double fixed = lib.nccl.tree_chunk_bytes;
  CHECK(fixed > 0);  // the shipped library: a fixed chunk, whatever the size
  CHECK(coll::nccl_tree_chunk(lib, 1e3, 16, 2) == fixed);
  lib.nccl.tree_chunk_bytes = 0;  // "nccl"
  const double MiB = 1048576;
  // 184 MiB on 2 nodes of 8: 92 MiB per channel, depth 7 + 1 = 8: 184 steps >= 64, no halving.
  CHECK(coll::nccl_tree_chunk(lib, 92 * MiB, 16, 2) == 524288);
  // A 25 MiB bucket on 512 GPUs (64 nodes): 12.5 MiB per channel, depth 7 + 6 = 13 (x8 = 104):
  // 25 -> 256 KiB 50 -> 128 KiB 100 (< 104, but the first loop stops at 128 KiB); 100 >= 52.
  CHECK(coll::nccl_tree_chunk(lib, 12.5 * MiB, 512, 64) == 131072);
  // 1 MiB on 16 GPUs: 512 KiB per channel, depth 8: 128 KiB (4 < 64), 64 KiB (8 < 32), 8 >= 8.
  CHECK(coll::nccl_tree_chunk(lib, 0.5 * MiB, 16, 2) == 65536);
  // 0 bytes on 3 nodes of 5 (depth 4 + 1 = 5): halved to the floor, 32 KiB.
  CHECK(coll::nccl_tree_chunk(lib, 0, 15, 3) == 32768);
  // One node of 8: depth 7 + 0; 1,040 KiB per channel: 2 steps (floor) < 56 -> 128 KiB (8 < 56),
  // 8 < 28 -> 64 KiB (16), 16 >= 7.
  CHECK(coll::nccl_tree_chunk(lib, 1040 * 1024, 8, 1) == 65536);
}

TEST_CASE("config::load_library_params: tree_chunk takes a size or \"nccl\", anything else is an error at its pointer") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ffsim-tree-chunk-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(FFSIM_MODELS_DIR, dir, fs::copy_options::recursive);
  const fs::path nccl = dir / "libraries" / "nccl.json";
  std::string text;
  {
    std::ifstream in(nccl);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string from = R"("tree_chunk": {"value": "4MiB")";
  REQUIRE(text.find(from) != std::string::npos);
  auto load_with = [&](const std::string& value) {
    std::string t = text;
    t.replace(t.find(from), from.size(), R"("tree_chunk": {"value": )" + value);
    std::ofstream(nccl) << t;
    cli::Context ctx;
    cli::register_kinds(ctx);
    return config::load_library_params(config::Catalog::load(dir.string(), ctx.kind_names()));
  };
  CHECK(load_with(R"("nccl")").nccl.tree_chunk_bytes == 0);
  CHECK(load_with(R"("1MiB")").nccl.tree_chunk_bytes == 1048576);
  for (const char* bad : {R"("fast")", R"("0MiB")", R"("2GB/s")"}) {
    CAPTURE(bad);
    try {
      (void)load_with(bad);
      FAIL("no error");
    } catch (const ConfigError& e) {
      CHECK(e.pointer() == "/tree_chunk/value");
      CHECK(e.file().find("nccl.json") != std::string::npos);
    }
  }
  // The ring's plateau: a factor of at least 1 and a size per rank, each an error at its pointer.
  const std::string plateau = R"("latency_factor": {"value": 1.9)";
  REQUIRE(text.find(plateau) != std::string::npos);
  for (const auto& [bad, where] : std::vector<std::pair<std::string, std::string>>{
           {R"("latency_factor": {"value": 0.5)", "/ring_plateau/latency_factor/value"},
           {R"("latency_factor": {"value": "1.9x")", "/ring_plateau/latency_factor/value"},
           {R"("latency_factor_": {"value": 1.9)", "/ring_plateau"}}) {
    CAPTURE(bad);
    std::string t = text;
    t.replace(t.find(plateau), plateau.size(), bad);
    std::ofstream(nccl) << t;
    cli::Context ctx;
    cli::register_kinds(ctx);
    try {
      (void)config::load_library_params(config::Catalog::load(dir.string(), ctx.kind_names()));
      FAIL("no error");
    } catch (const ConfigError& e) {
      CHECK(e.pointer().rfind(where, 0) == 0);
      CHECK(e.file().find("nccl.json") != std::string::npos);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("coll::nccl_tree: a hop's latency is paid once in the pipeline's fill, not per chunk") {
  // NCCL's latency model charges a tree its hop latencies once per operation: base + 2((ppn - 1)
  // intraLat + log2(nNodes) interLat). In the schedule a chunk's latency on a hop runs from the
  // moment its data is ready, beside the previous chunk's send on that connection. On 2 Fire-Flyer
  // nodes (16 GPUs) a chunk's longest trip is 7 chain hops up, the network hop, and 7 chain hops
  // down (the root's partner receives and forwards): at most 14 x 28 us + 2 x 50 us = 492 us of
  // latency on the critical path, whatever the chunk count K (4 MiB chunks, each tree half the
  // vector). Charged per chunk and hop after the previous send (the schedule until 2026-11-30) they
  // added 0.71 ms at K = 8 and 0.54 ms at K = 32: this test failed.
  const auto p = plan::make_platform(cluster(2));
  auto lib = config::load_library_params(testing::catalog());
  auto none = lib;
  none.nccl.simple.tree_hop_latency_pci = none.nccl.simple.tree_hop_latency_nvlink = none.nccl.simple.tree_hop_latency_net = 0;
  const auto tree = coll::algorithms().get("nccl_tree").factory();
  const auto g = coll::Group::first_gpus(*p, 16);
  const double fill = 14 * lib.nccl.simple.tree_hop_latency_pci + 2 * lib.nccl.simple.tree_hop_latency_net;
  // (The latencies may even shorten the whole: they shift when flows start, and max-min shares
  // the links differently; measured -0.25 ms at K = 8 and +0.30 ms at K = 32.)
  for (int K : {8, 32}) {
    CAPTURE(K);
    const double S = 2.0 * K * lib.nccl.tree_chunk_bytes;
    const double with = tree->simulate(engine("analytic"), *p, lib, g, S);
    const double without = tree->simulate(engine("analytic"), *p, none, g, S);
    CHECK(with - without <= fill * (1 + 1e-9));
  }
}

TEST_CASE("coll::nccl_ring: a small ring pays the mean hop latency per step (NCCL's own latency model)") {
  // 16 GPUs on 2 Fire-Flyer nodes, 16 bytes (one byte per segment: the transfers take nothing).
  // The ring has 16 hops: 2 between the nodes (NCCL's network hop latency, 9.6 us) and 14 over PCIe
  // (5.7 us). A piece of data crosses them one after another, so its 2(n - 1) = 30 steps pay
  // 30 x the mean hop latency, (2 x 9.6 + 14 x 5.7) / 16 = 6.1875 us, plus NCCL's base latency
  // 8.4 us: 194.0 us. (A barrier at the slowest hop would give 8.4 + 30 x 9.6 = 296.4 us.) The
  // rest (arbitration, a byte's transfer, the reduce kernels) is under 1 us per step.
  const auto p = plan::make_platform(cluster(2));
  const auto lib = config::load_library_params(testing::catalog());
  const auto ring = coll::algorithms().get("nccl_ring").factory();
  const auto g = coll::Group::first_gpus(*p, 16);
  const double mean = (2 * lib.nccl.simple.ring_hop_latency_net + 14 * lib.nccl.simple.ring_hop_latency_pci) / 16;
  const double expect = lib.nccl.simple.ring_base_latency + 30 * mean;
  for (const char* e : {"analytic", "simgrid"}) {
    CAPTURE(e);
    const double t = ring->simulate(engine(e), *p, lib, g, 16);
    CHECK(t >= expect);
    CHECK(t <= expect + 30 * 1e-6);
  }
  CHECK(ring->estimate(*p, lib, g, 16).time >= expect);
  CHECK(ring->estimate(*p, lib, g, 16).time <= expect + 30 * 1e-6);
}

TEST_CASE("coll::broadcast: one ring per compute NIC, each carrying its part - the closed form tracks one ring") {
  const auto lib = config::load_library_params(testing::catalog());
  const auto bc = coll::algorithms().get("broadcast").factory();
  // DGX-A100, 4 nodes: 8 rings rotated to start at the root, ring r leaving node 0 through NIC r,
  // so each of node 0's 8 compute NICs sends exactly its ring's part, S / 8 (fluid engine's bytes).
  const auto p = plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/dgx-a100-cluster.json", testing::catalog()));
  const double S = 64.0 * 1048576;
  sched::Schedule s;
  coll::Options o;
  (void)bc->emit(s, *p, lib, coll::Group::first_gpus(*p, 32), S, o);
  const auto res = engine("analytic").run(s, *p);
  int nics = 0;
  for (std::uint32_t i = 0; i < p->resource_count(); ++i) {
    const std::string name = p->resource_name(i);
    if (name.rfind("n0.nic", 0) == 0 && name.size() > 8 && name.substr(name.size() - 3) == ".tx" && name != "n0.nic8.tx") {
      CAPTURE(name);
      CHECK(res.usage[i].bytes == doctest::Approx(S / 8).epsilon(1e-12).scale(ffsim::testing::kRelative));
      ++nics;
    }
  }
  CHECK(nics == 8);
  // One ring per node (Fire-Flyer 2, with and without NVLink pairs): the closed form, the first
  // chunk hop by hop at each hop's own rate plus K - 1 steady-state periods (the hop latencies run
  // beside the previous chunks' sends: in the fill only), within 5% of the simulation at 16-64 GPUs
  // (measured 2026-11-30: -1.1% .. -4.0% on Fire-Flyer 2, -0.9% .. -1.8% with NVLink; -0.5% ..
  // +2.8% while the schedule paid every chunk's latency after the previous send and the period
  // included it).
  closed_form_tracks("broadcast", "fire-flyer-2", 0.05);
  closed_form_tracks("broadcast", "fire-flyer-2-nvlink", 0.05);
}

TEST_CASE("coll::hfreduce: with k result slots a chunk's reduce waits until chunk c - k went back to every GPU") {
  // Our library reuses depth chunk-sized result slots (src/hfreduce/pipeline.cpp waits for chunk
  // c - depth's H2D on every device before reducing chunk c into its slot); the Fire-Flyer model
  // (result_slots 0) reduces into a buffer of the whole vector. 4 GPUs of one Fire-Flyer node, 7 MiB
  // in 1 MiB chunks (7 chunks: an odd count), no software overhead. Ops are emitted chunk by chunk,
  // so the i-th reduce and H2D ops belong to chunk i / (ops per chunk).
  coll::LibraryParams lib = config::load_library_params(testing::catalog());
  lib.hfreduce.chunk_bytes = 1048576;
  lib.hfreduce.chunk_overhead = 0;
  const auto p = plan::make_platform(cluster(1));
  const auto g = coll::Group::first_gpus(*p, 4);
  const auto a = coll::algorithms().get("hfreduce").factory();
  const int K = 7;
  // For each chunk, the first reduce's start and the last H2D's end.
  auto run = [&](int slots) {
    lib.hfreduce.result_slots = slots;
    sched::Schedule s;
    (void)a->emit(s, *p, lib, g, 7.0 * 1048576, coll::Options{});
    eval::FluidEngine fluid;
    const eval::Result r = fluid.run(s, *p);
    std::vector<sched::OpId> red, h2d;
    for (sched::OpId i = 0; i < s.size(); ++i) {
      const std::string& t = s.tags()[s.op(i).tag];
      if (t == "hfreduce reduce") red.push_back(i);
      if (t == "hfreduce H2D") h2d.push_back(i);
    }
    REQUIRE(red.size() % K == 0);
    REQUIRE(h2d.size() % K == 0);
    std::vector<double> red_start(K, 1e300), h2d_end(K, 0);
    for (std::size_t i = 0; i < red.size(); ++i) {
      auto& x = red_start[i / (red.size() / K)];
      x = std::min(x, r.ops[red[i]].start);
    }
    for (std::size_t i = 0; i < h2d.size(); ++i) {
      auto& x = h2d_end[i / (h2d.size() / K)];
      x = std::max(x, r.ops[h2d[i]].end);
    }
    return std::make_pair(red_start, h2d_end);
  };
  for (int k : {1, 2, 3}) {
    CAPTURE(k);
    const auto [red_start, h2d_end] = run(k);
    for (int c = k; c < K; ++c) {
      CAPTURE(c);
      CHECK(red_start[static_cast<std::size_t>(c)] >= h2d_end[static_cast<std::size_t>(c - k)]);
    }
  }
  // Without slots the reducer runs ahead: some chunk's reduce starts before the previous chunk went
  // back (so the checks above can fail).
  const auto [red_start, h2d_end] = run(0);
  bool ahead = false;
  for (int c = 1; c < K; ++c)
    ahead = ahead || red_start[static_cast<std::size_t>(c)] < h2d_end[static_cast<std::size_t>(c - 1)];
  CHECK(ahead);
}

TEST_CASE("coll::hfreduce: a copy's hand-off to its stream is paid only where the stream's queue ran empty") {
  // copy_handoff (our library's host backend: the copy thread sleeps once its queue is empty) is a
  // delay after what a copy waits for other than its stream's previous copy; the copy waits for
  // both. So a copy starts at max(its hand-off's end, the previous copy's end on its stream): the
  // first copy of each stream pays the whole hand-off, a copy queued behind a busy stream none.
  // One Fire-Flyer node without a path latency (as calibration runs the host backend: the copy's
  // latency is the hand-off), 1 and 4 GPUs, D2H interleaved over the two sockets (two copies per
  // chunk on a GPU's D2H stream) or not (one), 7 chunks of 1 MiB (an odd count), 3 staging and
  // result slots, H2D by memcpy, no software overhead.
  coll::LibraryParams lib = config::load_library_params(testing::catalog());
  lib.hfreduce.chunk_bytes = 1048576;
  lib.hfreduce.chunk_overhead = 0;
  lib.hfreduce.staging_buffers = 3;
  lib.hfreduce.result_slots = 3;
  lib.hfreduce.h2d = "memcpy";
  auto sc = cluster(1);
  sc.cluster.node.pcie_latency = Seconds(0);
  const auto p = plan::make_platform(sc);
  const auto a = coll::algorithms().get("hfreduce").factory();
  for (const auto& [gpus, interleave] :
       {std::pair{1, true}, std::pair{4, true}, std::pair{1, false}, std::pair{4, false}}) {
    CAPTURE(gpus);
    CAPTURE(interleave);
    lib.hfreduce.interleave_d2h = interleave;
    const auto g = coll::Group::first_gpus(*p, gpus);
    sched::Schedule plain;
    (void)a->emit(plain, *p, lib, g, 7.0 * 1048576, coll::Options{});
    const double handoff = 50e-6;  // below a 1 MiB copy's time at the node's rates: queued copies hide it
    lib.hfreduce.copy_handoff = handoff;
    sched::Schedule s;
    (void)a->emit(s, *p, lib, g, 7.0 * 1048576, coll::Options{});
    lib.hfreduce.copy_handoff = 0;
    for (const std::string name : {"analytic", "simgrid"}) {
      CAPTURE(name);
      const eval::Result r = engine(name.c_str()).run(s, *p);
      // Each copy is followed by its hand-off (emitted right after it). Streams: each GPU's D2H
      // copies, each GPU's H2D copies, in emission (chunk) order.
      std::map<std::pair<int, bool>, double> stream_end;  // (gpu, is H2D) -> end of its last copy
      int copies = 0, hidden = 0, paid = 0;
      for (sched::OpId i = 0; i < s.size(); ++i) {
        const std::string& t = s.tags()[s.op(i).tag];
        if (t != "hfreduce D2H" && t != "hfreduce H2D") continue;
        ++copies;
        REQUIRE(i + 1 < s.size());
        REQUIRE(s.op(i + 1).kind == sched::OpKind::Delay);
        CHECK(s.op(i + 1).amount == handoff);
        const bool h2d = t == "hfreduce H2D";
        const int gpu = h2d ? s.op(i).to.index : s.op(i).at.index;
        const auto key = std::make_pair(gpu, h2d);
        const double previous = stream_end.count(key) ? stream_end[key] : 0.0;
        const double ready = r.ops[i + 1].end;
        CHECK(r.ops[i].start ==
              doctest::Approx(std::max(ready, previous)).epsilon(1e-9).scale(ffsim::testing::kRelative));
        if (previous > ready + 1e-9)
          ++hidden;  // queued behind a busy stream
        else
          ++paid;
        stream_end[key] = r.ops[i].end;
      }
      // 7 chunks, per GPU and chunk its D2H copies (one per socket interleaved) and an H2D; both
      // cases occur.
      CHECK(copies == 7 * gpus * ((interleave ? 2 : 1) + 1));
      CHECK(hidden > 0);
      CHECK(paid >= 2 * gpus);  // at least each stream's first copy
      // Without a hand-off the schedule has no delays of its own: one per copy fewer.
      CHECK(s.size() == plain.size() + static_cast<std::size_t>(copies));
    }
  }
}
