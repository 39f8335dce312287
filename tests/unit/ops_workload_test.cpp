// ffsim ops with step times from ffsim train's workloads (app/ops.cpp): the step is the train
// service's, computed once per (workload, GPU count), and a checkpoint of "size": "model" is the
// model's weights and optimizer state.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>

#include "app/engines.hpp"
#include "app/ops.hpp"
#include "app/train.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"
#include "train/run.hpp"

using namespace ffsim;

TEST_CASE("ops workloads: the train step per shape, once, and the model checkpoint size") {
  const std::string src = FFSIM_SOURCE_DIR;
  const auto sc = plan::load_scenario(src + "/scenarios/ops-fire-flyer-2.json", testing::catalog());
  app::OpsOptions opt;
  opt.jobs_file = src + "/tests/data/cli/ops-workloads.json";
  std::vector<app::OpsStepTime> steps;
  const ops::OpsParams p = app::ops_params(sc, testing::catalog(), opt, &steps);
  REQUIRE(steps.size() == 3);
  // The same step as the train service's on the same cluster, engine and collective method.
  const auto w = plan::load_scenario(src + "/scenarios/train-llama13b-pp.json", testing::catalog(), false);
  const app::StepSession s(sc, testing::catalog(), app::choose_engine("fluid", app::Analytic::Fluid),
                           train::CollectiveCosts::Method::Estimate, false, 1);
  const double want = train::simulate_step(*w.workload, s.env(), 512).step_s;
  CHECK(steps[0].job == "llama13b-pp");
  CHECK(steps[0].step_s == want);
  CHECK(steps[0].engine == "fluid");
  CHECK_FALSE(steps[0].reused);
  // The job's work is steps x step; its checkpoint 13.0e9 parameters x 14 B over 64 nodes at
  // 10 GiB/s each.
  CHECK(p.jobs[0].step_s == want);
  CHECK(p.jobs[0].work_s == 20000 * want);
  CHECK(steps[0].checkpoint_bytes == doctest::Approx(182e9).epsilon(0.005));
  CHECK(p.jobs[0].checkpoint_cost_s ==
        doctest::Approx(steps[0].checkpoint_bytes / (64 * 10.0 * (1 << 30))).epsilon(1e-12));
  // vgg16-ddp and vgg16-ddp-b: one shape (train-vgg16-ddp on 512 GPUs): computed for the first,
  // the same step reused for the second; the second gives its checkpoint's cost (no model size).
  CHECK_FALSE(steps[1].reused);
  CHECK(steps[2].reused);
  CHECK(steps[2].step_s == steps[1].step_s);
  CHECK(steps[2].checkpoint_bytes == 0);
  CHECK(p.jobs[2].checkpoint_cost_s == 1.0);
  CHECK(p.jobs[2].work_s == 500000 * steps[1].step_s);
  ops::validate(p);
}
