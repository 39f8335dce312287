// `ffsim net`: microbenchmarks of the simulated machine (what a new cluster's acceptance tests
// measure on the real one): copies, peer-to-peer, host memory, ping-pong, bandwidth, storage, isolation.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "eval/engine.hpp"
#include "plan/scenario.hpp"

namespace ffsim::plan {

/// One measured case.
struct NetRow {
  std::string name;       ///< "1 GPU: gpu0", "all 8 GPUs: gpu5", ...
  double bytes = 0;       ///< per transfer
  double seconds = 0;     ///< time of the transfer (one-way latency for ping-pong)
  double rate = 0;        ///< bytes per second (0 where it means nothing)
  double bound = 0;       ///< the physical bound it is compared with (bytes per second; 0 if none)
  std::string bound_name; ///< what the bound is
  std::string limiter;    ///< the resource that limited it in the simulation
};

struct NetReport {
  std::string test;
  std::string engine;
  std::string note;  ///< one line under the table
  std::vector<NetRow> rows;
};

struct NetOptions {
  double bytes = 184.0 * 1048576.0;  ///< transfer size
  int senders_per_client = 64;       ///< storage-read: request-to-send cap on concurrent senders
  int clients = 0;                   ///< storage-read: GPU nodes reading (0 = all)
};

/// The tests, in the order `ffsim net --help` lists them.
[[nodiscard]] const std::vector<std::string>& net_tests();

/// Runs test `name` on the scenario's platform with `engine`; the limiter column comes from
/// `limits`, an engine that reports limiters (may be `engine` itself). Throws UsageError for an
/// unknown test, ValueError when the scenario lacks what the test needs (e.g. no storage nodes).
[[nodiscard]] NetReport run_net_test(const std::string& name, const ScenarioSpec& sc, eval::Engine& engine,
                                     eval::Engine& limits, const std::string& engine_name, const NetOptions& opt);

}  // namespace ffsim::plan
