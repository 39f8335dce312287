// What `ffsim ops` measures: every GPU-second of the horizon in exactly one state, per job and per
// failure process.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace ffsim::ops {

/// GPU-seconds by state. A GPU is, at each instant, in exactly one of: down (its node is out of
/// the pool for repair), idle (up, allocated to no job), or allocated to a job, whose time is
/// useful (work kept: checkpointed, or finished, or done by the horizon), checkpoint (writing a
/// checkpoint that completed), restart (reloading after a failure), or lost (work and partial
/// checkpoints thrown away by a failure, by the failure's process).
struct GpuSeconds {
  double useful = 0, checkpoint = 0, restart = 0, idle = 0, down = 0;
  std::vector<double> lost;  ///< per failure process, in the order of OpsParams::failures
  [[nodiscard]] double lost_total() const {
    double s = 0;
    for (double x : lost) s += x;
    return s;
  }
  [[nodiscard]] double busy() const { return useful + checkpoint + restart + lost_total(); }
  [[nodiscard]] double total() const { return busy() + idle + down; }
};

/// Per entry of the job mix (all its copies and instances together).
struct JobStats {
  std::string name;
  int gpus = 0;
  long long submitted = 0;  ///< instances that entered the queue
  long long started = 0;    ///< instances started at least once
  long long completed = 0;
  long long interrupted = 0;  ///< runs ended by a failure
  long long checkpoints = 0;  ///< checkpoints completed
  long long waits = 0;        ///< queue stays that ended with a start (first starts and restarts)
  double wait_s = 0;          ///< their total length
  double max_wait_s = 0;
  GpuSeconds gpu_s;  ///< this job's share (idle and down stay 0)
};

struct FailureStats {
  std::string name;
  long long events = 0;    ///< failures drawn in the horizon
  long long on_down = 0;   ///< of which hit a node already down (no effect)
  long long jobs_hit = 0;  ///< job runs they ended
  long long repairs = 0;   ///< nodes they took out of the pool
};

struct OpsResult {
  double horizon_s = 0;
  long long gpus = 0;  ///< nodes x GPUs per node
  GpuSeconds gpu_s;
  std::vector<JobStats> jobs;
  std::vector<FailureStats> failures;
  long long queued_at_end = 0;  ///< instances waiting at the horizon
  long long running_at_end = 0;
  [[nodiscard]] double goodput() const { return gpu_s.useful / (static_cast<double>(gpus) * horizon_s); }
  [[nodiscard]] double utilisation() const { return gpu_s.busy() / (static_cast<double>(gpus) * horizon_s); }
};

}  // namespace ffsim::ops
