// ffsim ops: link failures (FailureUnit::Link, issue 32's "link down for a time"): a node's link
// down ends the runs of the jobs that span more than one node and use the node, leaves jobs on the
// node alone running, keeps multi-node jobs off the node (placement and the backfill reservation)
// for its down time, and puts the node's idle GPUs in the state link_down. Failures here are hand-
// placed (FailureSpec::at), so every expectation is derived from known times.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "config/ops_reader.hpp"
#include "config/reader.hpp"
#include "core/error.hpp"
#include "ops/simulate.hpp"
#include "ops_test_jobs.hpp"

using namespace ffsim;

namespace {

using testing::kH;

constexpr auto cluster = &testing::ops_cluster;

template <class... A>
ops::JobSpec job(A... a) {
  return testing::ops_job(a...);
}

/// A link process of down time `down_h` failing the links of the nodes at the times (hours) given.
ops::FailureSpec links(const std::string& name, double down_h, std::vector<std::pair<double, int>> at_h) {
  ops::FailureSpec f;
  f.name = name;
  f.unit = ops::FailureUnit::Link;
  f.down_s = down_h * kH;
  for (const auto& [t, node] : at_h) f.at.emplace_back(t * kH, static_cast<std::uint64_t>(node));
  return f;
}

ops::FailureSpec hand_placed(const std::string& name, ops::FailureUnit unit, double repair_h,
                             std::vector<std::pair<double, int>> at_h) {
  ops::FailureSpec f;
  f.name = name;
  f.unit = unit;
  f.repair_s = repair_h * kH;
  for (const auto& [t, u] : at_h) f.at.emplace_back(t * kH, static_cast<std::uint64_t>(u));
  return f;
}

void check_conservation(const ops::OpsParams& p, const ops::OpsResult& r) {
  // Every GPU-second of the horizon is in exactly one state, link_down included.
  const double want = static_cast<double>(p.cluster.nodes) * p.cluster.gpus_per_node * p.horizon_s;
  CHECK(r.gpu_s.total() == doctest::Approx(want).epsilon(1e-9));
  CHECK(r.gpu_s.useful + r.gpu_s.checkpoint + r.gpu_s.restart + r.gpu_s.lost_total() + r.gpu_s.idle + r.gpu_s.down +
            r.gpu_s.link_down ==
        doctest::Approx(want).epsilon(1e-9));
  for (double v : {r.gpu_s.useful, r.gpu_s.checkpoint, r.gpu_s.restart, r.gpu_s.idle, r.gpu_s.down, r.gpu_s.link_down})
    CHECK(v >= 0);
  for (double v : r.gpu_s.lost) CHECK(v >= 0);
  double busy = 0;
  for (const auto& j : r.jobs) {
    busy += j.gpu_s.busy();
    CHECK(j.gpu_s.link_down == 0);  // a job's GPUs are in its own states
  }
  CHECK(busy == doctest::Approx(r.gpu_s.busy()).epsilon(1e-12));
}

}  // namespace

TEST_CASE("ops link: a link down ends the run of a job on two nodes, not a job on the node alone") {
  // 4 nodes x 8 GPUs, 20 h. "big" (16 GPUs, 10 h, no checkpoints) is placed first, packed: nodes 0
  // and 1. "small" (4 GPUs, 10 h) takes the best-fitting node for 4 GPUs, node 2 (nodes 2 and 3 tie
  // with 8 free; the lowest wins). Links down for 1 h: node 0 at 2 h, node 2 at 3 h.
  // - 2 h: big spans nodes 0 and 1 and uses node 0: its run ends, losing 16 x 2 h (no checkpoint).
  //   It restarts at once on the whole free nodes whose links are up: 1 and 3 (0's link is down,
  //   node 2 has small). It finishes at 2 + 10 = 12 h.
  // - 3 h: node 2 has only small, which is on it alone: nothing ends.
  // link_down: node 0's 8 idle GPUs for 2..3 h, node 2's 4 free GPUs for 3..4 h: 12 GPU-h.
  // idle: 32 x 20 = 640 GPU-h less big's 16 x 2 lost + 16 x 10 useful, small's 4 x 10 and 12
  // link down: 640 - 32 - 160 - 40 - 12 = 396 GPU-h.
  auto p = cluster(4, 8, 1, 20);
  p.jobs = {job("big", 16, 10), job("small", 4, 10)};
  p.failures = {links("link", 1, {{2, 0}, {3, 2}})};
  const auto r = ops::simulate(p, true);
  check_conservation(p, r);
  CHECK(r.jobs[0].interrupted == 1);
  CHECK(r.jobs[0].completed == 1);
  CHECK(r.jobs[0].gpu_s.lost[0] == doctest::Approx(16 * 2 * kH).epsilon(1e-12));
  CHECK(r.jobs[0].gpu_s.useful == doctest::Approx(16 * 10 * kH).epsilon(1e-12));
  CHECK(r.jobs[1].interrupted == 0);
  CHECK(r.jobs[1].completed == 1);
  CHECK(r.jobs[1].gpu_s.useful == doctest::Approx(4 * 10 * kH).epsilon(1e-12));
  CHECK(r.failures[0].events == 2);
  CHECK(r.failures[0].jobs_hit == 1);
  CHECK(r.failures[0].links_down == 2);
  CHECK(r.failures[0].repairs == 0);
  CHECK(r.gpu_s.link_down == doctest::Approx(12 * kH).epsilon(1e-12));
  CHECK(r.gpu_s.idle == doctest::Approx(396 * kH).epsilon(1e-12));
  CHECK(r.gpu_s.down == 0);
  // The timeline: the first failure ended big's instance 1, the second nothing; big's second run
  // started at 2 h and ended at 12 h.
  const auto& t = *r.timeline;
  REQUIRE(t.failures.size() == 2);
  CHECK(t.failures[0].ended == std::vector<std::pair<std::size_t, long long>>{{0, 1}});
  CHECK(t.failures[0].down_s == 1 * kH);
  CHECK(t.failures[1].ended.empty());
  for (const auto& x : t.runs)
    if (x.job == 0 && x.run == 2) {
      CHECK(x.start == doctest::Approx(2 * kH));
      CHECK(x.end == doctest::Approx(12 * kH));
    }
}

TEST_CASE("ops link: an idle node's link down for D is 8 x D GPU-seconds of link_down, taken from idle") {
  // 2 nodes x 8 GPUs, 10 h; job "a" (8 GPUs, 30 h) holds node 0 through the horizon; node 1 is idle.
  // Without link failures node 1's 8 x 10 h = 80 GPU-h are idle.
  auto p = cluster(2, 8, 1, 10);
  p.jobs = {job("a", 8, 30)};
  const double idle0 = ops::simulate(p).gpu_s.idle;
  CHECK(idle0 == doctest::Approx(80 * kH).epsilon(1e-12));
  SUBCASE("one down of 3 h at 1 h") {
    // link_down = 8 x 3 h = 24 GPU-h; idle = 80 - 24 = 56 GPU-h.
    p.failures = {links("link", 3, {{1, 1}})};
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.link_down == doctest::Approx(8 * 3 * kH).epsilon(1e-12));
    CHECK(r.gpu_s.idle == doctest::Approx(idle0 - 8 * 3 * kH).epsilon(1e-12));
    CHECK(r.jobs[0].interrupted == 0);  // node 0's link is up
  }
  SUBCASE("overlapping downs extend to the later end") {
    // 1 h + 3 h and 2 h + 3 h: down from 1 h to 5 h, 8 x 4 h = 32 GPU-h.
    p.failures = {links("link", 3, {{1, 1}, {2, 1}})};
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.link_down == doctest::Approx(8 * 4 * kH).epsilon(1e-12));
    CHECK(r.failures[0].links_down == 2);
  }
  SUBCASE("an overlapping shorter down does not shorten the earlier one") {
    // 1 h + 3 h (until 4 h) and, from another process, 2 h + 1 h (until 3 h): down 1..4 h, 24 GPU-h.
    p.failures = {links("long", 3, {{1, 1}}), links("short", 1, {{2, 1}})};
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.link_down == doctest::Approx(8 * 3 * kH).epsilon(1e-12));
  }
  SUBCASE("a down past the horizon is cut at it") {
    // 8 h + 5 h: down from 8 h to the horizon at 10 h, 8 x 2 h = 16 GPU-h.
    p.failures = {links("link", 5, {{8, 1}})};
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.link_down == doctest::Approx(8 * 2 * kH).epsilon(1e-12));
  }
}

TEST_CASE("ops link: a multi-node job waits for the links, a single-node job backfills onto the node") {
  // 4 nodes x 8 GPUs, 1 zone, 50 h. "A" (16 GPUs, 100 h) takes nodes 0 and 1 at 0. The links of
  // nodes 2 and 3 go down at 1 h for 5 h (until 6 h). At 2 h "B" (16 GPUs, 3 h) and then "C"
  // (4 GPUs) are submitted. B cannot be placed: the only whole free nodes, 2 and 3, have their links
  // down. Its reservation: A's 16 GPUs at 100 h, nodes 2 and 3's 8 + 8 at 6 h (when their links are
  // up; none is counted as free before): 16 GPUs at 6 h, none spare.
  auto p = cluster(4, 8, 1, 50);
  p.failures = {links("link", 5, {{1, 2}, {1, 3}})};
  SUBCASE("C of 2 h ends before B's reservation: it starts at once on a link-down node") {
    // C ends at 4 h <= 6 h: it backfills at 2 h, on node 2 (best fit). B starts at 6 h, a wait of
    // 4 h. link_down: nodes 2 and 3 for 1..6 h, 16 x 5 h, less C's 4 GPUs for 2..4 h: 72 GPU-h.
    p.jobs = {job("A", 16, 100), job("B", 16, 3), job("C", 4, 2)};
    p.jobs[1].submit_s = 2 * kH;
    p.jobs[2].submit_s = 2 * kH;
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.jobs[1].wait_s == doctest::Approx(4 * kH).epsilon(1e-12));
    CHECK(r.jobs[2].wait_s == 0);
    CHECK(r.jobs[1].completed == 1);
    CHECK(r.jobs[2].completed == 1);
    CHECK(r.gpu_s.link_down == doctest::Approx(72 * kH).epsilon(1e-12));
    // Without the link failures B would start at 2 h, at once.
    p.failures.clear();
    CHECK(ops::simulate(p).jobs[1].wait_s == 0);
  }
  SUBCASE("C of 10 h would delay B: it waits, and B starts when the links are up") {
    // C would end at 12 h, after B's 6 h, and the reservation leaves no GPU spare: C waits. At 6 h B
    // takes nodes 2 and 3 (wait 4 h); C starts when B ends at 9 h (wait 7 h). (A reservation that
    // counted the link-down nodes' GPUs as free would put B's at A's end, 100 h, and let C run.)
    p.jobs = {job("A", 16, 100), job("B", 16, 3), job("C", 4, 10)};
    p.jobs[1].submit_s = 2 * kH;
    p.jobs[2].submit_s = 2 * kH;
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.jobs[1].wait_s == doctest::Approx(4 * kH).epsilon(1e-12));
    CHECK(r.jobs[2].wait_s == doctest::Approx(7 * kH).epsilon(1e-12));
    // link_down: nodes 2 and 3 idle for 1..6 h: 16 x 5 = 80 GPU-h.
    CHECK(r.gpu_s.link_down == doctest::Approx(80 * kH).epsilon(1e-12));
  }
}

TEST_CASE("ops link: a flap (down 0) ends the multi-node job and leaves no link_down time") {
  // 4 nodes x 8 GPUs, 20 h; "big" (16 GPUs, 10 h, checkpoints every 30 min of 60 s) on nodes 0 and
  // 1; a flap of node 1's link at 2 h 10 min = 7800 s. The run had done floor(7800 / 1860) = 4
  // cycles of (30 min of work + a 60 s checkpoint), 7440 s; the 360 s of work since are lost:
  // 16 x 360 GPU-s. The job restarts at once on nodes 0 and 1 (the link is up) with 10 h - 2 h of
  // work left.
  auto p = cluster(4, 8, 1, 20);
  p.jobs = {job("big", 16, 10, 30, 60)};
  p.failures = {links("flap", 0, {{2 + 10.0 / 60, 1}})};
  const auto r = ops::simulate(p, true);
  check_conservation(p, r);
  CHECK(r.jobs[0].interrupted == 1);
  CHECK(r.jobs[0].completed == 1);
  CHECK(r.failures[0].jobs_hit == 1);
  CHECK(r.failures[0].links_down == 0);
  CHECK(r.gpu_s.link_down == 0);
  CHECK(r.gpu_s.lost[0] == doctest::Approx(16 * 360.0).epsilon(1e-9));
  CHECK(r.jobs[0].wait_s == 0);  // the restart waited for nothing
}

TEST_CASE("ops link: a repair and a link down on the same node: repair wins, every GPU-second counted once") {
  // 2 nodes x 8 GPUs, 20 h; job "a" (8 GPUs, 30 h) on node 0 through the horizon.
  auto p = cluster(2, 8, 1, 20);
  p.jobs = {job("a", 8, 30)};
  SUBCASE("the link goes down first, and stays down past the repair") {
    // Node 1: link down at 1 h for 5 h (until 6 h); a node failure at 2 h with a 2 h repair (down
    // 2..4 h). down: 8 x 2 = 16 GPU-h; link_down: 1..2 h and 4..6 h, 8 x 3 = 24 GPU-h; idle: 0..1 h
    // and 6..20 h, 8 x 15 = 120 GPU-h; a's useful 8 x 20 = 160 GPU-h; 16 + 24 + 120 + 160 = 320.
    p.failures = {links("link", 5, {{1, 1}}), hand_placed("node", ops::FailureUnit::Node, 2, {{2, 1}})};
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.down == doctest::Approx(16 * kH).epsilon(1e-12));
    CHECK(r.gpu_s.link_down == doctest::Approx(24 * kH).epsilon(1e-12));
    CHECK(r.gpu_s.idle == doctest::Approx(120 * kH).epsilon(1e-12));
    CHECK(r.failures[1].repairs == 1);
  }
  SUBCASE("the link goes down during the repair and ends inside it") {
    // Node 1 down 1..5 h; its link down 2..4 h: the repair covers it all. down 8 x 4 = 32 GPU-h, no
    // link_down; the link failure hit a node under repair: on_down, as any failure there.
    p.failures = {links("link", 2, {{2, 1}}), hand_placed("node", ops::FailureUnit::Node, 4, {{1, 1}})};
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.down == doctest::Approx(32 * kH).epsilon(1e-12));
    CHECK(r.gpu_s.link_down == 0);
    CHECK(r.failures[0].on_down == 1);
    CHECK(r.failures[0].links_down == 0);
  }
  SUBCASE("the repair starts and ends inside the link down") {
    // Link down 1..9 h; repair 3..5 h. down 16 GPU-h; link_down 1..3 h and 5..9 h: 8 x 6 = 48 GPU-h.
    p.failures = {links("link", 8, {{1, 1}}), hand_placed("node", ops::FailureUnit::Node, 2, {{3, 1}})};
    const auto r = ops::simulate(p);
    check_conservation(p, r);
    CHECK(r.gpu_s.down == doctest::Approx(16 * kH).epsilon(1e-12));
    CHECK(r.gpu_s.link_down == doctest::Approx(48 * kH).epsilon(1e-12));
  }
}

namespace {

// A random mix on 5 nodes x 8 GPUs in 2 zones (ops_sim_test's shapes: node-sized, 1.5-node, shared
// and cross-zone jobs) under GPU, node and bursty link failures (rates [I]).
ops::OpsParams random_mix(std::uint64_t seed, bool with_links) {
  auto p = cluster(5, 8, 2, 24 * 20);
  p.cluster.cross_zone_min_gpus = 32;
  p.seed = seed;
  p.jobs = {job("a8", 8, 30, 20, 45, 300), job("b12", 12, 7.5, 15, 30, 120), job("c1", 1, 2, 0, 0, 60),
            job("d3", 3, 11, 60, 10, 0),   job("e24", 24, 40, 30, 90, 600),  job("f40", 40, 16, 45, 120, 900)};
  p.jobs[2].count = 5;
  p.jobs[2].repeat = true;
  p.jobs[4].repeat = true;
  p.jobs[5].submit_s = 50 * kH;
  p.failures = {{"gpu-soft", ops::FailureUnit::Gpu, 2e-3, 0},
                {"gpu-hard", ops::FailureUnit::Gpu, 3e-4, 6 * kH},
                {"node", ops::FailureUnit::Node, 1e-3, 24 * kH}};
  if (with_links) {
    ops::FailureSpec l;
    l.name = "flash-cut";
    l.unit = ops::FailureUnit::Link;
    l.rate_per_hour = 1e-2;
    l.down_s = 1800;
    l.burst_mean = 2;
    l.burst_spread_s = 3600;
    p.failures.push_back(l);
  }
  return p;
}

}  // namespace

TEST_CASE("ops link: conservation over random runs with GPU, node and bursty link failures") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto p = random_mix(seed, true);
    const auto r = ops::simulate(p, true);
    check_conservation(p, r);
    // The link process (5 nodes x 1e-2 per hour x 480 h: 24 failures expected) did take links down.
    CHECK(r.failures[3].events > 5);
    CHECK(r.failures[3].links_down > 0);
    CHECK(r.gpu_s.link_down > 0);
    // Every run a link failure ended was of a job on more than one node (> 8 GPUs).
    for (const auto& x : r.timeline->runs)
      if (x.how == ops::RunEnd::Failed && x.cause == 3) CHECK(p.jobs[x.job].gpus > 8);
    // The same seed gives the same result.
    const auto again = ops::simulate(p);
    CHECK(again.gpu_s.link_down == r.gpu_s.link_down);
    CHECK(again.gpu_s.idle == r.gpu_s.idle);
    CHECK(again.gpu_s.lost == r.gpu_s.lost);
  }
}

TEST_CASE("ops link: adding a link process leaves the other processes' failures as drawn") {
  // Each process draws from its own stream (Rng(seed, process index)); the link process is the
  // last, so the GPU and node processes' times and units are the same with and without it.
  for (std::uint64_t seed : {1u, 2u}) {
    const auto a = ops::simulate(random_mix(seed, false), true);
    const auto b = ops::simulate(random_mix(seed, true), true);
    std::vector<std::tuple<std::size_t, double, std::uint64_t>> fa, fb;
    for (const auto& f : a.timeline->failures) fa.emplace_back(f.process, f.t, f.unit);
    for (const auto& f : b.timeline->failures)
      if (f.process < 3) fb.emplace_back(f.process, f.t, f.unit);
    std::sort(fa.begin(), fa.end());
    std::sort(fb.begin(), fb.end());
    CHECK(fa.size() > 10);
    CHECK(fa == fb);
    for (std::size_t i = 0; i < 3; ++i) CHECK(a.failures[i].events == b.failures[i].events);
  }
}

TEST_CASE("ops link: the failure rate of a job counts link failures only on more than one node") {
  // Young/Daly's MTBF: a link process at 1e-3 per node-hour ends a 16-GPU (2-node) job's runs at
  // 2 x 1e-3 per hour, and never an 8-GPU (1-node) job's.
  auto p = cluster(4, 8, 1, 10);
  p.failures = {links("link", 1, {})};
  p.failures[0].rate_per_hour = 1e-3;
  CHECK(ops::job_failure_rate(p, job("two", 16, 1)) == doctest::Approx(2e-3 / 3600).epsilon(1e-12));
  CHECK(ops::job_failure_rate(p, job("one", 8, 1)) == 0);
}

TEST_CASE("ops link: the config's link unit and its down time, and bad values") {
  auto parse = [](const std::string& failures) {
    const std::string text =
        R"({"horizon": "30d", "jobs": [{"name": "j", "gpus": 16, "duration": "1d"}], "failures": [)" + failures + "]}";
    const auto d = config::Document::parse(text, "t.json", false);
    return config::parse_ops(d.root(), 4, 8);
  };
  const auto p = parse(R"({"name": "cut", "unit": "link", "rate_per_hour": 2e-5, "down": "10min",
                           "burst": {"size": {"mean": 2.5}, "spread": "24h"}})");
  REQUIRE(p.failures.size() == 1);
  CHECK(p.failures[0].unit == ops::FailureUnit::Link);
  CHECK(p.failures[0].down_s == 600.0);
  CHECK(p.failures[0].repair_s == 0.0);
  CHECK(p.failures[0].burst_mean == 2.5);
  CHECK(parse(R"({"name": "flap", "unit": "link", "rate_per_hour": 2e-5, "down": "0s"})").failures[0].down_s == 0.0);
  auto err = [&](const std::string& f) -> std::string {
    try {
      (void)parse(f);
    } catch (const ConfigError& e) {
      return e.pointer() + ": " + e.message();
    }
    return "no error";
  };
  CHECK(err(R"({"name": "x", "unit": "link", "rate_per_hour": 1e-5})").find("missing the link's \"down\"") !=
        std::string::npos);
  CHECK(err(R"({"name": "x", "unit": "link", "rate_per_hour": 1e-5, "down": "1h", "repair": "1h"})")
            .find("/failures/0/repair") != std::string::npos);
  CHECK(err(R"({"name": "x", "unit": "gpu", "rate_per_hour": 1e-5, "down": "1h"})").find("/failures/0/down") !=
        std::string::npos);
  // The simulation's own check, for parameters built in code.
  auto q = cluster(4, 8, 1, 10);
  q.jobs = {job("j", 8, 1)};
  q.failures = {links("l", 1, {{1, 4}})};
  CHECK_THROWS_AS(ops::simulate(q), ValueError);  // node 4 of 0 .. 3
  q.failures = {links("l", -1, {})};
  CHECK_THROWS_AS(ops::simulate(q), ValueError);
  q.failures = {hand_placed("n", ops::FailureUnit::Node, 1, {})};
  q.failures[0].down_s = 60;
  CHECK_THROWS_AS(ops::simulate(q), ValueError);
}
