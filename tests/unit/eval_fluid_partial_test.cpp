// The fluid engine's partial solves (src/eval/fluid.cpp, unchanged_level): after a start, an end or
// a new constraint, groups last solved below a level that the event cannot reach keep their rates
// and only the rest is solved again. The max-min allocation is unique, so the partial and the full
// solve must agree on every op, up to rounding.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cmath>

#include "approx.hpp"

#include "coll/collective.hpp"
#include "config/coll_reader.hpp"
#include "eval/engine.hpp"
#include "plan/scenario.hpp"
#include "random_schedule.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using sched::Place;
using sched::TrafficClass;

namespace {

std::unique_ptr<platform::Platform> fire_flyer(int nodes) { return plan::make_platform(ffsim::testing::cluster(nodes)); }

// Every op's start and end and every resource's bytes, to 1e-9 relative; returns the largest
// relative difference of the ends.
double check_same(const eval::Result& a, const eval::Result& b) {
  REQUIRE(a.ops.size() == b.ops.size());
  CHECK(a.makespan == doctest::Approx(b.makespan).epsilon(1e-9).scale(ffsim::testing::kRelative));
  double worst = 0;
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    CAPTURE(i);
    CHECK(a.ops[i].start == doctest::Approx(b.ops[i].start).epsilon(1e-9).scale(ffsim::testing::kRelative));
    CHECK(a.ops[i].end == doctest::Approx(b.ops[i].end).epsilon(1e-9).scale(ffsim::testing::kRelative));
    if (b.ops[i].end > 0) worst = std::max(worst, std::abs(a.ops[i].end - b.ops[i].end) / b.ops[i].end);
  }
  REQUIRE(a.usage.size() == b.usage.size());
  for (std::size_t r = 0; r < a.usage.size(); ++r) {
    CAPTURE(r);
    CHECK(a.usage[r].bytes == doctest::Approx(b.usage[r].bytes).epsilon(1e-9).scale(ffsim::testing::kRelative));
    // Saturated time to 1e-9 relative or 1e-15 s: two ways of solving may split one instant into
    // two a rounding apart (a resource saturated for 5.4e-20 s in one and 0 in the other, seen
    // with 300 trials of another seed), which no relative bound can take.
    CHECK(a.usage[r].saturated_time == doctest::Approx(b.usage[r].saturated_time).epsilon(1e-9).scale(1e-6));
  }
  return worst;
}

}  // namespace

TEST_CASE("eval::FluidEngine: partial and full solves agree on random contended schedules") {
  // Transfers between GPUs, DRAMs and NICs of 3 nodes (D2H and H2D through the GPU5/GPU6 bridge's
  // both-ways cap, the NICs and the fabric), k-way reduces on the CPUs (inputs in one socket's
  // DRAM or both), GPU compute (levels of at most 1, against bytes per second elsewhere), two
  // traffic classes (lane weights 4 and 1, so that levels differ by flow), random sizes from 1 byte
  // to 64 MiB, some ops chained to an earlier one and some started after a delay: flows start and
  // end at many instants and levels order differently at each. With lazy constraints and without.
  const auto p = fire_flyer(3);
  ffsim::testing::Rng rnd{0x2545f4914f6cdd1dULL};
  double worst = 0;
  int ops = 0;
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    sched::Schedule s;
    std::vector<sched::OpId> made;
    const int n = 10 + rnd(50);
    for (int k = 0; k < n; ++k) {
      const double bytes = rnd(4) == 0 ? 1.0 + rnd(4096) : (1 + rnd(64)) * 1048576.0;
      sched::OpId op;
      const int kind = rnd(10);
      if (kind == 0) {
        op = s.compute(Place::gpu(rnd(3), rnd(8)), Seconds((1 + rnd(1000)) * 1e-6));
      } else if (kind <= 2) {
        const int node = rnd(3);
        std::vector<Place> in;
        for (int j = 0, m = 2 + rnd(7); j < m; ++j) in.push_back(Place::dram(node, rnd(2)));
        op = s.reduce(Place::cpu(node, rnd(2)), in, Place::dram(node, rnd(2)), Bytes(bytes));
      } else {
        op = ffsim::testing::random_transfer(s, rnd, 3, bytes);
      }
      if (!made.empty() && rnd(3) == 0) s.depend(op, made[static_cast<std::size_t>(rnd(static_cast<int>(made.size())))]);
      if (rnd(6) == 0) s.depend(op, s.delay(Seconds(rnd(2000) * 1e-6)));
      made.push_back(op);
    }
    ops += static_cast<int>(s.size());
    for (bool lazy : {true, false}) {
      CAPTURE(lazy);
      eval::FluidEngine partial(lazy, true, true), full(lazy, true, false);
      worst = std::max(worst, check_same(partial.run(s, *p), full.run(s, *p)));
    }
  }
  CHECK(ops > 1000);  // the trials are not trivially small
  MESSAGE("largest relative difference of an op's end: " << worst);
}

TEST_CASE("eval::FluidEngine: partial and full solves agree on whole HFReduce and NCCL schedules") {
  // 1 to 4 nodes of 8 GPUs: D2H of every GPU, the CPU reduce, host memory, the NIC and the fabric
  // saturate in turn; the tree sends of the nodes join them into one component. Odd sizes (one
  // chunk and a bit, and 24 MiB + 4 bytes) and one chunk.
  const auto lib = config::load_library_params(ffsim::testing::catalog());
  for (int nodes : {1, 2, 3, 4}) {
    const auto p = fire_flyer(nodes);
    const auto g = coll::Group::first_gpus(*p, nodes * 8);
    for (const char* algo : {"hfreduce", "nccl_tree", "nccl_ring", "hf_reduce_scatter"})
      for (double bytes : {4.0 * 1048576, 4.0 * 1048576 + 1, 24.0 * 1048576 + 4}) {
        CAPTURE(nodes);
        CAPTURE(algo);
        CAPTURE(bytes);
        const auto a = coll::algorithms().get(algo).factory();
        sched::Schedule s;
        (void)a->emit(s, *p, lib, g, bytes, coll::Options{});
        eval::FluidEngine partial(true, true, true), full(true, true, false);
        (void)check_same(partial.run(s, *p), full.run(s, *p));
      }
  }
}

TEST_CASE("eval::FluidEngine: partial solves, a start and an end at one instant: the lower level of the two holds") {
  // Node 0: two long copies G1, G2 from socket 1's DRAM to socket 0's share the socket link
  // (100 GB/s) at 50 GB/s each. At one instant t, T (the same path, with a rate cap of 90 GB/s that
  // never binds but keeps it out of G's group, whose members would be solved again anyway) starts,
  // and on node 1 a copy E alone at 100 GB/s ends. E's end bounds nothing below its own level
  // (1e11), which is above G's (5e10); T's start bounds the levels from 100 / 3 GB/s up. So the
  // instant's level is the lower of the two (see unchanged_level): with E's alone, G would keep
  // 50 GB/s each and T get nothing. Expected: from t the three share the link at 100/3 GB/s, and
  // T moves its 100 MB in 3 ms (the DRAMs carry 100 GB/s of their 160).
  // T's flow begins at D + latency + arbitration delay (the engine's own sum); E's size is chosen
  // so that, alone on node 1, it ends at exactly that instant (found by trying adjacent sizes).
  const auto p = fire_flyer(2);
  const double D = 1e-3;
  sched::Schedule probe;
  const auto t_op = probe.transfer(Place::dram(0, 1), Place::dram(0, 0), Bytes(100e6), TrafficClass::Other);
  platform::Lowered low;
  p->lower(probe, t_op, low);
  REQUIRE(low.flows.size() == 1);
  const double t_begin = D + low.latency + low.flows[0].start_delay;
  auto e_end = [&](double bytes) {
    sched::Schedule s;
    s.transfer(Place::dram(1, 0), Place::dram(1, 1), Bytes(bytes), TrafficClass::Other);
    return eval::FluidEngine(true, true, false).run(s, *p).ops[0].end;
  };
  const double t1 = e_end(1e6), t2 = e_end(2e6);
  const double rate = 1e6 / (t2 - t1), start = t1 - 1e6 / rate;
  double bytes = std::round((t_begin - start) * rate);
  for (int k = 0; k < 64; ++k) {
    const double end = e_end(bytes);
    if (end == t_begin) break;
    bytes += end < t_begin ? 1 : -1;
  }
  REQUIRE(e_end(bytes) == t_begin);

  sched::Schedule s;
  for (int k = 0; k < 2; ++k) s.transfer(Place::dram(0, 1), Place::dram(0, 0), Bytes(2e9), TrafficClass::Other);
  const auto t = s.transfer(Place::dram(0, 1), Place::dram(0, 0), Bytes(100e6), TrafficClass::Other);
  s.set_rate_cap(t, 90e9);
  s.depend(t, s.delay(Seconds(D)));
  const auto e = s.transfer(Place::dram(1, 0), Place::dram(1, 1), Bytes(bytes), TrafficClass::Other);
  const auto a = eval::FluidEngine(true, true, true).run(s, *p);
  const auto b = eval::FluidEngine(true, true, false).run(s, *p);
  REQUIRE(a.ops[e].end == t_begin);  // the two events share an instant
  CHECK(a.ops[t].end - t_begin == doctest::Approx(100e6 / (100e9 / 3)).epsilon(1e-9).scale(ffsim::testing::kRelative));
  (void)check_same(a, b);
}
