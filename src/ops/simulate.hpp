// `ffsim ops`: a discrete-event simulation of a cluster over its horizon on SimGrid's s4u actors:
// a scheduler actor (FIFO with EASY backfill over the node pool), one actor per job run, one actor
// per failure process and one per repair (docs/commands/ops.md).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "ops/params.hpp"
#include "ops/result.hpp"

namespace ffsim::ops {

/// Simulates `p` (validated first). SimGrid runs once per process, so each call runs in a forked
/// child; the result is identical for identical `p` (bit for bit). With `timeline`, the result
/// also holds every run and failure (OpsResult::timeline); the other fields are the same.
[[nodiscard]] OpsResult simulate(const OpsParams& p, bool timeline = false);

/// The failure-free wall time of `work_s` of compute under checkpoint interval `interval_s`
/// (0: none) and cost `cost_s`: the work plus one checkpoint per interval except after the last.
[[nodiscard]] double run_time(double work_s, double interval_s, double cost_s);

/// The rate (per second) of failures that end a run of job `j` of `p` (its GPUs' and nodes' share
/// of every process), whose inverse is the job's mean time between failures.
[[nodiscard]] double job_failure_rate(const OpsParams& p, const JobSpec& j);

/// One point of a checkpoint-interval sweep.
struct SweepPoint {
  double interval_s = 0;
  double efficiency = 0;  ///< the job's useful GPU-time over its allocated GPU-time, mean over seeds
};

struct CheckpointSweep {
  std::string job;
  double checkpoint_cost_s = 0;
  double mtbf_s = 0;        ///< of the job (1 / job_failure_rate)
  double young_daly_s = 0;  ///< sqrt(2 C MTBF)
  std::vector<SweepPoint> points;
  double best_s = 0;  ///< the swept interval of highest efficiency
  /// The minimum of a least-squares fit of waste = a / interval + b x interval + c to the points
  /// (the shape of the first-order model; a smoother estimate of the best interval than one point).
  double fit_best_s = 0;
  int seeds = 0;
};

/// Sweeps job `job`'s checkpoint interval over `intervals` (seconds, > 0), running `p` with seeds
/// p.seed .. p.seed + seeds - 1 at each (the same seeds at every interval).
[[nodiscard]] CheckpointSweep sweep_checkpoint(const OpsParams& p, std::size_t job,
                                               const std::vector<double>& intervals, int seeds);

/// The default sweep grid: Young/Daly x 2^(k/6), k = -6 .. 6.
[[nodiscard]] std::vector<double> default_sweep_grid(double young_daly_s);

}  // namespace ffsim::ops
