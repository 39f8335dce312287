// The fluid engine's reuse of flow slots and path-entry blocks (src/eval/fluid.cpp: take_slot,
// take_block, retire): a flow that ends frees its slot and its block of path entries once the
// instant's solves are over, and a later flow takes them, whatever its path's length. Reuse must
// change no time. A pattern P of concurrent flows of many path lengths (copies both ways between
// every GPU and both sockets' DRAM, compute ops, reduces of 1 to 4 inputs, sizes odd and not
// powers of two) runs alone, then twice in a row: P, a barrier once all of P has ended, and P
// again. The second P runs on an idle node exactly as the first (its flows take the first P's
// slots and blocks, in the order they were freed), so each of its ops starts and ends at the first
// P's times plus the barrier's time (to rounding: 1e-12 of the makespan).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>

#include "eval/engine.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

namespace {

using sched::Place;

// P's ops, added to `s` (none depends on another: they start together, their flows after their
// latencies, and end at many different times).
std::vector<sched::OpId> pattern(sched::Schedule& s) {
  std::vector<sched::OpId> ops;
  for (int g = 0; g < 8; ++g) {
    const double k = g + 1;
    ops.push_back(s.transfer(Place::dram(0, g % 2), Place::gpu(0, g), Bytes(k * 3e6 + 7 * k), sched::TrafficClass::Other));
    ops.push_back(s.transfer(Place::gpu(0, g), Place::dram(0, (g + 1) % 2), Bytes(k * 5e6 + 3), sched::TrafficClass::Other));
    ops.push_back(s.compute(Place::gpu(0, g), Seconds(k * 1.7e-4)));
  }
  for (int n = 1; n <= 4; ++n) {
    const std::vector<Place> inputs(static_cast<std::size_t>(n), Place::dram(0, n % 2));
    ops.push_back(s.reduce(Place::cpu(0, n % 2), inputs, Place::dram(0, (n + 1) % 2), Bytes(n * 2e6 + 1)));
  }
  return ops;
}

}  // namespace

TEST_CASE("eval::FluidEngine: flows reuse ended flows' slots and blocks without changing a time") {
  const auto p = plan::make_platform(ffsim::testing::cluster(1));
  for (const bool lazy : {true, false}) {
    CAPTURE(lazy);
    sched::Schedule once;
    const std::vector<sched::OpId> first = pattern(once);
    const eval::Result alone = eval::FluidEngine(lazy).run(once, *p);

    sched::Schedule twice;
    const std::vector<sched::OpId> a = pattern(twice);
    const sched::OpId barrier = twice.delay(Seconds(0));
    for (const sched::OpId op : a) twice.depend(barrier, op);
    const std::vector<sched::OpId> b = pattern(twice);
    for (const sched::OpId op : b) twice.depend(op, barrier);
    const eval::Result r = eval::FluidEngine(lazy).run(twice, *p);

    const double t = r.ops[barrier].end;
    CHECK(t == alone.makespan);  // the first P runs as alone, to the bit (the same events in the same order)
    const double tol = 1e-12 * r.makespan;
    for (std::size_t i = 0; i < first.size(); ++i) {
      CAPTURE(i);
      CHECK(r.ops[a[i]].end == alone.ops[first[i]].end);
      CHECK(std::abs(r.ops[b[i]].start - (t + alone.ops[first[i]].start)) <= tol);
      CHECK(std::abs(r.ops[b[i]].end - (t + alone.ops[first[i]].end)) <= tol);
    }
    CHECK(std::abs(r.makespan - 2 * alone.makespan) <= tol);
  }
}
