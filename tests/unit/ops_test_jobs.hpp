// A job spec for the ops tests, in hours and minutes (ops_sim_test, ops_trace_test).
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

}  // namespace ffsim::testing
