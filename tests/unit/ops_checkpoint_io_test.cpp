// ffsim ops's checkpoints through the fabric ("through": "fabric", docs/commands/ops.md
// "Checkpoints through the fabric"): the job's nodes write their shares to the storage nodes'
// drives as flows on the fluid engine, and a restart reads them back; the write is the checkpoint's
// cost and the read is added to the restart cost.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "app/ops.hpp"
#include "ops_test_jobs.hpp"
#include "plan/scenario.hpp"
#include "test_catalog.hpp"

using namespace ffsim;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ops::JobSpec fabric_job(const std::string& name, int gpus, double bytes, double write_bw, int targets = 1,
                        double read_bw = 0) {
  ops::JobSpec j;
  j.name = name;
  j.gpus = gpus;
  j.work_s = 3600;
  j.checkpoint_interval_s = 300;
  j.checkpoint_bytes = bytes;
  j.checkpoint_bw_per_node = write_bw;
  j.checkpoint_through_fabric = true;
  j.checkpoint_targets_per_node = targets;
  j.checkpoint_read_bw_per_node = read_bw > 0 ? read_bw : write_bw;
  j.restart_cost_s = 600;
  return j;
}

struct Run {
  ops::OpsParams params;
  std::vector<app::OpsCheckpointIo> io;
};

Run resolve(const std::vector<ops::JobSpec>& jobs, const std::string& scenario = "fire-flyer-2.json") {
  auto sc = plan::load_scenario(std::string(FFSIM_SOURCE_DIR) + "/scenarios/" + scenario, testing::catalog());
  ops::OpsParams p;
  p.cluster.nodes = sc.cluster.nodes;
  p.cluster.gpus_per_node = static_cast<int>(sc.cluster.node.gpus.size());
  p.horizon_s = 24 * testing::kH;
  p.jobs = jobs;
  sc.ops = p;
  Run r;
  r.params = app::ops_params(sc, testing::catalog(), app::OpsOptions{}, nullptr, &r.io);
  return r;
}

}  // namespace

TEST_CASE("ops checkpoint through the fabric: the per-node cap binds while every writer has a storage node") {
  // Fire-Flyer 2: 180 storage nodes behind HDR NICs (about 24 GB/s each on this model). Jobs of
  // 1 GPU (one node), 64 GPUs (8 nodes) and 1,440 GPUs (180 nodes, one writer per storage node)
  // at 10 GiB/s per node: no link on a flow's path is below its cap and no two flows share a
  // storage node, so each node writes its share B / n at the cap: the closed form B / (n x 10 GiB/s),
  // plus the path's latency (microseconds, so within 1e-3 at these sizes).
  const double bw = 10 * kGiB;
  const Run r = resolve({fabric_job("one-gpu", 1, 1.7e9, bw), fabric_job("eight-nodes", 64, 24e9, bw),
                         fabric_job("a-storage-node-each", 1440, 182e9, bw)});
  REQUIRE(r.io.size() == 3);
  const int nodes[] = {1, 8, 180};
  const double bytes[] = {1.7e9, 24e9, 182e9};
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const app::OpsCheckpointIo& io = r.io[i];
    CHECK(io.nodes == nodes[i]);
    CHECK(io.storage_nodes == 180);
    const double closed = bytes[i] / (nodes[i] * bw);
    CHECK(io.closed_form_write_s == doctest::Approx(closed).epsilon(1e-12));
    CHECK(io.write_s == doctest::Approx(closed).epsilon(1e-3));
    CHECK(io.write_s >= closed);  // latency adds, nothing is faster than the cap
    CHECK(io.read_s == doctest::Approx(closed).epsilon(1e-3));
    // The simulated job pays them: the write is its checkpoint cost, the read adds to its restart.
    CHECK(r.params.jobs[i].checkpoint_cost_s == io.write_s);
    CHECK(r.params.jobs[i].restart_cost_s == 600 + io.read_s);
  }
}

TEST_CASE("ops checkpoint through the fabric: more writers than storage nodes, the busiest storage NIC binds") {
  // R: one node writing uncapped (50 TB/s) to one storage node, 240 GB: the path's narrowest link
  // (an HDR NIC on either end, the same model) sets the time, R = B / t (the latency, ~3 us in
  // 10 s, is below 1e-6 of it).
  // 513 nodes (4,099 GPUs: an odd count, the last node partly used), one flow each to storage node
  // i mod 180: storage nodes 0-152 receive 3 flows (513 = 2 x 180 + 153). Three flows at the
  // 10 GiB/s cap want 32.2 GB/s > R, so those storage NICs bind: every flow there gets R / 3 and
  // carries B / 513: time 3 (B / 513) / R. Reading back at the same cap is the same (the NIC's
  // egress). With 360 nodes (2 flows per storage node: 21.5 GB/s < R) the cap binds again.
  const double bw = 10 * kGiB;
  const Run r = resolve({fabric_job("uncapped", 8, 240e9, 50e12), fabric_job("odd", 4099, 24e9, bw),
                         fabric_job("two-per-storage-node", 2880, 14e12, bw)});
  REQUIRE(r.io.size() == 3);
  const double rate = 240e9 / r.io[0].write_s;
  CHECK(rate > 2 * bw);  // the derivation needs R between 2 and 3 caps
  CHECK(rate < 3 * bw);
  const app::OpsCheckpointIo& odd = r.io[1];
  CHECK(odd.nodes == 513);
  const double bound = 3 * (24e9 / 513) / rate;
  CHECK(odd.write_s == doctest::Approx(bound).epsilon(1e-3));
  CHECK(odd.read_s == doctest::Approx(bound).epsilon(1e-3));
  CHECK(odd.write_s > 1.3 * odd.closed_form_write_s);  // 3 x 10.7 / 24.0 = 1.34 x the closed form
  const app::OpsCheckpointIo& two = r.io[2];
  CHECK(two.nodes == 360);
  CHECK(two.write_s == doctest::Approx(14e12 / (360 * bw)).epsilon(1e-3));
}

TEST_CASE("ops checkpoint through the fabric: targets split the cap, reads have their own, shapes are cached") {
  // 8 nodes x 4 targets: 32 flows to 32 storage nodes, each at 10 GiB/s / 4, each carrying B / 32:
  // time (B / 32) / (bw / 4) = B / (8 bw), the closed form again. The read at 5 GB/s per node:
  // B / (8 x 5 GB/s). A second job of the same shape is reused; another GPU count is not.
  const double bw = 10 * kGiB;
  const Run r = resolve({fabric_job("t4", 64, 24e9, bw, 4, 5e9), fabric_job("t4-again", 64, 24e9, bw, 4, 5e9),
                         fabric_job("t4-other", 72, 24e9, bw, 4, 5e9)});
  REQUIRE(r.io.size() == 3);
  CHECK(r.io[0].targets == 4);
  CHECK(r.io[0].write_s == doctest::Approx(24e9 / (8 * bw)).epsilon(1e-3));
  CHECK(r.io[0].read_s == doctest::Approx(24e9 / (8 * 5e9)).epsilon(1e-3));
  CHECK_FALSE(r.io[0].reused);
  CHECK(r.io[1].reused);
  CHECK(r.io[1].job == "t4-again");
  CHECK(r.io[1].write_s == r.io[0].write_s);
  CHECK_FALSE(r.io[2].reused);
  CHECK(r.io[2].nodes == 9);  // 72 GPUs: 9 nodes
}

TEST_CASE("ops checkpoint through the fabric: jobs without it keep the closed form, no storage nodes is an error") {
  // A job without "through" is left as the reader made it (cost B / (n bw), restart as given) and
  // reports nothing; a job without checkpoints reports nothing either.
  ops::JobSpec plain = fabric_job("plain", 64, 24e9, 10 * kGiB);
  plain.checkpoint_through_fabric = false;
  plain.checkpoint_cost_s = 0.25;
  ops::JobSpec none = fabric_job("none", 64, 24e9, 10 * kGiB);
  none.checkpoint_interval_s = 0;
  const Run r = resolve({plain, none});
  CHECK(r.io.empty());
  CHECK(r.params.jobs[0].checkpoint_cost_s == 0.25);
  CHECK(r.params.jobs[0].restart_cost_s == 600);
  CHECK(r.params.jobs[1].restart_cost_s == 600);
  // dgx-a100-cluster has no storage nodes: the job's "through" is the error's place.
  try {
    (void)resolve({fabric_job("j", 64, 24e9, 10 * kGiB)}, "dgx-a100-cluster.json");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("/ops/jobs/0/checkpoint/through") != std::string::npos);
    CHECK(std::string(e.what()).find("storage nodes") != std::string::npos);
  }
}
