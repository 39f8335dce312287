// The service of `ffsim ops`: a scenario's operations model (its "ops" section, a --jobs file),
// simulated on SimGrid (ops/simulate.hpp), with and without checkpoints, and the checkpoint sweep.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ops/params.hpp"
#include "ops/result.hpp"
#include "ops/simulate.hpp"
#include "plan/scenario.hpp"

namespace ffsim::app {

struct OpsOptions {
  std::string jobs_file;              ///< a job mix replacing the scenario's ("" none)
  std::optional<std::uint64_t> seed;  ///< overrides the scenario's
  std::optional<double> horizon_s;    ///< overrides the scenario's
  bool without_checkpoints = false;   ///< also run with every job's checkpoints off
  std::string sweep_job;              ///< sweep this job's checkpoint interval ("" none)
  int sweep_seeds = 4;
  bool timeline = false;  ///< keep the main run's timeline (OpsResult::timeline) for --trace
};

struct OpsReport {
  std::string scenario;
  ops::OpsParams params;  ///< as simulated (zones from the fabric when the section has none)
  ops::OpsResult result;
  std::optional<ops::OpsResult> without_checkpoints;
  std::optional<ops::CheckpointSweep> sweep;
};

/// The parameters `sc` and `opt` describe (a UsageError if the scenario has no "ops" section).
[[nodiscard]] ops::OpsParams ops_params(const plan::ScenarioSpec& sc, const OpsOptions& opt);

[[nodiscard]] OpsReport run_ops(const plan::ScenarioSpec& sc, const OpsOptions& opt);

}  // namespace ffsim::app
