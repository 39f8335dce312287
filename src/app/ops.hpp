// The service of `ffsim ops`: a scenario's operations model (its "ops" section, a --jobs file),
// simulated on SimGrid (ops/simulate.hpp), with and without checkpoints, and the checkpoint sweep.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/catalog.hpp"
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

/// The step time of a job that names a train workload (JobSpec::workload), computed once per
/// (workload, GPU count) on the scenario's cluster.
struct OpsStepTime {
  std::string job;
  std::string workload;       ///< the file
  std::string workload_name;  ///< the scenario's name
  int gpus = 0;
  std::string layout;
  std::string engine;  ///< "closed-form" (the kind's closed form), or "fluid" (collectives estimated)
  double step_s = 0;
  long long steps = 0;
  double checkpoint_bytes = 0;  ///< with "size": "model": weights and optimizer state (else 0)
  bool reused = false;          ///< the step of an earlier job of the same shape (not computed again)
  std::string placement = "packed";  ///< the job's placement, at which the step was computed
};

/// A checkpoint written through the fabric ("through": "fabric"): the job's nodes, at its
/// placement in an empty cluster, each write their share as `targets` flows to the storage nodes'
/// drives in the storage class, each node's flows capped together at the write bandwidth, on the
/// fluid engine; a restart reads it back the same way. Computed once per shape.
struct OpsCheckpointIo {
  std::string job;
  int gpus = 0, nodes = 0, targets = 1, storage_nodes = 0;
  std::string placement = "packed";
  double bytes = 0;  ///< the whole checkpoint
  double write_bw_per_node = 0, read_bw_per_node = 0;
  double write_s = 0, read_s = 0;  ///< through the fabric
  double closed_form_write_s = 0;  ///< bytes / (nodes x write bandwidth)
  bool reused = false;
};

struct OpsReport {
  std::string scenario;
  std::vector<OpsStepTime> step_times;  ///< one per job with a workload, in job order
  std::vector<OpsCheckpointIo> checkpoint_io;  ///< one per job that writes through the fabric, in job order
  ops::OpsParams params;  ///< as simulated (zones from the fabric when the section has none)
  ops::OpsResult result;
  std::optional<ops::OpsResult> without_checkpoints;
  std::optional<ops::CheckpointSweep> sweep;
};

/// The parameters `sc` and `opt` describe (a UsageError if the scenario has no "ops" section), with
/// the step times of jobs that name a workload computed on `sc`'s cluster (into `steps` if given)
/// and the checkpoints written through the fabric timed on it (into `checkpoint_io`).
[[nodiscard]] ops::OpsParams ops_params(const plan::ScenarioSpec& sc, const config::Catalog& cat, const OpsOptions& opt,
                                        std::vector<OpsStepTime>* steps = nullptr,
                                        std::vector<OpsCheckpointIo>* checkpoint_io = nullptr);

[[nodiscard]] OpsReport run_ops(const plan::ScenarioSpec& sc, const config::Catalog& cat, const OpsOptions& opt);

}  // namespace ffsim::app
