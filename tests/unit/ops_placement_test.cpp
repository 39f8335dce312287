// ffsim ops's placement knob (JobSpec::placement, docs/commands/ops.md "Placement"): which free
// whole nodes each rule picks, that the scheduler uses them, and that a job's step time is the
// train service's at that placement.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "app/engines.hpp"
#include "app/ops.hpp"
#include "app/train.hpp"
#include "coll/placement.hpp"
#include "ops/placement.hpp"
#include "ops/simulate.hpp"
#include "ops_test_jobs.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"
#include "train/run.hpp"

using namespace ffsim;
using P = ops::JobSpec::Placement;

TEST_CASE("ops placement: the nodes each rule chooses among the free ones") {
  const std::vector<int> ten{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  // packed: the first k.
  CHECK(ops::choose_whole_nodes(ten, 3, P::Packed, 1, 0, 1, 1) == std::vector<int>{0, 1, 2});
  // spread over F = 10 with k = 3: idle[floor(i x 10 / 3)] = idle[0], idle[3], idle[6].
  CHECK(ops::choose_whole_nodes(ten, 3, P::Spread, 1, 0, 1, 1) == std::vector<int>{0, 3, 6});
  // k = F takes every node; k = 1 the first; k = 0 none.
  CHECK(ops::choose_whole_nodes(ten, 10, P::Spread, 1, 0, 1, 1) == ten);
  CHECK(ops::choose_whole_nodes(ten, 1, P::Spread, 1, 0, 1, 1) == std::vector<int>{0});
  CHECK(ops::choose_whole_nodes(ten, 0, P::Spread, 1, 0, 1, 1).empty());
  CHECK(ops::choose_whole_nodes(ten, 0, P::Random, 1, 0, 1, 1).empty());
  // Free nodes that are not contiguous: F = 5, k = 2: positions 0 and floor(5 / 2) = 2.
  const std::vector<int> gaps{1, 4, 5, 9, 12};
  CHECK(ops::choose_whole_nodes(gaps, 2, P::Spread, 1, 0, 1, 1) == std::vector<int>{1, 5});
  // odd k over F = 7: k = 3 gives positions 0, floor(7/3) = 2, floor(14/3) = 4.
  const std::vector<int> seven{0, 1, 2, 3, 4, 5, 6};
  CHECK(ops::choose_whole_nodes(seven, 3, P::Spread, 1, 0, 1, 1) == std::vector<int>{0, 2, 4});
  // random: k distinct free nodes, ascending; all of them when k = F; the same for the same
  // (seed, job, instance, run), and the draws vary with the run.
  const auto a = ops::choose_whole_nodes(gaps, 3, P::Random, 7, 2, 5, 1);
  CHECK(a.size() == 3);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(std::set<int>(a.begin(), a.end()).size() == 3);
  for (int n : a) CHECK(std::find(gaps.begin(), gaps.end(), n) != gaps.end());
  CHECK(ops::choose_whole_nodes(gaps, 3, P::Random, 7, 2, 5, 1) == a);
  CHECK(ops::choose_whole_nodes(gaps, 5, P::Random, 7, 2, 5, 1) == gaps);
  std::set<std::vector<int>> seen;
  for (std::uint64_t run = 1; run <= 40; ++run) seen.insert(ops::choose_whole_nodes(gaps, 2, P::Random, 7, 2, 5, run));
  CHECK(seen.size() > 5);  // C(5, 2) = 10 pairs; 40 uniform draws miss at most a few (P(<= 5) ~ 1e-8)
}

TEST_CASE("ops placement: random is uniform over the free nodes") {
  // k = 2 of F = 5 in 20,000 draws: each node is chosen with probability 2/5, 8,000 times in
  // expectation with a standard deviation sqrt(20000 x 0.4 x 0.6) = 69.3; allow 5 of them (346).
  const std::vector<int> five{0, 1, 2, 3, 4};
  std::vector<int> hits(5, 0);
  for (std::uint64_t run = 1; run <= 20000; ++run)
    for (int n : ops::choose_whole_nodes(five, 2, P::Random, 1, 0, 1, run)) ++hits[static_cast<std::size_t>(n)];
  for (int h : hits) CHECK(std::abs(h - 8000) < 346);
}

namespace {

ops::OpsParams four_nodes(P rule, double node_rate_per_hour) {
  // 4 nodes x 8 GPUs, one zone, 400 h; job a: 16 GPUs (2 whole nodes) for 300 h, checkpointing
  // every 10 min at 1 s; node failures without repair.
  ops::OpsParams p;
  p.cluster.nodes = 4;
  p.cluster.gpus_per_node = 8;
  p.cluster.zones = 1;
  p.horizon_s = 400 * testing::kH;
  p.seed = 11;
  ops::JobSpec a = testing::ops_job("a", 16, 300, 10, 1);
  a.placement = rule;
  a.placement_seed = 5;
  p.jobs.push_back(a);
  if (node_rate_per_hour > 0) p.failures.push_back({"node", ops::FailureUnit::Node, node_rate_per_hour, 0});
  return p;
}

// The nodes whose failures ended a run of job a.
std::set<int> nodes_that_ended_a(const ops::OpsResult& r) {
  std::set<int> s;
  for (const auto& f : r.timeline->failures)
    if (!f.ended.empty()) s.insert(f.node);
  return s;
}

}  // namespace

TEST_CASE("ops placement: the scheduler gives the job the rule's nodes") {
  // About 0.01 x 4 x 400 = 16 node failures, the same draws under every rule (placement draws
  // from no failure stream). The job is alone, so at each (re)start all 4 nodes are free: packed
  // takes {0, 1} every time, spread {idle[0], idle[2]} = {0, 2}; a failure ends its run iff it hits
  // one of them. Random draws its pair afresh per run, so over ~8 restarts failures on all four
  // nodes end it.
  const auto packed = ops::simulate(four_nodes(P::Packed, 0.01), true);
  const auto spread = ops::simulate(four_nodes(P::Spread, 0.01), true);
  const auto random = ops::simulate(four_nodes(P::Random, 0.01), true);
  REQUIRE(packed.timeline->failures.size() >= 8);
  CHECK(nodes_that_ended_a(packed) == std::set<int>{0, 1});
  CHECK(nodes_that_ended_a(spread) == std::set<int>{0, 2});
  CHECK(nodes_that_ended_a(random).size() == 4);
  // The same failures were drawn in all three (times and nodes).
  REQUIRE(spread.timeline->failures.size() == packed.timeline->failures.size());
  for (std::size_t i = 0; i < packed.timeline->failures.size(); ++i) {
    CHECK(spread.timeline->failures[i].t == packed.timeline->failures[i].t);
    CHECK(spread.timeline->failures[i].node == packed.timeline->failures[i].node);
  }
  // Determinism: a placement's draws are the same on a second run.
  const auto again = ops::simulate(four_nodes(P::Random, 0.01), true);
  CHECK(again.gpu_s.useful == random.gpu_s.useful);
  CHECK(nodes_that_ended_a(again) == nodes_that_ended_a(random));
  // Without failures the rule changes nothing the accounting sees: the same GPU-seconds.
  const auto quiet_p = ops::simulate(four_nodes(P::Packed, 0)), quiet_r = ops::simulate(four_nodes(P::Random, 0));
  CHECK(quiet_p.gpu_s.useful == quiet_r.gpu_s.useful);
  CHECK(quiet_p.gpu_s.idle == quiet_r.gpu_s.idle);
}

TEST_CASE("ops placement: a job's step is the train step at its placement, one per (workload, GPUs, placement)") {
  // dgx-a100-cluster at 64 GPUs: packed, destinations 0 and 60 collide on one leaf-spine link
  // under D-mod-k (docs/nccl.md, "Placement and the curve"), spread does not, so the two steps
  // differ; each equals `train --placement` with the collectives estimated.
  const std::string src = FFSIM_SOURCE_DIR;
  auto sc = plan::load_scenario(src + "/scenarios/dgx-a100-cluster.json", testing::catalog());
  ops::OpsParams p;
  p.cluster.nodes = sc.cluster.nodes;
  p.cluster.gpus_per_node = static_cast<int>(sc.cluster.node.gpus.size());
  p.cluster.zones = 1;
  p.horizon_s = 24 * testing::kH;
  for (auto [name, rule, seed] : {std::tuple{"packed", P::Packed, 1}, std::tuple{"spread", P::Spread, 1},
                                  std::tuple{"random", P::Random, 3}, std::tuple{"spread-b", P::Spread, 1}}) {
    ops::JobSpec j;
    j.name = name;
    j.gpus = 64;
    j.steps = 100;
    j.workload = src + "/scenarios/train-vgg16-ddp.json";
    j.placement = rule;
    j.placement_seed = static_cast<std::uint64_t>(seed);
    p.jobs.push_back(j);
  }
  sc.ops = p;
  std::vector<app::OpsStepTime> steps;
  const ops::OpsParams q = app::ops_params(sc, testing::catalog(), app::OpsOptions{}, &steps);
  REQUIRE(steps.size() == 4);
  const auto w = plan::load_scenario(src + "/scenarios/train-vgg16-ddp.json", testing::catalog(), false);
  const app::StepSession s(sc, testing::catalog(), app::choose_engine("fluid", app::Analytic::Fluid),
                           train::CollectiveCosts::Method::Estimate, false, 1);
  const char* forms[] = {"packed", "spread", "random:3", "spread"};
  for (std::size_t i = 0; i < 4; ++i) {
    train::WorkloadSpec ws = *w.workload;
    ws.placement = coll::parse_placement(forms[i]);
    CAPTURE(i);
    CHECK(steps[i].placement == forms[i]);
    CHECK(steps[i].step_s == train::simulate_step(ws, s.env(), 64).step_s);
    CHECK(q.jobs[i].work_s == 100 * steps[i].step_s);
  }
  CHECK(steps[0].step_s != steps[1].step_s);
  CHECK_FALSE(steps[1].reused);
  CHECK(steps[3].reused);  // spread-b: the same shape and placement as spread
  CHECK_FALSE(steps[2].reused);
}
