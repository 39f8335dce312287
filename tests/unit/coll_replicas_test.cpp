// Copies that nothing tells apart run as one flow (sched::Schedule::replicate): a node's alike GPUs
// (coll::alike_gpus) copy HFReduce's chunks as one replicated transfer on the fluid engine, whose
// max-min allocation is the copies' own (swapping two alike GPUs, with their own links, maps the
// node's flows onto themselves, so their rates are equal). Proven here against the copies apart
// (simulate_full), as every shortcut is.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <string>

#include "app/engines.hpp"
#include "coll/collective.hpp"
#include "coll/common.hpp"
#include "config/coll_reader.hpp"
#include "core/error.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using sched::Place;

namespace {

const coll::LibraryParams& lib() {
  static const coll::LibraryParams l = config::load_library_params(testing::catalog());
  return l;
}

// A node's GPUs' copies for alike_gpus as HFReduce makes them on node 0: D2H to every socket, the
// H2D from the GPU's socket's cores (GDRCopy); the other transfers are the reducers' and the tree's.
std::vector<std::vector<int>> hfreduce_classes(const platform::Platform& p, int nodes) {
  const hw::NodeSpec& n = p.cluster().node;
  const int Q = static_cast<int>(n.sockets.size());
  const int sN = Q - 1;  // not needed exactly: any socket's DRAM is on the reducer's paths
  std::vector<std::pair<Place, Place>> others;
  for (int q = 0; q < Q; ++q) {
    others.emplace_back(Place::dram(0, q), Place::cpu(0, q));
    others.emplace_back(Place::cpu(0, q), Place::dram(0, sN));
  }
  if (nodes > 1) others.emplace_back(Place::dram(0, sN), Place::dram(1, sN));
  std::vector<std::vector<std::pair<Place, Place>>> copies;
  for (int l = 0; l < static_cast<int>(n.gpus.size()); ++l) {
    copies.emplace_back();
    for (int q = 0; q < Q; ++q) copies.back().emplace_back(Place::gpu(0, l), Place::dram(0, q));
    copies.back().emplace_back(Place::cpu(0, 0), Place::gpu(0, l));
  }
  return coll::alike_gpus(p, copies, others);
}

}  // namespace

TEST_CASE("platform::Router: copies run as one flow where their paths line up") {
  // fire_flyer_pcie: gpu0-3 each on a root port of their own of cpu0; gpu5 and gpu6 share cpu1.rp1
  // (with its both-ways caps); the NIC is on cpu1.rp3.
  const auto p = plan::make_platform(testing::cluster(2));
  const auto& r = p->router();
  auto path_of = [&](int gpu, int socket) { return p->path_id(Place::gpu(0, gpu), Place::dram(0, socket)); };
  // gpu0..3 to cpu0's DRAM: each path is its GPU's link and root port (its own) and the DRAM
  // (shared): the one flow crosses gpu0's own resources once and the DRAM 4 times.
  const std::vector<std::uint32_t> four{path_of(0, 0), path_of(1, 0), path_of(2, 0), path_of(3, 0)};
  REQUIRE(r.replicable(four));
  const platform::Path& one = p->path(r.replica_path_id(four));
  const platform::Path& own = p->path(four[0]);
  std::size_t shared = 0;
  for (std::uint32_t res : own.resources) {
    const auto n = std::count(one.resources.begin(), one.resources.end(), res);
    const bool everyones = std::count(p->path(four[1]).resources.begin(), p->path(four[1]).resources.end(), res) > 0;
    CHECK(n == (everyones ? 4 : 1));
    shared += everyones ? 1 : 0;
  }
  CHECK(shared >= 1);  // the DRAM at least
  CHECK(one.resources.size() == own.resources.size() + 3 * shared);
  // Each other copy's own resources are mirrored by gpu0's: 3 copies x (own resources per path).
  CHECK(one.mirrors.size() == 3 * (own.resources.size() - shared));
  CHECK(one.latency == own.latency);
  // The same copies again: the same path id.
  CHECK(r.replica_path_id(four) == r.replica_path_id(four));
  // One copy: its own path.
  CHECK(r.replica_path_id({four[0]}) == four[0]);
  // gpu4 (a root port of its own) and gpu5 (a shared one with both-ways caps): paths of other
  // lengths. gpu0 and gpu4 to their own sockets: one DRAM each where the other has the other's.
  std::string why;
  CHECK_FALSE(r.replicable({path_of(4, 1), path_of(5, 1)}, &why));
  CHECK(why.find("differs") != std::string::npos);
  // Identical copies: every resource is everyone's (the flow is the merged one of the copies).
  CHECK(r.replicable({path_of(0, 0), path_of(0, 0)}));
  CHECK_THROWS_AS((void)r.replica_path_id({path_of(4, 1), path_of(5, 1)}), SimulationError);
}

TEST_CASE("coll::alike_gpus: the classes of a node's GPUs") {
  // fire_flyer_pcie: cpu0's four GPUs have root ports of their own; of cpu1's, gpu4 and gpu7 have
  // their own, gpu5 and gpu6 share one: {0, 1, 2, 3}, {4, 7}, {5, 6}.
  {
    const auto p = plan::make_platform(testing::cluster(2));
    CHECK(hfreduce_classes(*p, 2) == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 7}, {5, 6}});
  }
  // One copy kind only, GPUs alone: singletons where the caller passes one GPU.
  {
    const auto p = plan::make_platform(testing::cluster(1));
    CHECK(coll::alike_gpus(*p, {{{Place::gpu(0, 0), Place::dram(0, 0)}}}, {}) == std::vector<std::vector<int>>{{0}});
    // A transfer beside them that crosses gpu1's own link (a peer copy from gpu1 into gpu2) tells
    // gpu1 apart; gpu2 stays: the copy enters it by its down link, which no D2H crosses.
    std::vector<std::vector<std::pair<Place, Place>>> copies;
    for (int l = 0; l < 4; ++l) copies.push_back({{Place::gpu(0, l), Place::dram(0, 0)}});
    CHECK(coll::alike_gpus(*p, copies, {}) == std::vector<std::vector<int>>{{0, 1, 2, 3}});
    CHECK(coll::alike_gpus(*p, copies, {{Place::gpu(0, 1), Place::gpu(0, 2)}}) ==
          std::vector<std::vector<int>>{{0, 2, 3}, {1}});
  }
}

// simulate() (replicated copies) against simulate_full() (the copies apart) on the fluid engine:
// the same time to 1e-9 relative (the sums of a shared resource's load run in another order), over
// node models, GPU counts (one node, two, three; one GPU a node: no classes), sizes (nothing, one
// byte, a whole chunk and one byte more, several chunks with a short last one) and the library's
// variants (cudaMemcpy write-back with its stream hand-offs, no interleaving, result slots).
TEST_CASE("coll::hfreduce: alike GPUs copying as one flow take the time of the copies apart") {
  const auto fluid = app::make_engine("analytic");
  REQUIRE(fluid->runs_replicas());
  const auto a = coll::algorithms().get("hfreduce").factory();
  struct Case {
    std::string node;
    int nodes, gpus;
  };
  for (const Case& c : {Case{"fire_flyer_pcie", 1, 4}, Case{"fire_flyer_pcie", 1, 8}, Case{"fire_flyer_pcie", 2, 16},
                        Case{"fire_flyer_pcie", 3, 24}, Case{"fire_flyer_pcie", 3, 3}, Case{"dgx_a100", 2, 16},
                        Case{"h800_8x400g", 2, 16}, Case{"epyc_zen5_2c_vm", 3, 6}}) {
    const auto p = plan::make_platform(testing::cluster(c.nodes, c.node));
    const auto g = coll::Group::first_gpus(*p, c.gpus);
    for (const double S : {0.0, 1.0, 4194304.0, 4194305.0, 10.5 * 1048576}) {
      for (int variant = 0; variant < 4; ++variant) {
        coll::LibraryParams l = lib();
        if (variant == 1) {
          l.hfreduce.h2d = "memcpy";
          l.hfreduce.copy_handoff = 3e-6;
        }
        if (variant == 2) l.hfreduce.interleave_d2h = false;
        if (variant == 3) {
          l.hfreduce.staging_buffers = 3;
          l.hfreduce.result_slots = 2;
        }
        CAPTURE(c.node);
        CAPTURE(c.gpus);
        CAPTURE(S);
        CAPTURE(variant);
        const double one = a->simulate(*fluid, *p, l, g, S);
        const double apart = a->simulate_full(*fluid, *p, l, g, S);
        CHECK(one == doctest::Approx(apart).epsilon(1e-9).scale(ffsim::testing::kRelative));
      }
    }
  }
}

TEST_CASE("coll::hfreduce: the replicated schedule, its usage and the engine's check") {
  // Two fire_flyer_pcie nodes, 8 MiB: per node and chunk 6 D2H copies (3 classes x 2 sockets)
  // instead of 16, and 3 H2D writes instead of 8.
  const auto p = plan::make_platform(testing::cluster(2));
  const auto a = coll::algorithms().get("hfreduce").factory();
  const auto g = coll::Group::first_gpus(*p, 16);
  const double S = 8.0 * 1048576;  // 2 chunks
  auto count = [&](const sched::Schedule& s, const std::string& tag) {
    int n = 0;
    for (sched::OpId i = 0; i < s.size(); ++i)
      if (s.op(i).kind == sched::OpKind::Transfer && s.tags()[s.op(i).tag] == tag) ++n;
    return n;
  };
  coll::Options o;
  o.replicas = true;
  sched::Schedule one, apart;
  (void)a->emit(one, *p, lib(), g, S, o);
  (void)a->emit(apart, *p, lib(), g, S, coll::Options{});
  CHECK(count(apart, "hfreduce D2H") == 2 * 2 * 8 * 2);    // nodes x chunks x GPUs x sockets
  CHECK(count(one, "hfreduce D2H") == 2 * 2 * 3 * 2);      // nodes x chunks x classes x sockets
  CHECK(count(apart, "hfreduce H2D") == 2 * 2 * (2 + 8));  // per socket a read, per GPU a write
  CHECK(count(one, "hfreduce H2D") == 2 * 2 * (2 + 3));
  CHECK(one.has_replicas());
  CHECK_FALSE(apart.has_replicas());
  // Every resource carries what it carries with the copies apart (a mirrored one: what stood for it).
  const auto fluid = app::make_engine("analytic");
  const auto r1 = fluid->run(one, *p), r2 = fluid->run(apart, *p);
  CHECK(r1.makespan == doctest::Approx(r2.makespan).epsilon(1e-9).scale(ffsim::testing::kRelative));
  REQUIRE(r1.usage.size() == r2.usage.size());
  for (std::size_t i = 0; i < r1.usage.size(); ++i) {
    CAPTURE(p->resource_name(static_cast<std::uint32_t>(i)));
    CHECK(r1.usage[i].bytes == doctest::Approx(r2.usage[i].bytes).epsilon(1e-9).scale(ffsim::testing::kRelative));
    CHECK(r1.usage[i].saturated_time ==
          doctest::Approx(r2.usage[i].saturated_time).epsilon(1e-9).scale(ffsim::testing::kRelative));
  }
  // A flow that crosses one copy's own link beside the replicated copies tells them apart: refused.
  sched::Schedule bad;
  const sched::OpId t = bad.transfer(Place::gpu(0, 0), Place::dram(0, 0), Bytes(1e6), sched::TrafficClass::HFReduce);
  bad.replicate(t, bad.replica_list({{Place::gpu(0, 1), Place::dram(0, 0)}}));
  (void)bad.transfer(Place::gpu(0, 1), Place::dram(0, 1), Bytes(1e6), sched::TrafficClass::HFReduce);
  CHECK_THROWS_AS((void)fluid->run(bad, *p), SimulationError);
  // The same with the plain flow first, and with it on the standing-in GPU's own link.
  for (const int gpu : {0, 1}) {
    sched::Schedule bad2;
    (void)bad2.transfer(Place::gpu(0, gpu), Place::dram(0, 1), Bytes(1e6), sched::TrafficClass::HFReduce);
    const sched::OpId t2 =
        bad2.transfer(Place::gpu(0, 0), Place::dram(0, 0), Bytes(1e6), sched::TrafficClass::HFReduce);
    bad2.replicate(t2, bad2.replica_list({{Place::gpu(0, 1), Place::dram(0, 0)}}));
    CHECK_THROWS_AS((void)fluid->run(bad2, *p), SimulationError);
  }
  // Alone, the two copies as one take the time of the two apart.
  sched::Schedule two, pair;
  const sched::OpId t3 = two.transfer(Place::gpu(0, 0), Place::dram(0, 1), Bytes(1e6), sched::TrafficClass::HFReduce);
  two.replicate(t3, two.replica_list({{Place::gpu(0, 1), Place::dram(0, 1)}}));
  (void)pair.transfer(Place::gpu(0, 0), Place::dram(0, 1), Bytes(1e6), sched::TrafficClass::HFReduce);
  (void)pair.transfer(Place::gpu(0, 1), Place::dram(0, 1), Bytes(1e6), sched::TrafficClass::HFReduce);
  CHECK(fluid->run(two, *p).makespan ==
        doctest::Approx(fluid->run(pair, *p).makespan).epsilon(1e-12).scale(ffsim::testing::kRelative));
}
