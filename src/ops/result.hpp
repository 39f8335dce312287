// What `ffsim ops` measures: every GPU-second of the horizon in exactly one state, per job and per
// failure process.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ffsim::ops {

/// GPU-seconds by state. A GPU is, at each instant, in exactly one of: down (its node is out of
/// the pool for repair), link down (allocated to no job on a node whose link is down, not under
/// repair), idle (up, allocated to no job, its node's link up), or allocated to a job, whose time is
/// useful (work kept: checkpointed, or finished, or done by the horizon), checkpoint (writing a
/// checkpoint that completed), restart (reloading after a failure), or lost (work and partial
/// checkpoints thrown away by a failure, by the failure's process).
struct GpuSeconds {
  double useful = 0, checkpoint = 0, restart = 0, idle = 0, down = 0;
  std::vector<double> lost;  ///< per failure process, in the order of OpsParams::failures
  double link_down = 0;      ///< idle GPUs of nodes whose link is down (0 without a link process)
  [[nodiscard]] double lost_total() const {
    double s = 0;
    for (double x : lost) s += x;
    return s;
  }
  [[nodiscard]] double busy() const { return useful + checkpoint + restart + lost_total(); }
  [[nodiscard]] double total() const { return busy() + idle + down + link_down; }
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
  GpuSeconds gpu_s;  ///< this job's share (idle, down and link_down stay 0)
};

struct FailureStats {
  std::string name;
  long long events = 0;    ///< failures drawn in the horizon
  long long on_down = 0;   ///< of which hit a node already down (no effect)
  long long jobs_hit = 0;  ///< job runs they ended
  long long repairs = 0;   ///< nodes they took out of the pool
  long long links_down = 0;  ///< link failures with a down time (> 0) on a node not under repair
};

/// How a run of a job ended.
enum class RunEnd { Finished, Failed, Horizon };

/// One run of a job instance, from its start to its completion, a failure or the horizon (the
/// timeline of `ffsim ops --trace`). Its wall time is, in order: the restart, then cycles of
/// (interval of work, checkpoint), `checkpoints` of them complete, then the rest: the last piece of
/// work (Finished), work and any checkpoint under way thrown away (Failed: `tail_s` of it), or work
/// kept and `tail_s` of a checkpoint under way (Horizon).
struct RunRecord {
  std::size_t job = 0;                      ///< index into OpsParams::jobs
  long long instance = 0;                   ///< the instance's number among the job's, from 1, in submission order
  long long run = 0;                        ///< the instance's run, from 1
  double queued_at = 0;                     ///< when the queue stay that ended with this run's start began
  double start = 0, end = 0;                ///< seconds
  double restart_s = 0;                     ///< the restart at the start (0 on a first run)
  double interval_s = 0, checkpoint_s = 0;  ///< the run's checkpoint interval and cost
  long long checkpoints = 0;                ///< completed in the run
  double tail_s = 0;                        ///< Failed: the wall time lost at the end; Horizon: a checkpoint under way
  RunEnd how = RunEnd::Finished;
  std::size_t cause = 0;  ///< Failed: the failure process (index into OpsParams::failures)
};

/// One failure drawn in the horizon.
struct FailureRecord {
  double t = 0;
  std::size_t process = 0;  ///< index into OpsParams::failures
  std::uint64_t unit = 0;   ///< the GPU (node x GPUs per node + slot) or the node
  int node = 0;
  bool on_down = false;                                  ///< its node was down: no effect
  double repair_s = 0;                                   ///< the node's repair it started (0: none)
  std::vector<std::pair<std::size_t, long long>> ended;  ///< (job, instance) of the runs it ended
  double down_s = 0;  ///< a link failure's down time from now (0: none; an earlier later end stands)
};

/// What happened when: every run and every failure, in the order they ended and happened.
struct Timeline {
  std::vector<RunRecord> runs;
  std::vector<FailureRecord> failures;
};

struct OpsResult {
  double horizon_s = 0;
  long long gpus = 0;  ///< nodes x GPUs per node
  GpuSeconds gpu_s;
  std::vector<JobStats> jobs;
  std::vector<FailureStats> failures;
  long long queued_at_end = 0;  ///< instances waiting at the horizon
  long long running_at_end = 0;
  std::optional<Timeline> timeline;  ///< when asked for (simulate's `timeline`)
  [[nodiscard]] double goodput() const { return gpu_s.useful / (static_cast<double>(gpus) * horizon_s); }
  [[nodiscard]] double utilisation() const { return gpu_s.busy() / (static_cast<double>(gpus) * horizon_s); }
};

}  // namespace ffsim::ops
