// The `collective` service: rows of (algorithm, GPU count, size) on a scenario's cluster, by the
// closed form or a simulating engine, with NCCL's own cost table for --explain and a trace.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/engines.hpp"
#include "app/placement.hpp"
#include "coll/collective.hpp"
#include "config/catalog.hpp"
#include "core/size_guard.hpp"
#include "plan/scenario.hpp"
#include "platform/background.hpp"
#include "sched/timeline.hpp"

namespace ffsim::app {

/// The registered collective algorithms, sorted (for --algo's help).
[[nodiscard]] std::vector<std::string> algorithm_names();

/// A UsageError "--algo: unknown collective algorithm ..." unless `name` is registered.
void check_algorithm(const std::string& name);

struct CollectiveRequest {
  std::vector<std::string> algos;  ///< registered names, in order
  std::vector<int> gpus;
  std::vector<double> sizes;       ///< bytes per GPU as nccl-tests count them
  coll::Placement placement;       ///< where the nodes are (packed: the first GPUs)
  std::string placement_flag = "--placement";  ///< how the user asked for it, for messages
  bool full = false;               ///< simulate without the exact shortcuts
  int threads = 1;                 ///< rows simulated side by side (engines safe on threads)
  bool trace = false;              ///< the timeline of the one row's whole schedule
  bool explain = false;            ///< NCCL's own cost table
  /// Background traffic that runs beside each row's collective (a simulating engine only): each
  /// row is then simulated alone and beside it under three arbitrations (Arbitration).
  std::optional<platform::BackgroundSpec> background;
};

/// How the fabric arbitrates between traffic classes in a run beside a background.
enum class Arbitration {
  Scenario,  ///< the scenario's "traffic" section (its lanes' weights)
  Equal,     ///< the scenario's lanes, every weight 1
  None,      ///< no isolation: every flow in one lane
};
inline constexpr int kArbitrations = 3;
[[nodiscard]] const char* arbitration_name(Arbitration a);  ///< "scenario", "equal", "none"

/// The traffic configuration of arbitration `a` on a scenario whose own is `t`.
[[nodiscard]] platform::TrafficConfig arbitration_traffic(const platform::TrafficConfig& t, Arbitration a);

/// One run of a row's collective beside the background.
struct BesideRun {
  Arbitration arbitration = Arbitration::Scenario;
  double collective_weight = 1, background_weight = 1;  ///< the collective's class, the first stream's
  double time = 0, algbw = 0, busbw = 0;
  double slowdown = 0;  ///< time beside / time alone
  /// Seconds each background flow lasts at least (its bytes over its cap): longer than the
  /// collective beside it, which the run checked.
  double horizon = 0;
  double background_end = 0;  ///< the first background flow's end (after the collective's)
};

struct CollectiveRow {
  std::string algo;
  int gpus = 0;
  double bytes = 0, time = 0, algbw = 0, busbw = 0;
  double host = 0;  ///< host-memory traffic per node, in multiples of the size
  double wall = 0;  ///< seconds the row took to evaluate
  std::string bottleneck, note;
  /// With a background: the collective's class and its runs beside the background, by
  /// Arbitration (time above is then the collective alone in its full schedule).
  sched::TrafficClass cls = sched::TrafficClass::Other;
  std::vector<BesideRun> beside;
};

/// One line of NCCL's cost table (NCCL 2.7 tuning.cc: an algorithm and a protocol).
struct NcclCostRow {
  int gpus = 0;
  double bytes = 0;
  std::string algorithm;
  std::string protocol;  ///< "LL", "LL128", "Simple"
  int channels = 0;
  double latency = 0, algbw = 0, time = 0;
  bool enabled = true;  ///< false: NCCL leaves the protocol off here (LL128 without NVLink)
  bool picked = false;
};

struct NcclExplain {
  std::vector<NcclCostRow> rows;
  int channels = 0;  ///< per compute NIC
  int nics = 0;      ///< compute NICs per node, of the first GPU count's group
  double speed = 0;  ///< bytes/s per channel
  bool intra_nvlink = false;
  double max_bus_bw = 0, tree_bw_factor = 0, ring_plateau_factor = 0, ring_plateau_bytes_per_rank = 0;
  double ll_ring_bw_factor = 0, ll_tree_bw_divisor = 0, ll128_bw_factor = 0, ll128_bw_factor_one_gpu_per_node = 0;
  double ll128_max_bw_per_channel = 0;
  std::vector<int> single_rank;  ///< GPU counts of one rank: NCCL runs no model (a local copy)
};

struct CollectiveResult {
  std::vector<std::string> kinds;  ///< the operations the rows run (allreduce, ...), in --algo's order
  std::vector<CollectiveRow> rows;
  double tree_chunk_bytes = 0;     ///< the NCCL tree's chunk (0: NCCL's own rule)
  double step_size = 0;            ///< NCCL's step
  double node_dram_bandwidth = 0;  ///< bytes/s, all sockets of a node
  std::optional<sched::Trace> trace;
  std::optional<NcclExplain> explain;
};

/// The size guard's estimate of `req` (core/size_guard.hpp): the platform's memory
/// (plan::platform_size) and every row's schedule operations (coll::Algorithm::schedule_ops; none
/// on the closed form) at the engine's bytes per operation, the rows that run side by side at once.
/// `largest_ops` and `largest_row` (optional): the largest row's operations and its words.
[[nodiscard]] Footprint collective_footprint(const plan::ScenarioSpec& sc, const coll::LibraryParams& lib,
                                             const EngineChoice& engine, const CollectiveRequest& req,
                                             double* largest_ops = nullptr, std::string* largest_row = nullptr);

/// Runs the rows on `sc` with `engine` (the closed form when it simulates nothing). UsageError for
/// a GPU count or group that cannot run; SimulationError from the engine.
[[nodiscard]] CollectiveResult run_collective(const plan::ScenarioSpec& sc, const config::Catalog& cat,
                                              const EngineChoice& engine, const CollectiveRequest& req);

}  // namespace ffsim::app
