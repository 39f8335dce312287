// The fluid engine's merged flows (src/eval/fluid.cpp, begin_flows): k identical flows of one
// operation (same path, weight and amount, no rate cap, started together) run as one flow of k
// times the weight and amount. In weighted max-min that flow gets k times each one's rate, so every
// resource carries the same load and the flow ends when each of the k would: the engine with and
// without merging must agree.
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

std::uint32_t resource_named(const platform::Platform& p, const std::string& name) {
  for (std::uint32_t r = 0; r < p.resource_count(); ++r)
    if (p.resource_name(r) == name) return r;
  FAIL("no resource " << name);
  return 0;
}

void check_same(const eval::Result& a, const eval::Result& b, double eps) {
  REQUIRE(a.ops.size() == b.ops.size());
  CHECK(a.makespan == doctest::Approx(b.makespan).epsilon(eps).scale(ffsim::testing::kRelative));
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    CAPTURE(i);
    CHECK(a.ops[i].start == doctest::Approx(b.ops[i].start).epsilon(eps).scale(ffsim::testing::kRelative));
    CHECK(a.ops[i].end == doctest::Approx(b.ops[i].end).epsilon(eps).scale(ffsim::testing::kRelative));
  }
  REQUIRE(a.usage.size() == b.usage.size());
  for (std::size_t r = 0; r < a.usage.size(); ++r) {
    CAPTURE(r);
    CHECK(a.usage[r].bytes == doctest::Approx(b.usage[r].bytes).epsilon(eps).scale(ffsim::testing::kRelative));
    CHECK(a.usage[r].saturated_time == doctest::Approx(b.usage[r].saturated_time).epsilon(eps).scale(ffsim::testing::kRelative));
  }
}

}  // namespace

TEST_CASE("eval::FluidEngine: a reduce's identical reads run as one flow, with the same times") {
  const auto p = fire_flyer(1);
  const double dram = p->resource(resource_named(*p, "n0.cpu0.dram")).capacity;
  for (int k : {1, 2, 3, 7, 8}) {
    CAPTURE(k);
    // Alone: k inputs of A bytes in CPU0's memory, read by CPU0 and summed into CPU0's memory. The
    // k reads and the write all load only CPU0's DRAM: k + 1 flows of A at dram / (k + 1) each,
    // so the reduce takes (k + 1) A / dram after its latency (the tolerance covers microseconds).
    const double A = 64e6 + 7;  // odd
    sched::Schedule s;
    const std::vector<sched::Place> inputs(static_cast<std::size_t>(k), sched::Place::dram(0, 0));
    const auto red = s.reduce(sched::Place::cpu(0, 0), inputs, sched::Place::dram(0, 0), Bytes(A));
    eval::FluidEngine merged(true, true), apart(true, false);
    const auto a = merged.run(s, *p);
    CHECK(a.ops[red].end == doctest::Approx((k + 1) * A / dram).epsilon(1e-3).scale(ffsim::testing::kRelative));
    check_same(a, apart.run(s, *p), 1e-12);

    // Shared: the same reduce while GPU0-3 copy into CPU0's memory (sizes differ, so they end at
    // different times) and a second reduce of other inputs starts later: the merged flow's share
    // of the DRAM must track the k + 1 separate flows' shares through every change.
    sched::Schedule t;
    (void)t.reduce(sched::Place::cpu(0, 0), inputs, sched::Place::dram(0, 0), Bytes(A));
    for (int g = 0; g < 4; ++g)
      (void)t.transfer(sched::Place::gpu(0, g), sched::Place::dram(0, 0), Bytes(20e6 * (g + 1) + 3), sched::TrafficClass::Other);
    const auto wait = t.delay(Seconds(1e-4));
    const std::vector<sched::Place> mixed{sched::Place::dram(0, 0), sched::Place::dram(0, 1), sched::Place::dram(0, 0)};
    const auto r2 = t.reduce(sched::Place::cpu(0, 0), mixed, sched::Place::dram(0, 0), Bytes(A / 3));
    t.depend(r2, wait);
    check_same(merged.run(t, *p), apart.run(t, *p), 1e-12);
  }
}

TEST_CASE("eval::FluidEngine: merged and separate flows give the same collective schedules") {
  // Whole schedules on 1 to 4 nodes and odd sizes: HFReduce's reduces read 4 to 8 inputs from one
  // buffer (merged), its tree adds read one; the NCCL ring has no identical flows (a control).
  const auto lib = config::load_library_params(ffsim::testing::catalog());
  for (int nodes : {1, 2, 3, 4}) {
    const auto p = fire_flyer(nodes);
    for (int gpus : {nodes == 1 ? 5 : nodes * 8, nodes * 8}) {  // 5: part of a node
      const auto g = coll::Group::first_gpus(*p, gpus);
      for (const std::string algo : {"hfreduce", "hf_reduce_scatter", "hf_allgather", "nccl_ring"}) {
        for (double bytes : {1.0, 24.0 * 1048576 + 4}) {
          CAPTURE(nodes);
          CAPTURE(gpus);
          CAPTURE(algo);
          CAPTURE(bytes);
          const auto a = coll::algorithms().get(algo).factory();
          sched::Schedule s;
          (void)a->emit(s, *p, lib, g, bytes, coll::Options{});
          eval::FluidEngine merged(true, true), apart(true, false);
          check_same(merged.run(s, *p), apart.run(s, *p), 1e-9);
        }
      }
    }
  }
}
