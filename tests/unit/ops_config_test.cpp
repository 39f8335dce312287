// The "ops" section of a scenario read into ops::OpsParams (src/config/ops_reader.cpp).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "config/ops_reader.hpp"
#include "config/reader.hpp"
#include "core/error.hpp"

using namespace ffsim;

namespace {

ops::OpsParams parse(const std::string& ops_json, int nodes = 1200, int gpn = 8) {
  const auto d = config::Document::parse(ops_json, "t.json", false);
  return config::parse_ops(d.root(), nodes, gpn);
}

}  // namespace

TEST_CASE("ops config: lengths, checkpoint cost from size and bandwidth, failure processes") {
  const auto p = parse(R"({"seed": 42, "horizon": "30d", "cross_zone_min_gpus": 256,
    "jobs": [
      {"name": "a", "gpus": 512, "steps": 1000, "step_time": "1.5s", "submit": "2h", "count": 3, "repeat": true,
       "checkpoint": {"interval": "5min", "size": "160GiB", "write_bandwidth_per_node": "10GiB/s"}, "restart_cost": "10min"},
      {"name": "b", "gpus": 12, "duration": {"value": "7d", "source": "[I]"}, "checkpoint": {"interval": "1h", "cost": "0s"}},
      {"name": "c", "gpus": 1, "duration": "1h", "checkpoint": "none"}],
    "failures": [{"name": "x", "unit": "gpu", "rate_per_hour": {"value": 6.3e-5, "source": "s"}, "repair": "1h"},
                 {"name": "y", "unit": "node", "rate_per_hour": 0}]})");
  CHECK(p.seed == 42);
  CHECK(p.horizon_s == 30 * 86400.0);
  CHECK(p.cluster.zones == 0);  // none given: the fabric's (app/ops.cpp)
  CHECK(p.cluster.cross_zone_min_gpus == 256);
  REQUIRE(p.jobs.size() == 3);
  CHECK(p.jobs[0].work_s == 1500.0);
  CHECK(p.jobs[0].submit_s == 7200.0);
  CHECK(p.jobs[0].count == 3);
  CHECK(p.jobs[0].repeat);
  CHECK(p.jobs[0].checkpoint_interval_s == 300.0);
  // 160 GiB over the job's 64 nodes at 10 GiB/s each: 160 / 640 s = 0.25 s.
  CHECK(p.jobs[0].checkpoint_cost_s == doctest::Approx(0.25).epsilon(1e-12));
  CHECK(p.jobs[0].restart_cost_s == 600.0);
  // 12 GPUs take 2 nodes: a size would be split over 2; here the cost is given (0 allowed).
  CHECK(p.jobs[1].work_s == 7 * 86400.0);
  CHECK(p.jobs[1].checkpoint_interval_s == 3600.0);
  CHECK(p.jobs[1].checkpoint_cost_s == 0.0);
  CHECK(p.jobs[2].checkpoint_interval_s == 0.0);
  REQUIRE(p.failures.size() == 2);
  CHECK(p.failures[0].unit == ops::FailureUnit::Gpu);
  CHECK(p.failures[0].rate_per_hour == 6.3e-5);
  CHECK(p.failures[0].repair_s == 3600.0);
  CHECK(p.failures[1].unit == ops::FailureUnit::Node);
  CHECK(p.failures[1].repair_s == 0.0);
}

TEST_CASE("ops config: bad sections name the pointer and what was expected") {
  auto err = [](const std::string& text) -> std::string {
    try {
      (void)parse(text, 4, 8);
    } catch (const ConfigError& e) {
      return e.pointer() + ": " + e.message();
    }
    return "no error";
  };
  CHECK(err(R"({"horizon": "1d", "jobs": [{"name": "j", "gpus": 33, "duration": "1h"}]})") ==
        "/jobs/0/gpus: job \"j\" needs 33 GPUs; the cluster has 32 (4 nodes x 8); give at most 32");
  CHECK(err(R"({"horizon": "1d", "jobs": [{"name": "j", "gpus": 1, "duration": "1h", "steps": 3}]})") ==
        "/jobs/0: give \"duration\" or \"steps\" (with \"step_time\"), not both");
  CHECK(
      err(R"({"horizon": "1d", "jobs": [{"name": "j", "gpus": 1, "duration": "1h"}, {"name": "j", "gpus": 2, "duration": "1h"}]})") ==
      "/jobs/1/name: job name \"j\" is used twice");
  CHECK(err(R"({"horizon": "1d", "jobs": []})") == "/jobs: expected at least one job, got an empty array");
  CHECK(err(R"({"horizon": "1d", "jobs": [{"name": "j", "gpus": 1, "duration": "1h", "checkpoint": "never"}]})") ==
        "/jobs/0/checkpoint: expected a checkpoint policy object or \"none\", got string \"never\"");
  CHECK(
      err(R"({"horizon": "1d", "jobs": [{"name": "j", "gpus": 1, "duration": "1h"}], "failures": [{"name": "f", "unit": "gpu", "rate_per_hour": 2}]})")
          .rfind("/failures/0/rate_per_hour: ", 0) == 0);
  CHECK(err(R"({"horizon": "1d", "zones": 5, "jobs": [{"name": "j", "gpus": 1, "duration": "1h"}]})")
            .rfind("/zones: ", 0) == 0);
  CHECK(err(R"({"jobs": [{"name": "j", "gpus": 1, "duration": "1h"}]})").find("horizon") != std::string::npos);
  CHECK(err(R"({"horizon": "1d", "jobs": [{"name": "j", "gpus": 1, "duration": "1h", "gpu": 2}]})")
            .rfind("/jobs/0: unknown key \"gpu\"", 0) == 0);
}

TEST_CASE("ops config: arrivals, a Poisson stream of instances in place of count and submit") {
  const auto p = parse(R"({"horizon": "30d", "jobs": [
      {"name": "s", "gpus": 8, "duration": "2h", "arrivals": {"rate_per_hour": {"value": 0.5, "source": "[I]"},
       "from": "1d", "until": "20d"}},
      {"name": "t", "gpus": 1, "duration": "1h", "arrivals": {"rate_per_hour": 3}}]})");
  REQUIRE(p.jobs.size() == 2);
  CHECK(p.jobs[0].arrival_rate_per_hour == 0.5);
  CHECK(p.jobs[0].submit_s == 86400.0);
  CHECK(p.jobs[0].arrivals_until_s == 20 * 86400.0);
  CHECK(p.jobs[0].count == 1);
  CHECK_FALSE(p.jobs[0].repeat);
  // Without from and until: from 0 to the horizon (infinity: the horizon cuts them).
  CHECK(p.jobs[1].arrival_rate_per_hour == 3.0);
  CHECK(p.jobs[1].submit_s == 0.0);
  CHECK(p.jobs[1].arrivals_until_s == std::numeric_limits<double>::infinity());
  auto err = [](const std::string& job) -> std::string {
    try {
      (void)parse(R"({"horizon": "1d", "jobs": [)" + job + "]}", 4, 8);
    } catch (const ConfigError& e) {
      return e.pointer() + ": " + e.message();
    }
    return "no error";
  };
  CHECK(err(R"({"name": "j", "gpus": 1, "duration": "1h", "count": 2, "arrivals": {"rate_per_hour": 1}})") ==
        "/jobs/0/count: a job with \"arrivals\" has no \"count\": each arrival is one instance; give the arrivals' "
        "start as \"arrivals\": {\"from\": ...}");
  CHECK(err(R"({"name": "j", "gpus": 1, "duration": "1h", "repeat": true, "arrivals": {"rate_per_hour": 1}})")
            .rfind("/jobs/0/repeat: a job with \"arrivals\" has no \"repeat\"", 0) == 0);
  CHECK(err(R"({"name": "j", "gpus": 1, "duration": "1h", "submit": "1h", "arrivals": {"rate_per_hour": 1}})")
            .rfind("/jobs/0/submit: ", 0) == 0);
  CHECK(err(R"({"name": "j", "gpus": 1, "duration": "1h", "arrivals": {"rate_per_hour": 0}})") ==
        "/jobs/0/arrivals/rate_per_hour: expected a rate > 0 of arrivals per hour, got 0 (for a job submitted once, "
        "leave \"arrivals\" out)");
  CHECK(err(R"({"name": "j", "gpus": 1, "duration": "1h", "arrivals": {"rate_per_hour": -1}})")
            .rfind("/jobs/0/arrivals/rate_per_hour: expected a number in [0, ", 0) == 0);
  CHECK(
      err(R"({"name": "j", "gpus": 1, "duration": "1h", "arrivals": {"rate_per_hour": 1, "from": "2d", "until": "1d"}})")
          .rfind("/jobs/0/arrivals/until: the arrivals end (", 0) == 0);
  CHECK(err(R"({"name": "j", "gpus": 1, "duration": "1h", "arrivals": {"rate_per_hour": 1, "rate": 2}})")
            .rfind("/jobs/0/arrivals: unknown key \"rate\"", 0) == 0);
  CHECK(err(R"({"name": "j", "gpus": 1, "duration": "1h", "arrivals": 3})")
            .rfind("/jobs/0/arrivals: expected the arrivals {", 0) == 0);
}

TEST_CASE("ops config: a workload in place of step_time, a checkpoint of the model's size") {
  // The reader only resolves the file, relative to the file that names it, and keeps the step
  // count; the app (app/ops.cpp) computes the step time and the checkpoint's size.
  const std::string dir = std::string(FFSIM_SOURCE_DIR) + "/scenarios/";
  const auto d = config::Document::parse(
      R"({"horizon": "30d", "jobs": [{"name": "llama", "gpus": 512, "steps": 1000, "workload": "train-llama13b-pp.json",
          "checkpoint": {"interval": "5min", "size": "model", "write_bandwidth_per_node": "10GiB/s"}}]})",
      dir + "ops-t.json", false);
  const auto p = config::parse_ops(d.root(), 1200, 8);
  REQUIRE(p.jobs.size() == 1);
  CHECK(p.jobs[0].workload == dir + "train-llama13b-pp.json");
  CHECK(p.jobs[0].steps == 1000);
  CHECK(p.jobs[0].work_s == 0);  // not yet: the app's
  CHECK(p.jobs[0].checkpoint_size_from_model);
  CHECK(p.jobs[0].checkpoint_bw_per_node == 10.0 * (1 << 30));
  CHECK(p.jobs[0].checkpoint_cost_s == 0);
  // Unresolved, the job is refused by the simulation's checks (its work is the app's to fill in).
  CHECK_THROWS_AS(ops::validate(p), ValueError);
  auto err = [&](const std::string& job) -> std::string {
    try {
      const auto e = config::Document::parse(R"({"horizon": "1d", "jobs": [)" + job + "]}", dir + "ops-t.json", false);
      (void)config::parse_ops(e.root(), 1200, 8);
    } catch (const ConfigError& x) {
      return x.pointer() + ": " + x.message();
    }
    return "no error";
  };
  CHECK(err(R"({"name": "j", "gpus": 8, "duration": "1d", "workload": "train-llama13b-pp.json"})") ==
        "/jobs/0/workload: \"workload\" gives the step time of \"steps\": give \"steps\" in place of \"duration\"");
  CHECK(err(R"({"name": "j", "gpus": 8, "steps": 5, "workload": "nowhere.json"})")
            .rfind("/jobs/0/workload: expected a scenario file with a \"workload\" section", 0) == 0);
  CHECK(err(R"({"name": "j", "gpus": 8, "steps": 5, "workload": ""})")
            .rfind("/jobs/0/workload: expected a scenario file", 0) == 0);
  CHECK(err(R"({"name": "j", "gpus": 8, "steps": 5, "step_time": "1s", "workload": "train-llama13b-pp.json"})") ==
        "/jobs/0/step_time: give \"step_time\" or \"workload\" (whose step time is computed), not both");
  CHECK(err(R"({"name": "j", "gpus": 8, "steps": 5, "step_time": "1s",
                "checkpoint": {"interval": "5min", "size": "model", "write_bandwidth_per_node": "10GiB/s"}})")
            .rfind("/jobs/0/checkpoint/size: \"model\" takes the checkpoint's size from the job's \"workload\"", 0) ==
        0);
}
