// Regression test of the fluid engine's clock: a flow whose rate rises leaves a stale end event
// behind, which must not stretch the makespan.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include "eval/engine.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

TEST_CASE("eval::FluidEngine: a flow that speeds up ends the run at its new end, not its stale one") {
  const std::string text = R"({"name": "one", "cluster": {"node": "fire_flyer_pcie", "nodes": 1},
                               "fabric": {"topology": "two_layer", "switch": "qm8700"}})";
  const auto sc = plan::parse_scenario(config::Document::parse(text, "one.json", false), ffsim::testing::catalog());
  const auto p = plan::make_platform(sc);
  // Two kernels on one GPU from t = 0: A needs 1 s alone, B 3 s. Sharing the GPU each runs at 1/2:
  // A ends at 2 s, having done 1 s of work; B has done 1 s too and runs alone from then on, so it
  // ends at 2 + 2 = 4 s. Its first end event, scheduled at rate 1/2 for 6 s, is stale.
  sched::Schedule s;
  const auto a = s.compute(sched::Place::gpu(0, 0), Seconds(1));
  const auto b = s.compute(sched::Place::gpu(0, 0), Seconds(3));
  eval::FluidEngine f;
  const eval::Result r = f.run(s, *p);
  CHECK(r.ops[a].end == doctest::Approx(2).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(r.ops[b].end == doctest::Approx(4).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(r.makespan == doctest::Approx(4).epsilon(1e-12).scale(ffsim::testing::kRelative));
}
