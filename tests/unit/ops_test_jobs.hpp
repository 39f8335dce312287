// A job spec and a cluster for the ops tests, in hours and minutes (ops_sim_test, ops_trace_test,
// ops_linkdown_test).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "ops/simulate.hpp"

namespace ffsim::testing {

inline constexpr double kH = 3600.0;

/// A job of `gpus` GPUs and `work_h` hours of failure-free work, checkpointing every
/// `interval_min` minutes at `cost_s` seconds each (0: none), restarting in `restart_s` seconds.
inline ops::JobSpec ops_job(const std::string& name, int gpus, double work_h, double interval_min = 0,
                            double cost_s = 0, double restart_s = 0) {
  ops::JobSpec j;
  j.name = name;
  j.gpus = gpus;
  j.work_s = work_h * kH;
  j.checkpoint_interval_s = interval_min * 60;
  j.checkpoint_cost_s = cost_s;
  j.restart_cost_s = restart_s;
  return j;
}

/// A cluster of `nodes` nodes of `gpn` GPUs in `zones` zones, simulated for `horizon_h` hours.
inline ops::OpsParams ops_cluster(int nodes, int gpn, int zones, double horizon_h) {
  ops::OpsParams p;
  p.cluster.nodes = nodes;
  p.cluster.gpus_per_node = gpn;
  p.cluster.zones = zones;
  p.horizon_s = horizon_h * kH;
  return p;
}

}  // namespace ffsim::testing
