// The size guard's estimates against what is built: coll::Algorithm::schedule_ops against the
// schedules the algorithms emit, topo::Topology::size_of against the fabrics the designs build.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "coll/collective.hpp"
#include "coll/ring.hpp"
#include "config/coll_reader.hpp"
#include "core/error.hpp"
#include "core/size_guard.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

namespace {

const coll::LibraryParams& lib() {
  static const coll::LibraryParams l = config::load_library_params(testing::catalog());
  return l;
}

// The operations of `algo`'s whole schedule for the first `gpus` GPUs of `p` (-1 where the
// algorithm cannot run on that group: hf_* need whole nodes, sendrecv 2 ranks, NVLink pairs).
double built_ops(const std::string& algo, const platform::Platform& p, int gpus, double bytes) {
  const auto a = coll::algorithms().get(algo).factory();
  const coll::Group g = coll::Group::first_gpus(p, gpus);
  sched::Schedule s;
  try {
    (void)a->emit(s, p, lib(), g, bytes, coll::Options{});
  } catch (const ValueError&) {
    return -1;
  }
  return static_cast<double>(s.size());
}

}  // namespace

// By hand, HFReduce of one 4 MiB chunk on one fire_flyer_pcie node (8 GPUs, 2 sockets,
// models/libraries/hfreduce.json: interleaved D2H, 10 us of software per chunk and stage,
// GDRCopy): D2H 8 GPUs x 2 tree parts = 16; the reducer's software delay 1, one reduce per part
// (each on its socket) 2 and a barrier 1; H2D per socket a delay, one read and a barrier (2 x 3)
// and a write per GPU 8; a done per GPU 8: 16 + 4 + 14 + 8 = 42. No tree on one node.
TEST_CASE("coll::schedule_ops: HFReduce on one node, one chunk, by hand") {
  const auto p = plan::make_platform(testing::cluster(1));
  const auto a = coll::algorithms().get("hfreduce").factory();
  const coll::GroupShape q = coll::GroupShape::of(*p, coll::Group::first_gpus(*p, 8));
  CHECK(q.nodes == 1);
  CHECK(q.ranks_per_node == 8);
  CHECK(q.sockets == 2);
  CHECK(a->schedule_ops(lib(), q, 4.0 * 1048576, false) == 42);
  CHECK(built_ops("hfreduce", *p, 8, 4.0 * 1048576) == 42);
  // K chunks repeat the per-chunk ops: 46 chunks of 184 MiB are 46 x 34 + 8 dones.
  CHECK(a->schedule_ops(lib(), q, 184.0 * 1048576, false) == 46 * 34 + 8);
  CHECK(built_ops("hfreduce", *p, 8, 184.0 * 1048576) == 46 * 34 + 8);
}

// By hand, NCCL's ring allreduce over 3 ranks of one node (one ring: R = 1). Each phase has n - 1 = 2
// steps; a reduce-scatter step is a barrier and, per link (3), the transfer (which pays the ring's
// step latency itself: Schedule::set_latency) and the reduce: 1 + 6 = 7; an allgather step 1 + 3 =
// 4; with the base delay and the final barrier: 2 + 2 x 7 + 2 x 4 = 24, exactly.
TEST_CASE("coll::schedule_ops: the ring by hand, and its one-step shortcut") {
  const auto p = plan::make_platform(testing::cluster(1));
  const coll::GroupShape q = coll::GroupShape::of(*p, coll::Group::first_gpus(*p, 3));
  const auto ring = coll::algorithms().get("nccl_ring").factory();
  CHECK(ring->schedule_ops(lib(), q, 1048576, true) == 24);
  CHECK(built_ops("nccl_ring", *p, 3, 1048576) == 24);
  // The shortcut: one standalone step per phase, the larger (reduce-scatter: 3 x 2 + 1 = 7; the
  // step alone has no barrier before it, so it builds 6).
  CHECK(ring->schedule_ops(lib(), q, 1048576, false) == 7);
  for (const bool rs : {true, false}) {
    sched::Schedule s;
    (void)coll::emit_ring(s, *p, lib(), coll::Group::first_gpus(*p, 3), 1048576, coll::Options{}, {rs, !rs}, {0});
    CHECK(static_cast<double>(s.size()) <= 7);
    CHECK(static_cast<double>(s.size()) == (rs ? 6 + 1 : 3 + 1));  // + the final barrier
  }
  // One rank: one zero-time op.
  CHECK(ring->schedule_ops(lib(), coll::GroupShape::of(*p, coll::Group::first_gpus(*p, 1)), 1048576, true) == 1);
  CHECK(built_ops("nccl_ring", *p, 1, 1048576) == 1);
}

// Every algorithm's estimate bounds its built schedule from above and stays within 2x of it, on
// 1 node (8 GPUs), 3 nodes (24), 5 nodes (40, not a power of two), a part node (6 GPUs), 2 GPUs and
// 1, at a size of one chunk or less, an odd size and 184 MiB.
TEST_CASE("coll::schedule_ops: every algorithm within [1, 2] x its built schedule") {
  const auto p = plan::make_platform(testing::cluster(5));
  for (const std::string& algo : coll::algorithms().names()) {
    for (const int gpus : {1, 2, 6, 8, 24, 40}) {
      for (const double bytes : {1048576.0, 13.0 * 1048576 + 4 * 7, 184.0 * 1048576}) {
        CAPTURE(algo);
        CAPTURE(gpus);
        CAPTURE(bytes);
        if (algo == "alltoall" && gpus > 24) continue;  // n^2 transfers: slow to build here, same formula
        const double built = built_ops(algo, *p, gpus, bytes);
        if (built < 0) continue;
        const auto a = coll::algorithms().get(algo).factory();
        const double est =
            a->schedule_ops(lib(), coll::GroupShape::of(*p, coll::Group::first_gpus(*p, gpus)), bytes, true);
        CHECK(est >= built);
        // "nccl" picks ring or tree on the platform; its estimate is the larger of the two.
        if (algo != "nccl") CHECK(est <= 2 * built);
      }
    }
  }
}

// The fabric a design would build, counted from its shape, against the fabric built, for every
// shipped scenario (two-layer, multi-zone, multi-plane, three-layer, single switch).
TEST_CASE("topo::Topology::size_of: the counts of the built fabric") {
  int seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FFSIM_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    CAPTURE(e.path().string());
    const plan::ScenarioSpec sc = plan::load_scenario(e.path().string(), testing::catalog());
    const topo::FabricSize z = sc.fabric.design->size_of(topo::demand_of(sc.cluster));
    const topo::Fabric& f = *sc.built_fabric;
    CHECK(z.endpoints == static_cast<long long>(f.endpoints().size()));
    CHECK(z.switches == static_cast<long long>(f.switches().size()));
    CHECK(z.links == static_cast<long long>(f.links().size()));
    long long leaves = 0;
    for (const auto& s : f.switches()) leaves += s.tier == topo::Tier::Leaf ? 1 : 0;
    CHECK(z.leaves == leaves);
    ++seen;
  }
  CHECK(seen >= 10);
}

// A cluster too large for the limit is refused before its fabric is built (exit 4), and a design
// that cannot hold it is still the design's own error (exit 3).
TEST_CASE("plan::check_platform_size: refuses at once, names the estimate") {
  const std::string text = R"({"name": "huge", "cluster": {"node": "fire_flyer_pcie", "gpus": 10000000},
    "fabric": {"topology": "two_layer", "switch": {"extends": "qm9700", "ports": 2048}}})";
  const auto doc = config::Document::parse(text, "huge.json", false);
  const double before = memory_limit();
  try {
    (void)plan::parse_scenario(doc, testing::catalog());
    FAIL("expected a SimulationError");
  } catch (const SimulationError& e) {
    const std::string m = e.what();
    CHECK(m.find("huge.json: a cluster of 10,000,000 GPUs (1,250,000 nodes)") == 0);
    CHECK(m.find("over the limit of 4.00 GiB (--max-memory)") != std::string::npos);
  }
  // Under a limit above the estimate it is not refused by the guard (the size alone is checked
  // here, without building it).
  const auto sc = plan::parse_scenario(doc, testing::catalog(), false);
  const plan::PlatformSize z = plan::platform_size(sc.cluster, sc.fabric);
  CHECK(z.nodes == 1250000);
  CHECK(z.fabric.endpoints == 1250000);
  CHECK(z.bytes > memory_limit());
  set_memory_limit(2 * z.bytes);
  CHECK_NOTHROW(plan::check_platform_size(sc.cluster, sc.fabric, sc.file));
  set_memory_limit(before);
}
