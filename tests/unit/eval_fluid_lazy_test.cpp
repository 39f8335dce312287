// The fluid engine's lazy constraints (src/eval/fluid.cpp, resolve): resources that a solve
// leaves unsaturated drop out of the constraint set and rejoin when a check finds them over
// capacity. The max-min allocation is unique, so the lazy and the eager engine must agree.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include "coll/collective.hpp"
#include "config/coll_reader.hpp"
#include "eval/engine.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

namespace {

std::unique_ptr<platform::Platform> fire_flyer(int nodes) { return plan::make_platform(ffsim::testing::cluster(nodes)); }

void check_same(const eval::Result& a, const eval::Result& b) {
  REQUIRE(a.ops.size() == b.ops.size());
  CHECK(a.makespan == doctest::Approx(b.makespan).epsilon(1e-9).scale(ffsim::testing::kRelative));
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    CAPTURE(i);
    CHECK(a.ops[i].start == doctest::Approx(b.ops[i].start).epsilon(1e-9).scale(ffsim::testing::kRelative));
    CHECK(a.ops[i].end == doctest::Approx(b.ops[i].end).epsilon(1e-9).scale(ffsim::testing::kRelative));
  }
  REQUIRE(a.usage.size() == b.usage.size());
  for (std::size_t r = 0; r < a.usage.size(); ++r) {
    CAPTURE(r);
    CHECK(a.usage[r].bytes == doctest::Approx(b.usage[r].bytes).epsilon(1e-9).scale(ffsim::testing::kRelative));
  }
}

}  // namespace

TEST_CASE("eval::FluidEngine: a dropped resource rejoins when new flows would overload it") {
  const auto p = fire_flyer(1);
  // GPU0-3 hang off CPU0's root ports (27 GB/s PCIe links each way); CPU0's DRAM takes 160 GB/s.
  // t = 0: four D2H of 270 MB, 4 x 27 = 108 GB/s < 160: DRAM is not saturated and drops out of the
  // constraint set. t = 5 ms: four H2D of 100 MB start on the links' other direction; at link rate
  // the DRAM would carry 216 GB/s, so it must rejoin: 8 flows share it at 160 / 8 = 20 GB/s each.
  // H2D: 100 MB / 20 GB/s = 5 ms, ending near 10 ms. D2H: 135 MB done by 5 ms, 100 MB more by
  // 10 ms at 20 GB/s, the last 35 MB at 27 GB/s alone: 35 / 27 = 1.296 ms, ending near 11.296 ms.
  // (Path latencies are microseconds: the tolerance 1e-3 covers them.)
  sched::Schedule s;
  std::vector<sched::OpId> d2h, h2d;
  const auto wait = s.delay(Seconds(5e-3));
  for (int g = 0; g < 4; ++g) {
    d2h.push_back(s.transfer(sched::Place::gpu(0, g), sched::Place::dram(0, 0), Bytes(270e6), sched::TrafficClass::Other));
    h2d.push_back(s.transfer(sched::Place::dram(0, 0), sched::Place::gpu(0, g), Bytes(100e6), sched::TrafficClass::Other));
    s.depend(h2d.back(), wait);
  }
  eval::FluidEngine lazy(true), eager(false);
  const auto a = lazy.run(s, *p);
  const auto b = eager.run(s, *p);
  for (int g = 0; g < 4; ++g) {
    CHECK(a.ops[h2d[static_cast<std::size_t>(g)]].end == doctest::Approx(10e-3).epsilon(1e-3).scale(ffsim::testing::kRelative));
    CHECK(a.ops[d2h[static_cast<std::size_t>(g)]].end == doctest::Approx(10e-3 + 35e6 / 27e9).epsilon(1e-3).scale(ffsim::testing::kRelative));
  }
  check_same(a, b);
}

TEST_CASE("eval::FluidEngine: lazy and eager constraints give the same HFReduce and NCCL ring schedules") {
  // Whole schedules on 1, 2, 3 and 4 nodes (8 GPUs each): D2H, CPU reduce, host memory, the NIC and
  // the fabric all saturate at times, so resources leave and rejoin the constraint set many times.
  const auto lib = config::load_library_params(ffsim::testing::catalog());
  for (int nodes : {1, 2, 3, 4}) {
    const auto p = fire_flyer(nodes);
    const auto g = coll::Group::first_gpus(*p, nodes * 8);
    for (const char* algo : {"hfreduce", "nccl_ring"}) {
      CAPTURE(nodes);
      CAPTURE(algo);
      const auto a = coll::algorithms().get(algo).factory();
      sched::Schedule s;
      (void)a->emit(s, *p, lib, g, 24.0 * 1048576 + 4, coll::Options{});
      eval::FluidEngine lazy(true), eager(false);
      check_same(lazy.run(s, *p), eager.run(s, *p));
    }
  }
}
