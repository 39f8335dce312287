// "nccl" runs NCCL's whole pick: the ring or tree schedule moves the picked protocol's chunks and
// bytes on the wire, at its latencies and under its per-channel cap (docs/nccl.md).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "app/engines.hpp"
#include "coll/collective.hpp"
#include "coll/common.hpp"
#include "coll/nccl_select.hpp"
#include "config/coll_reader.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

namespace {

constexpr double MiB = 1048576;

eval::Engine& engine(const std::string& name) {
  static std::unique_ptr<eval::Engine> fluid = app::make_engine("analytic");
  static std::unique_ptr<eval::Engine> simgrid = app::make_engine("simgrid");
  return name == "simgrid" ? *simgrid : *fluid;
}

std::unique_ptr<platform::Platform> scenario_platform(const std::string& name) {
  return plan::make_platform(
      plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/" + name + ".json", testing::catalog()));
}

coll::LibraryParams with(coll::LibraryParams lib, coll::NcclProtocol p) {
  lib.nccl.protocol = p;
  return lib;
}

// Both engines and the closed form give `a` over `g` for `bytes` the time `expected` (to 1e-4).
void check_everywhere(const coll::Algorithm& a, const platform::Platform& p, const coll::LibraryParams& lib,
                      const coll::Group& g, double bytes, double expected) {
  for (const char* eng : {"analytic", "simgrid"}) {
    CAPTURE(eng);
    CHECK(a.simulate(engine(eng), p, lib, g, bytes) ==
          doctest::Approx(expected).epsilon(1e-4).scale(ffsim::testing::kRelative));
  }
  CHECK(a.estimate(p, lib, g, bytes).time == doctest::Approx(expected).epsilon(1e-4).scale(ffsim::testing::kRelative));
}

}  // namespace

TEST_CASE("coll::nccl_tree_chunk: each protocol's chunk (LL one step, LL128 NCCL's halving rule)") {
  const auto base = config::load_library_params(testing::catalog());
  // LL: its buffer is 8 lines x 512 threads x 8 steps of 16 bytes, half of each line data: a step is
  // 4,096 lines, 32 KiB of data, the LL tree's chunk whatever the size.
  const auto ll = with(base, coll::NcclProtocol::LL);
  CHECK(ll.nccl.ll.step_size == 32768);
  CHECK(ll.nccl.ll.wire_factor == 2);
  for (const double bytes : {0.0, 1.0, 4096.0, 92 * MiB}) CHECK(coll::nccl_tree_chunk(ll, bytes, 128, 16) == 32768);
  // LL128: a step of its buffer is 614,400 bytes of 128-byte lines (120 data bytes each: 576,000 B
  // of data). NCCL halves the line chunk while nBytes / (nChannels x chunk) < nstepsLL128 x 64 / ppn
  // (above 128 KiB), then x 16 / ppn (above 32 KiB); nstepsLL128 = 1 + log2i(nNodes) + 0.1 ppn.
  const auto l128 = with(base, coll::NcclProtocol::LL128);
  CHECK(l128.nccl.ll128.step_size == 576000);
  CHECK(l128.nccl.ll128.wire_factor == doctest::Approx(128.0 / 120));
  // 8 MiB on 128 GPUs of 8-NIC nodes (16 nodes, ppn 8): per channel 8 MiB / 16 = 524,288 B;
  // nsteps = 1 + 4 + 0.8 = 5.8, thresholds 46.4 and 11.6. 614,400: 0 < 46.4 -> 307,200 (1) ->
  // 153,600 (3) -> 76,800 (stop: not above 128 KiB); 6 < 11.6 -> 38,400 (13 >= 11.6). Data:
  // 38,400 x 120 / 128 = 36,000 B.
  CHECK(coll::nccl_tree_chunk(l128, 8 * MiB / 16, 128, 16) == doctest::Approx(36000));
  // 1 GiB on the same: 64 MiB per channel, 109 line steps >= 46.4: no halving, 576,000 B.
  CHECK(coll::nccl_tree_chunk(l128, 1024 * MiB / 16, 128, 16) == doctest::Approx(576000));
  // 0 bytes on 1 node of 8 (nsteps 1.8; thresholds 14.4, 3.6): each loop halves while the chunk is
  // above its floor, so past it once: 614,400 -> ... -> 76,800 in the first, 38,400 -> 19,200 in
  // the second (38,400 > 32,768 still halves): 19,200 x 120 / 128 = 18,000 B of data.
  CHECK(coll::nccl_tree_chunk(l128, 0, 8, 1) == doctest::Approx(18000));
  // Simple keeps its own rule and the library's fixed [I] chunk.
  CHECK(coll::nccl_tree_chunk(base, 92 * MiB, 16, 2) == base.nccl.tree_chunk_bytes);
}

TEST_CASE("coll::nccl_protocol_cap: LL128 per channel, the LL ring's bus cap split over its rings, none for Simple") {
  const auto base = config::load_library_params(testing::catalog());
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(coll::nccl_protocol_cap(base, false, 2, 1, 2) == inf);
  CHECK(coll::nccl_protocol_cap(base, true, 1, 1, 2) == inf);
  // LL128: 16.7 GB/s of data per channel (ll128MaxBwPerCh, allreduce), on the wire x 128/120.
  const auto l128 = with(base, coll::NcclProtocol::LL128);
  CHECK(coll::nccl_protocol_cap(l128, false, 16, 1, 1) == doctest::Approx(16 * 16.7e9 * 128 / 120));
  CHECK(coll::nccl_protocol_cap(l128, true, 1, 8, 16) == doctest::Approx(16.7e9 * 128 / 120));
  // LL ring: llMaxBw by node count (87.7 / 22.5 / 19.0 GB/s) over R rings, x 2 on the wire; LL tree none.
  const auto ll = with(base, coll::NcclProtocol::LL);
  CHECK(coll::nccl_protocol_cap(ll, false, 2, 1, 1) == doctest::Approx(87.7e9 * 2));
  CHECK(coll::nccl_protocol_cap(ll, false, 2, 8, 2) == doctest::Approx(22.5e9 / 8 * 2));
  CHECK(coll::nccl_protocol_cap(ll, false, 2, 8, 16) == doctest::Approx(19.0e9 / 8 * 2));
  CHECK(coll::nccl_protocol_cap(ll, true, 1, 8, 16) == inf);
}

TEST_CASE("coll::nccl: runs NCCL's whole pick, protocol included, on both engines and the closed form") {
  const auto lib = config::load_library_params(testing::catalog());
  const auto p = scenario_platform("dgx-a100-cluster");
  const auto nccl = coll::algorithms().get("nccl").factory();
  const auto tree = coll::algorithms().get("nccl_tree").factory();
  const auto ring = coll::algorithms().get("nccl_ring").factory();
  struct Case {
    int gpus;
    double bytes;
    const char* algorithm;
    coll::NcclProtocol protocol;
  };
  // NCCL's picks on 8-NIC NVSwitch nodes (docs/nccl.md, "What NCCL picks"; --explain): LL on one
  // node at 64 KiB (the ring), LL128 above (the ring inside a node and on 2 nodes, the tree from 16 nodes on).
  for (const Case& c : {Case{8, 64 * 1024, "nccl_ring", coll::NcclProtocol::LL},
                        Case{8, 8 * MiB, "nccl_ring", coll::NcclProtocol::LL128},
                        Case{16, 8 * MiB, "nccl_tree", coll::NcclProtocol::LL128},
                        Case{128, 8 * MiB, "nccl_tree", coll::NcclProtocol::LL128}}) {
    CAPTURE(c.gpus);
    CAPTURE(c.bytes);
    const auto g = coll::Group::first_gpus(*p, c.gpus);
    const coll::NcclPick pick = coll::nccl_pick(*p, lib, g, c.bytes);
    CHECK(pick.algorithm == c.algorithm);
    CHECK(pick.protocol == c.protocol);
    const auto& algo = pick.algorithm == "nccl_tree" ? tree : ring;
    const auto run = with(lib, pick.protocol);
    for (const char* e : {"analytic", "simgrid"}) {
      if (std::string(e) == "simgrid" && c.gpus > 16) continue;  // SimGrid re-solves everything: slow at 128
      CAPTURE(e);
      // "nccl" is the picked algorithm in the picked protocol, not its Simple row.
      const double t = nccl->simulate(engine(e), *p, lib, g, c.bytes);
      CHECK(t == doctest::Approx(algo->simulate(engine(e), *p, run, g, c.bytes))
                     .epsilon(1e-12)
                     .scale(ffsim::testing::kRelative));
      const double simple = algo->simulate(engine(e), *p, lib, g, c.bytes);
      CHECK(std::fabs(t - simple) > 1e-3 * simple);
    }
    const coll::Estimate est = nccl->estimate(*p, lib, g, c.bytes);
    CHECK(est.note == std::string("NCCL picks ") + c.algorithm + ", " + coll::protocol_name(c.protocol));
    CHECK(est.time ==
          doctest::Approx(algo->estimate(*p, run, g, c.bytes).time).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
}

// Bytes on the wire (transfers) and the rate caps of a schedule.
struct Wire {
  double bytes = 0;
  double cap = 0;  // the largest transfer cap (infinity: an uncapped transfer)
  int transfers = 0;
};
Wire wire_of(const sched::Schedule& s) {
  Wire w;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto id = static_cast<sched::OpId>(i);
    const sched::Op& o = s.op(id);
    if (o.kind != sched::OpKind::Transfer) continue;
    w.bytes += o.amount;
    ++w.transfers;
    w.cap = std::max(w.cap, o.capped ? s.rate_cap(id) : std::numeric_limits<double>::infinity());
  }
  return w;
}

TEST_CASE("coll::nccl: a protocol's schedule moves its bytes on the wire under its cap, at its latencies") {
  const auto lib = config::load_library_params(testing::catalog());
  const auto p = scenario_platform("dgx-a100-cluster");
  const double S = 3 * MiB + 4 * 13;  // an odd size
  for (const int n : {2, 3, 8, 16, 24}) {
    CAPTURE(n);
    const auto g = coll::Group::first_gpus(*p, n);
    const int nodes = (n + 7) / 8, R = nodes > 1 ? 8 : 1;  // a ring per NIC (rail) on 2+ nodes
    // The ring: 2 (n - 1) steps of S / n per ring link, whatever the protocol; LL doubles the bytes
    // on the wire, LL128 adds 8 of every 128. Caps per ring flow: LL128 16.7 GB/s x its channels (2 per
    // NIC x 8 NICs over R rings) x 128/120; LL the LL bus cap (87.7 / 22.5 / 19.0 GB/s) over R, x 2.
    auto emit = [&](const char* algo, coll::NcclProtocol proto) {
      sched::Schedule s;
      (void)coll::algorithms().get(algo).factory()->emit(s, *p, with(lib, proto), g, S, coll::Options{});
      return wire_of(s);
    };
    const Wire simple = emit("nccl_ring", coll::NcclProtocol::Simple), ll = emit("nccl_ring", coll::NcclProtocol::LL),
               l128 = emit("nccl_ring", coll::NcclProtocol::LL128);
    CHECK(simple.bytes == doctest::Approx(2.0 * (n - 1) * S).epsilon(1e-12));
    CHECK(ll.bytes == doctest::Approx(2 * simple.bytes).epsilon(1e-12));
    CHECK(l128.bytes == doctest::Approx(simple.bytes * 128 / 120).epsilon(1e-12));
    CHECK(simple.cap == std::numeric_limits<double>::infinity());
    const double ll_bus = nodes == 1 ? 87.7e9 : nodes == 2 ? 22.5e9 : 19.0e9;
    CHECK(ll.cap == doctest::Approx(ll_bus / R * 2));
    CHECK(l128.cap == doctest::Approx(16.7e9 * (2.0 * 8 / R) * 128 / 120));
    // The tree: each chunk goes up and down every one of the n - 1 tree edges: 2 (n - 1) S of data
    // over both trees and every rail, in each protocol's chunks; LL's tree has no cap, LL128's a
    // tree's channels (half its rail's).
    const Wire tsimple = emit("nccl_tree", coll::NcclProtocol::Simple), tll = emit("nccl_tree", coll::NcclProtocol::LL),
               t128 = emit("nccl_tree", coll::NcclProtocol::LL128);
    CHECK(tsimple.bytes == doctest::Approx(2.0 * (n - 1) * S).epsilon(1e-12));
    CHECK(tll.bytes == doctest::Approx(2 * tsimple.bytes).epsilon(1e-12));
    CHECK(t128.bytes == doctest::Approx(tsimple.bytes * 128 / 120).epsilon(1e-12));
    CHECK(tll.cap == std::numeric_limits<double>::infinity());
    CHECK(t128.cap == doctest::Approx(16.7e9 * (2.0 * 8 / R / 2) * 128 / 120));
    // LL's 32 KiB chunks: S / R / 2 per tree in ceil(that / 32 KiB) chunks, each crossing n - 1 edges
    // both ways; the Simple tree's [I] 4 MiB chunks: one chunk per tree here.
    const double per_tree = S / R / 2;
    CHECK(tll.transfers == static_cast<int>(R * 2 * std::ceil(per_tree / 32768) * 2 * (n - 1)));
    CHECK(tsimple.transfers == R * 2 * 2 * (n - 1));
  }
  // Latencies: a 2-rank ring of one node pays the protocol's base latency once and, on each of its 2
  // steps, the mean over its hops (both NVLink) of the protocol's NVLink hop latency: inside a node
  // NCCL's own, not the path's 1 us (a DMA copy's setup, which NCCL's kernels do not pay: every
  // transfer of a step pays it, Schedule::set_latency): (8.4 - 3.6) + 2 (3.4 - 0.47) = 10.66 us. 4
  // bytes: what remains is LL's 8 bytes on the wire at its 175 GB/s cap against Simple's 4 at the
  // link's, under 5e-11 s per step (to 1e-5 of the 10.66 us; a hop latency off by 0.1 us would be 1e-2).
  const auto g2 = coll::Group::first_gpus(*p, 2);
  const auto ring = coll::algorithms().get("nccl_ring").factory();
  const double tiny = 4;
  const auto llp = with(lib, coll::NcclProtocol::LL);
  const double t_ll = ring->simulate(engine("analytic"), *p, llp, g2, tiny);
  const double t_simple = ring->simulate(engine("analytic"), *p, lib, g2, tiny);
  const double physical = p->path(p->path_id(g2.ranks[0], g2.ranks[1])).latency;
  CHECK(physical > lib.nccl.ll.ring_hop_latency_nvlink);  // the path's own would have been longer
  CHECK(t_simple - t_ll ==
        doctest::Approx((lib.nccl.simple.ring_base_latency - lib.nccl.ll.ring_base_latency) +
                        2 * (lib.nccl.simple.ring_hop_latency_nvlink - lib.nccl.ll.ring_hop_latency_nvlink))
            .epsilon(1e-5)
            .scale(ffsim::testing::kRelative));
}

TEST_CASE("coll::nccl: the size guard's count bounds the schedule of NCCL's pick, NVLink nodes or PCIe") {
  const auto lib = config::load_library_params(testing::catalog());
  const auto nccl = coll::algorithms().get("nccl").factory();
  for (const char* sc : {"dgx-a100-cluster", "fire-flyer-2"}) {
    const auto p = scenario_platform(sc);
    for (const int gpus : {1, 2, 8, 16, 40, 128}) {
      for (const double bytes : {0.0, 64.0 * 1024, 8 * MiB + 12, 184 * MiB}) {
        CAPTURE(sc);
        CAPTURE(gpus);
        CAPTURE(bytes);
        const auto g = coll::Group::first_gpus(*p, gpus);
        sched::Schedule s;
        (void)nccl->emit(s, *p, lib, g, bytes, coll::Options{});
        const coll::GroupShape q = coll::GroupShape::of(*p, g);
        CHECK(q.nvlink == (std::string(sc) == "dgx-a100-cluster"));
        // The shape before the platform (the size guard's) says the same.
        const auto& node = p->cluster().node;
        const auto first = coll::GroupShape::first_gpus(gpus, static_cast<int>(node.gpus.size()),
                                                        static_cast<int>(node.sockets.size()), node.compute_nics(),
                                                        node.nvlink.kind != "none");
        CHECK(first.nvlink == q.nvlink);
        CHECK(nccl->schedule_ops(lib, q, bytes, true) >= static_cast<double>(s.size()));
      }
    }
  }
}

TEST_CASE("coll::nccl: each protocol's ring and tree agree on the fluid and SimGrid engines") {
  // The same schedule (the protocol's chunks, bytes on the wire and rate caps) on the two max-min
  // solvers: one node of 8 NVSwitch GPUs and two nodes (16 GPUs over 8 rails), 1 MiB, 8 MiB and an
  // odd 3 MiB + 12 B. The rings agree to 1e-6. The LL and LL128 trees run 10-130 small chunks per
  // tree whose hops wait no software delay (inside a node their NCCL hop latencies are the
  // transfers' own, 0.52 and 1.25 us), so many transfers and adds meet at ties, and a difference of
  // 1e-6 relative in one op's end breaks one the other way on the two solvers (2026-12-07: the adds
  // of 0.25 us, 6.0466864 against 6.0466866 us on SimGrid, LL, 16 GPUs, 8 MiB): the makespans then
  // part by 0.63% there (129.00 against 129.81 us), the other cells by at most 2e-6 (the rounding
  // amplification of docs/sensitivity.txt, section 1); the Simple tree, whose hops wait NCCL's 28-50
  // us, agrees to 1e-6.
  const auto lib = config::load_library_params(testing::catalog());
  const auto p = scenario_platform("dgx-a100-cluster");
  for (const char* algo : {"nccl_ring", "nccl_tree"})
    for (const coll::NcclProtocol proto :
         {coll::NcclProtocol::LL, coll::NcclProtocol::LL128, coll::NcclProtocol::Simple})
      for (const int n : {8, 16})
        for (const double bytes : {1 * MiB, 8 * MiB, 3 * MiB + 12}) {
          const std::string what = std::string(algo) + " " + coll::protocol_name(proto);
          CAPTURE(what);
          CAPTURE(n);
          CAPTURE(bytes);
          const auto a = coll::algorithms().get(algo).factory();
          const auto g = coll::Group::first_gpus(*p, n);
          const double fluid = a->simulate(engine("analytic"), *p, with(lib, proto), g, bytes);
          const double sg = a->simulate(engine("simgrid"), *p, with(lib, proto), g, bytes);
          const bool ties = std::string(algo) == "nccl_tree" && proto != coll::NcclProtocol::Simple;
          CHECK(fluid == doctest::Approx(sg).epsilon(ties ? 1e-2 : 1e-6).scale(ffsim::testing::kRelative));
        }
}

TEST_CASE("coll::nccl_ring: the closed form equals the simulation on multi-rail nodes, each protocol") {
  // DGX-A100: 8 rings over 2 and 3 nodes (one ring inside one node), under one leaf switch (no
  // routing collision). A step's flows end at their own hop latency plus their own bottleneck (the
  // NVLink hops long before the NIC hops) and each GPU adds each ring's part as it arrives: the
  // closed form's per-GPU reduce queue (estimate_ring) against the fluid engine's schedule.
  const auto lib = config::load_library_params(testing::catalog());
  const auto p = scenario_platform("dgx-a100-cluster");
  const auto ring = coll::algorithms().get("nccl_ring").factory();
  for (const coll::NcclProtocol proto : {coll::NcclProtocol::LL, coll::NcclProtocol::LL128, coll::NcclProtocol::Simple})
    for (const int n : {2, 8, 16, 24})
      for (const double bytes : {64.0 * 1024, 1 * MiB, 184 * MiB + 12}) {
        const std::string what = coll::protocol_name(proto);
        CAPTURE(what);
        CAPTURE(n);
        CAPTURE(bytes);
        const auto g = coll::Group::first_gpus(*p, n);
        const auto run = with(lib, proto);
        CHECK(ring->estimate(*p, run, g, bytes).time ==
              doctest::Approx(ring->simulate(engine("analytic"), *p, run, g, bytes))
                  .epsilon(1e-6)
                  .scale(ffsim::testing::kRelative));
      }
}

TEST_CASE("coll::nccl_ring: a pipelined ring pays its hops' latencies in turn, not its slowest on every step") {
  // NCCL's ring has no barrier between steps: over its 2(n - 1) steps a piece of data crosses the
  // hops one after another, so each step costs the mean hop latency, each hop's being NCCL's per-hop
  // latency of its kind (NVLink, PCI, network), between nodes its path's own where that is longer
  // (nccl_path_latency). DGX-A100, 12 GPUs (8 + 4: one node and a half), 4 bytes: every ring crosses
  // between the nodes twice and takes NVLink on its other 10 hops. Expected, per ring: base + 22 x
  // (10 e_nvlink + 2 e_net) / 12, e_nvlink NCCL's, e_net the longer of NCCL's and the path's, plus 4
  // bytes' worth of transfer and adds (under 1e-9 s: 5e-5 of LL's 22 us; held to 1e-4, where a hop
  // latency off by 0.1 us would be 5e-3). Until 2026-12-07 every step paid the slowest hop, a
  // network path's 2.7 us under LL: 22 x e_net.
  const auto lib = config::load_library_params(testing::catalog());
  const auto p = scenario_platform("dgx-a100-cluster");
  const auto ring = coll::algorithms().get("nccl_ring").factory();
  const auto g = coll::Group::first_gpus(*p, 12);
  const double tiny = 4;
  for (const coll::NcclProtocol proto :
       {coll::NcclProtocol::LL, coll::NcclProtocol::LL128, coll::NcclProtocol::Simple}) {
    const std::string what = coll::protocol_name(proto);
    CAPTURE(what);
    const auto run = with(lib, proto);
    const auto& lat = run.nccl.active();
    const auto orders = coll::ring_orders(*p, g, run.nccl.numa_restricted);
    REQUIRE(orders.size() == 8);
    double slowest = 0;  // the longest step latency over the rings: the steps end with their slowest ring
    double worst_hop = 0;
    for (const auto& order : orders) {
      REQUIRE(order.size() == 12);
      double sum = 0;
      int net = 0;
      for (std::size_t i = 0; i < 12; ++i) {
        const auto& a = g.ranks[static_cast<std::size_t>(order[i])];
        const auto& b = g.ranks[static_cast<std::size_t>(order[(i + 1) % 12])];
        const double physical = p->path(p->path_id(a, b)).latency;
        const double e =
            a.node != b.node ? (++net, std::max(lat.ring_hop_latency_net, physical)) : lat.ring_hop_latency_nvlink;
        sum += e;
        worst_hop = std::max(worst_hop, e);
      }
      CHECK(net == 2);
      slowest = std::max(slowest, sum / 12);
    }
    const double expected = lat.ring_base_latency + 22 * (slowest + p->options().arbitration_latency);
    check_everywhere(*ring, *p, run, g, tiny, expected);
    // The network hop is the slowest, and the ring no longer pays it on every step.
    CHECK(worst_hop > slowest * 1.5);
    CHECK(ring->simulate(engine("analytic"), *p, run, g, tiny) < lat.ring_base_latency + 22 * worst_hop * 0.75);
    // --full (every step simulated) equals the one-step shortcut.
    sched::Schedule s;
    (void)ring->emit(s, *p, run, g, tiny, coll::Options{});
    CHECK(engine("analytic").run(s, *p).makespan ==
          doctest::Approx(ring->simulate(engine("analytic"), *p, run, g, tiny))
              .epsilon(1e-9)
              .scale(ffsim::testing::kRelative));
  }
}

TEST_CASE("coll::nccl_tree: a tiny LL tree pays NCCL's base latency and its hops', on every engine") {
  // DGX-A100, 16 GPUs (2 nodes), 8 bytes, LL: each rail's trees run up a node's chain of 8 GPUs (7
  // NVLink hops), across the one network hop between the two heads, and back down: NCCL's base
  // latency of the LL tree once, then 2 x (7 x the NVLink hop + the network hop), inside a node
  // NCCL's hop latency (0.52 us; the path's 1 us is a DMA copy's setup, which NCCL's kernels do not
  // pay), between nodes the longer of NCCL's (5.0 us) and the path's: 4.4 + 2 (7 x 0.52 + 5.0) =
  // 21.68 us, NCCL's own prediction. 8 bytes move in well under 1e-9 s (held to 1e-4: a hop off by
  // 0.1 us would be 5e-3). Until 2026-12-07 the schedule left the base out and paid 1 us per NVLink
  // hop: 24.0 us on the engines against 21.68 in the closed form.
  const auto lib = config::load_library_params(testing::catalog());
  const auto p = scenario_platform("dgx-a100-cluster");
  const auto tree = coll::algorithms().get("nccl_tree").factory();
  const auto g = coll::Group::first_gpus(*p, 16);
  const auto run = with(lib, coll::NcclProtocol::LL);
  const auto& l = run.nccl.ll;
  const double net_path = p->path(p->path_id(g.ranks[0], g.ranks[8])).latency;
  CHECK(net_path < l.tree_hop_latency_net);
  CHECK(p->path(p->path_id(g.ranks[0], g.ranks[1])).latency > l.tree_hop_latency_nvlink);
  const double expected = l.tree_base_latency + 2 * (7 * l.tree_hop_latency_nvlink + l.tree_hop_latency_net);
  CHECK(expected == doctest::Approx(21.68e-6).epsilon(1e-9));
  check_everywhere(*tree, *p, run, g, 8, expected);
  // Simple has no base latency: its schedule holds no base delay.
  sched::Schedule simple, ll;
  (void)tree->emit(simple, *p, lib, g, 8, coll::Options{});
  (void)tree->emit(ll, *p, run, g, 8, coll::Options{});
  auto bases = [](const sched::Schedule& s) {
    int k = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
      k += s.tags()[s.op(static_cast<sched::OpId>(i)).tag] == "nccl base latency";
    return k;
  };
  CHECK(bases(simple) == 0);
  CHECK(bases(ll) == 1);
}
