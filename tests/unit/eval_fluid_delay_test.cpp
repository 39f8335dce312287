// The fluid engine's delays (src/eval/fluid.cpp, start_op): a delay (a latency, no flows) releases
// its successors as it starts, each to start no earlier than its end, so that its end is an instant
// only where something waits for it last. The times are those of releasing them at its end:
// derived by hand here on GPU compute ops, which take exactly their seconds alone (one GPU each).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include "eval/engine.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using sched::Place;

namespace {

eval::Result run(const sched::Schedule& s) {
  static const auto p = plan::make_platform(ffsim::testing::cluster(1));
  return eval::FluidEngine().run(s, *p);
}

void check_times(const eval::Result& r, sched::OpId op, double start, double end) {
  CAPTURE(op);
  CHECK(r.ops[op].start == doctest::Approx(start).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(r.ops[op].end == doctest::Approx(end).epsilon(1e-12).scale(ffsim::testing::kRelative));
}

}  // namespace

TEST_CASE("eval::fluid: delays release their successors at their end") {
  SUBCASE("a delay before a compute op, another after it: the run ends with the last delay") {
    // d1 (2 s) -> c (1 s) -> d2 (0.5 s): c runs 2-3, d2 ends at 3.5, which is the makespan though no
    // event comes then.
    sched::Schedule s;
    const auto d1 = s.delay(Seconds(2));
    const auto c = s.compute(Place::gpu(0, 0), Seconds(1));
    const auto d2 = s.delay(Seconds(0.5));
    s.depend(c, d1);
    s.depend(d2, c);
    const auto r = run(s);
    check_times(r, d1, 0, 2);
    check_times(r, c, 2, 3);
    check_times(r, d2, 3, 3.5);
    CHECK(r.makespan == doctest::Approx(3.5).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  SUBCASE("a delay beside a longer and a shorter predecessor") {
    // c1 (3 s) and d (1 s) -> c2 (1 s): c2 waits for c1, runs 3-4. c3 (0.5 s) and e (2 s) -> c4 (1
    // s): c4 waits for the delay, runs 2-3.
    sched::Schedule s;
    const auto c1 = s.compute(Place::gpu(0, 0), Seconds(3));
    const auto d = s.delay(Seconds(1));
    const auto c2 = s.compute(Place::gpu(0, 1), Seconds(1));
    s.depend(c2, c1);
    s.depend(c2, d);
    const auto c3 = s.compute(Place::gpu(0, 2), Seconds(0.5));
    const auto e = s.delay(Seconds(2));
    const auto c4 = s.compute(Place::gpu(0, 3), Seconds(1));
    s.depend(c4, c3);
    s.depend(c4, e);
    const auto r = run(s);
    check_times(r, c2, 3, 4);
    check_times(r, d, 0, 1);
    check_times(r, c4, 2, 3);
    check_times(r, e, 0, 2);
    CHECK(r.makespan == doctest::Approx(4).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  SUBCASE("delays in a chain, a barrier and two edges to one op") {
    // c (1 s) -> d1 (1 s) -> d2 (2 s) -> b (barrier: a 0 s delay) -> c2 (0.25 s), and d1 -> c2 twice
    // (a duplicated edge counts twice, released once): d1 1-2, d2 2-4, b at 4, c2 4-4.25.
    sched::Schedule s;
    const auto c = s.compute(Place::gpu(0, 0), Seconds(1));
    const auto d1 = s.delay(Seconds(1));
    const auto d2 = s.delay(Seconds(2));
    const auto b = s.delay(Seconds(0));
    const auto c2 = s.compute(Place::gpu(0, 0), Seconds(0.25));
    s.depend(d1, c);
    s.depend(d2, d1);
    s.depend(b, d2);
    s.depend(c2, b);
    s.depend(c2, d1);
    s.depend(c2, d1);
    const auto r = run(s);
    check_times(r, d1, 1, 2);
    check_times(r, d2, 2, 4);
    check_times(r, b, 4, 4);
    check_times(r, c2, 4, 4.25);
    CHECK(r.makespan == doctest::Approx(4.25).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  SUBCASE("only delays") {
    // Two delays from the start, 1 s and 3 s: the run takes 3 s.
    sched::Schedule s;
    (void)s.delay(Seconds(1));
    const auto d = s.delay(Seconds(3));
    const auto r = run(s);
    check_times(r, d, 0, 3);
    CHECK(r.makespan == doctest::Approx(3).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
}
