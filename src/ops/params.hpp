// The inputs of `ffsim ops`: the cluster's shape, a job mix, failure processes, a seed and a horizon.
// Plain parameter structs (config/ops_reader.hpp fills them from JSON); every time is in seconds.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace ffsim::ops {

/// The node pool. Nodes are split into `zones` contiguous blocks of (nearly) equal size.
struct ClusterShape {
  int nodes = 0;
  int gpus_per_node = 0;
  int zones = 1;
  /// Jobs with fewer GPUs than this never get nodes of two zones; larger ones may, one at a time
  /// (fire-flyer-facts.md section 2: "jobs under 128 GPUs never get cross-zone nodes", "at most one
  /// cross-zone job at a time").
  int cross_zone_min_gpus = 128;
  [[nodiscard]] long long gpus() const { return static_cast<long long>(nodes) * gpus_per_node; }
};

/// One entry of the job mix.
struct JobSpec {
  std::string name;
  int gpus = 0;
  double work_s = 0;                 ///< failure-free compute time (steps x step time)
  double submit_s = 0;               ///< when it enters the queue
  double checkpoint_interval_s = 0;  ///< compute time between checkpoints; 0: no checkpoints
  double checkpoint_cost_s = 0;      ///< wall time of one checkpoint (the job's GPUs do nothing else)
  double restart_cost_s = 0;         ///< wall time to restart from the last checkpoint after a failure
  int count = 1;                     ///< identical copies submitted together
  bool repeat = false;               ///< resubmitted (as a new instance) each time it completes
  /// > 0: instances arrive as a Poisson process of this rate (per hour) from `submit_s` until
  /// `arrivals_until_s` (or the horizon), in place of `count` copies at `submit_s` (count 1, no
  /// repeat). Drawn from the job's own random stream (Rng(seed, kArrivalStream + job index)).
  double arrival_rate_per_hour = 0;
  double arrivals_until_s = std::numeric_limits<double>::infinity();
  /// A train workload (a scenario file with a "workload" section, as `ffsim train --workload`
  /// takes) whose step time at `gpus` GPUs, times `steps`, is the work. src/ops builds no engine:
  /// the app (app/ops.cpp) computes the step time and fills in step_s and work_s. Empty: work_s is
  /// given.
  std::string workload;
  long long steps = 0;
  double step_s = 0;  ///< the workload's step time (0: not from a workload)
  /// The checkpoint's size is the model's weights and optimizer state (the app fills in
  /// checkpoint_cost_s from it and this per-node write bandwidth, B/s).
  bool checkpoint_size_from_model = false;
  double checkpoint_bw_per_node = 0;
  /// "through": "fabric": the app times the checkpoint's write (and a restart's read of it) as
  /// flows from the job's nodes through the scenario's fabric to its storage nodes' drives, on the
  /// fluid engine, in place of size / (nodes x bandwidth); it fills in checkpoint_cost_s and adds
  /// the read to restart_cost_s. checkpoint_bytes is the size given (0 with "size": "model").
  bool checkpoint_through_fabric = false;
  double checkpoint_bytes = 0;
  int checkpoint_targets_per_node = 1;
  double checkpoint_read_bw_per_node = 0;  ///< a restart's read cap per node (B/s)
  /// Which of a zone's free whole nodes the scheduler gives the job (the `--placement` knob of
  /// `collective` and `train`, issue 30): packed, the lowest indices first; spread, evenly over the
  /// free ones (the i-th of k chosen is free node floor(i F / k) of F); random, k of them drawn
  /// uniformly, from a stream of `placement_seed`, the job's index, the instance and the run (so a
  /// placement is the same whenever the scheduler tries it, and draws nothing from the failures'
  /// streams). The node for the g mod n remaining GPUs is the best-fitting one under every rule.
  enum class Placement { Packed, Spread, Random };
  Placement placement = Placement::Packed;
  std::uint64_t placement_seed = 1;
};

/// The random stream of job j's arrivals is kArrivalStream + j; failure process f's is f.
inline constexpr std::uint64_t kArrivalStream = std::uint64_t{1} << 32;

/// What a failure process's units are: GPUs, nodes, or nodes' network links (a node's NIC link to
/// its leaf switch; there is one per node).
enum class FailureUnit { Gpu, Node, Link };

/// A Poisson failure process: each unit (GPU, node or node link) fails at `rate_per_hour`. A GPU or
/// node failure kills the job(s) using the unit (they restart from their last checkpoint) and, if
/// `repair_s` > 0, takes the unit's node out of the pool for `repair_s`. A link failure kills the
/// jobs on the node that span more than one node (a job on that node alone keeps running), and for
/// `down_s` the node may only be given to jobs that fit on it alone (0: a flap, the jobs end and
/// the link is back at once).
struct FailureSpec {
  std::string name;
  FailureUnit unit = FailureUnit::Gpu;
  double rate_per_hour = 0;  ///< per unit-hour
  double repair_s = 0;       ///< GPU and node units only
  /// Bursts (both 0: none, each failure on its own). With `burst_size` N > 0, failures come in
  /// bursts of N distinct units; with `burst_mean` M >= 1, of a geometric number of distinct units
  /// of mean M, truncated at the unit count. Each unit of a burst fails at a uniform offset in
  /// [0, burst_spread_s) from the burst's start, and bursts arrive as a Poisson process of rate
  /// (rate_per_hour x units) / (mean burst size), so the mean failure count is unchanged.
  int burst_size = 0;
  double burst_mean = 0;
  double burst_spread_s = 0;
  double down_s = 0;  ///< Link units only: how long the link stays down (overlapping downs extend it)
  /// Hand-placed failures (for tests; no scenario key fills it): when not empty, the process fails
  /// exactly these units (GPU, node or link index) at these times (seconds, ascending), draws
  /// nothing from its stream, and `rate_per_hour` and the burst are not used.
  std::vector<std::pair<double, std::uint64_t>> at = {};
  [[nodiscard]] bool bursty() const { return burst_size > 0 || burst_mean > 0; }
};

struct OpsParams {
  ClusterShape cluster;
  std::vector<JobSpec> jobs;
  std::vector<FailureSpec> failures;
  std::uint64_t seed = 1;
  double horizon_s = 0;
};

/// Checks `p` (a ValueError naming the job or process and what is wrong).
void validate(const OpsParams& p);

}  // namespace ffsim::ops
