// Building one training step as a Schedule: per-GPU compute, transfers between GPUs, and
// collectives whose internals come from coll (as timed ops, with the overlap and dependencies of
// the step simulated around them). Annotations say which trace track shows each op.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "coll/collective.hpp"
#include "platform/platform.hpp"
#include "sched/schedule.hpp"
#include "train/collectives.hpp"

namespace ffsim::train {

using sched::OpId;
inline constexpr OpId kNone = coll::kNoOp;

/// What an op is, for the breakdown and the trace.
enum class OpCategory : std::uint8_t { Compute, Transfer, Collective, Sync };
[[nodiscard]] const char* category_name(OpCategory c);

/// A timeline in a trace: a node and a lane within it ("gpu3", "gpu3 comm", "nic0", "cpu reducer").
struct Track {
  int node = 0;
  std::string lane;
  friend bool operator==(const Track&, const Track&) = default;
};

/// A collective inside the step.
struct CollectiveCall {
  RoleAlgorithm alg;
  coll::Group group;           ///< every rank taking part
  double bytes = 0;            ///< the role's natural size S (see RoleAlgorithm::per_rank_input)
  std::vector<sched::Place> shown;  ///< the ranks whose tracks show it (the simulated ones)
  int repeat = 1;              ///< back-to-back runs of the same collective in one op
};

class StepBuilder {
public:
  /// `costs` may be null only when `comm_free`. With `comm_free`, every transfer and collective
  /// becomes a zero-time op (the step as if communication were free: compute plus pipeline bubble).
  /// With `emit_collectives`, each collective is the algorithm's whole schedule inside the step
  /// (every rank of its group; the validation of the timed ops, affordable on small cases).
  StepBuilder(const platform::Platform& p, CollectiveCosts* costs, bool comm_free, bool emit_collectives = false);

  /// A kernel of `alone` seconds on `gpu` after `after` (kNone entries are ignored).
  OpId compute(const sched::Place& gpu, Seconds alone, std::string_view name, const std::vector<OpId>& after = {});
  /// Data from one GPU to another (NCCL send/recv): a real transfer on the platform.
  OpId transfer(const sched::Place& from, const sched::Place& to, Bytes bytes, std::string_view name,
                const std::vector<OpId>& after = {});
  /// A collective as one op lasting the collective model's time, after `after` (or, when emitting,
  /// its whole schedule, every rank starting once all of `after` have ended); returns its end.
  OpId collective(const CollectiveCall& c, std::string_view name, const std::vector<OpId>& after);
  /// A fixed wait (a stagger offset, a launch).
  OpId delay(Seconds t, std::string_view name, const std::vector<OpId>& after = {});
  /// A zero-time op after all of `after`; kNone when `after` holds no op.
  OpId join(const std::vector<OpId>& after);
  /// `after` waits for `before` as well (an edge added once both exist).
  void depend(OpId after, OpId before);

  [[nodiscard]] const sched::Schedule& schedule() const { return s_; }
  [[nodiscard]] const platform::Platform& platform() const { return p_; }
  [[nodiscard]] bool comm_free() const { return comm_free_; }
  [[nodiscard]] OpCategory category(OpId id) const { return cat_[id]; }
  /// The tracks that show op `id` (empty for sync ops).
  [[nodiscard]] const std::vector<Track>& tracks(OpId id) const { return tracks_[id]; }
  /// Display name of op `id`.
  [[nodiscard]] const std::string& name(OpId id) const { return names_[name_of_[id]]; }

private:
  OpId finish(OpId id, OpCategory c, std::string_view name, std::vector<Track> t, const std::vector<OpId>& after);

  // Names are kept here (interned by hash), the schedule's tags hold only the category: the
  // schedule interns tags by linear search, and a pipeline step names ~10^5 ops.
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_index_;
  std::vector<std::uint32_t> name_of_;

  /// Registers ops that an algorithm emitted straight into the schedule, from `first` on.
  void adopt(OpId first, std::string_view name);

  const platform::Platform& p_;
  CollectiveCosts* costs_;
  bool comm_free_;
  bool emit_;
  sched::Schedule s_;
  std::vector<OpCategory> cat_;
  std::vector<std::vector<Track>> tracks_;
};

/// The lane name of a GPU's kernels ("gpu3") and of its communication ("gpu3 comm").
[[nodiscard]] std::string gpu_lane(const platform::Platform& p, const sched::Place& gpu);

}  // namespace ffsim::train
