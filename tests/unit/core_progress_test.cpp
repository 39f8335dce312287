// Progress on a terminal (src/core/progress.hpp): the line a meter draws, the meter's life, and the
// fluid engine's reports. The pty side (a command under script(1), nothing without a terminal or
// with --quiet) is tests/cli/progress_test.py.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <chrono>
#include <sstream>
#include <string>

#include "core/progress.hpp"
#include "eval/engine.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

TEST_CASE("progress::line: bar, share, rate and ETA from the counters") {
  // Before any work: the label and the elapsed time.
  CHECK(progress::line("simulating", 2.5, 0, 0) == "  simulating... 2.5 s");
  // Half of 2,000,000 in 4 s: 12 of 24 marks, 50%, 250k/s, 1,000,000 left at that rate: 4 s.
  CHECK(progress::line("simulating", 4, 1000000, 2000000) ==
        "  simulating [############............] 50% of 2.00M operations, 250.0k/s, ETA 4.0 s");
  // One of 3 in 1 s: 24 / 3 = 8 marks, 33% (rounded down), 1/s, 2 left: 2 s.
  CHECK(progress::line("x", 1, 1, 3) == "  x [########................] 33% of 3 operations, 1/s, ETA 2.0 s");
  // All done: a full bar and no ETA; more done than known (a run started after the total was
  // read) counts as all.
  CHECK(progress::line("x", 2, 10, 10) == "  x [########################] 100% of 10 operations, 5/s");
  CHECK(progress::line("x", 2, 12, 10) == "  x [########################] 100% of 10 operations, 5/s");
  // Nothing done yet, or no time elapsed: no rate, no ETA.
  CHECK(progress::line("x", 0, 0, 10) == "  x [........................] 0% of 10 operations");
  // A run measured by its simulated time (ops): a quarter in 3 s: 6 marks, 25%, 3 x 3/4 / 1/4 = 9 s
  // left; all of it: no ETA. Reported, it comes before the operations counted (ops simulates its
  // jobs' steps first, then the horizon).
  CHECK(progress::line("ops", 3, 0, 0, 0.25) ==
        "  ops [######..................] 25% of the simulated time, ETA 9.0 s");
  CHECK(progress::line("ops", 3, 0, 0, 1) == "  ops [########################] 100% of the simulated time");
  CHECK(progress::line("x", 2, 10, 10, 0.5) == "  x [############............] 50% of the simulated time, ETA 2.0 s");
}

TEST_CASE("progress::bar: marks in proportion, clamped, full for an empty total") {
  CHECK(progress::bar(1, 3, 24) == "[########................]");  // 24 / 3: 8 marks exactly
  CHECK(progress::bar(0, 5, 4) == "[....]");
  CHECK(progress::bar(7, 5, 4) == "[####]");  // more than all: full
  CHECK(progress::bar(0, 0, 3) == "[###]");   // nothing to do: done
  CHECK(progress::bar(1, 0.001, 0) == "[]");
}

TEST_CASE("progress::duration: a time for people at every scale") {
  CHECK(progress::duration(0) == "0.0 s");
  CHECK(progress::duration(4.84) == "4.8 s");
  CHECK(progress::duration(9.96) == "10.0 s");  // under 10 s: one decimal (rounded)
  CHECK(progress::duration(51.6) == "52 s");
  CHECK(progress::duration(190) == "3 min 10 s");
  CHECK(progress::duration(7500) == "2 h 5 min");
  CHECK(progress::duration(-1) == "0.0 s");  // never negative
}

TEST_CASE("progress::Meter: silent when off, and on the engine's operations then the line cleared") {
  auto run_fluid = [] {
    // A small HFReduce-free schedule: three compute ops in a chain on one GPU (3 operations).
    static const auto p = plan::make_platform(ffsim::testing::cluster(1));
    sched::Schedule s;
    const auto a = s.compute(sched::Place::gpu(0, 0), Seconds(1));
    const auto b = s.compute(sched::Place::gpu(0, 0), Seconds(1));
    const auto c = s.compute(sched::Place::gpu(0, 0), Seconds(1));
    s.depend(b, a);
    s.depend(c, b);
    return eval::FluidEngine().run(s, *p).makespan;
  };
  SUBCASE("off: nothing written, nothing listened to") {
    std::ostringstream out;
    {
      progress::Meter m(false, "simulating", out, std::chrono::milliseconds(0));
      CHECK_FALSE(progress::active());
      CHECK(run_fluid() == 3);
    }
    CHECK(out.str().empty());
  }
  SUBCASE("on: the last state (3 of 3 operations), then the line blanked") {
    std::ostringstream out;
    {
      progress::Meter m(true, "simulating", out, std::chrono::milliseconds(0));
      CHECK(progress::active());
      CHECK(run_fluid() == 3);
      m.set_label("simulating 8 GPUs (1/1)");
    }
    CHECK_FALSE(progress::active());  // closed: the engines report nothing again
    const std::string s = out.str();
    // The meter drew at least its first line (delay 0) and, closing, its last state.
    CHECK(s.find("\r  simulating") == 0);
    const auto last = s.rfind("\r  simulating 8 GPUs (1/1) [########################] 100% of 3 operations");
    CHECK(last != std::string::npos);
    // Then blanks over the longest line and a carriage return: the terminal's line is clean.
    CHECK(s.size() > last);
    CHECK(s.back() == '\r');
    const std::string tail = s.substr(s.rfind('\r', s.size() - 2));
    CHECK(tail.find_first_not_of(" \r") == std::string::npos);
  }
  SUBCASE("a meter after another starts from zero") {
    for (int round = 0; round < 2; ++round) {
      std::ostringstream out;
      {
        progress::Meter m(true, "x", out, std::chrono::milliseconds(0));
        CHECK(run_fluid() == 3);
      }
      CHECK(out.str().find("100% of 3 operations") != std::string::npos);
    }
  }
}
