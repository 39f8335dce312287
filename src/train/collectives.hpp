// Collectives inside a training step: which algorithm each backend uses for each role (one
// table), and their durations from the collective model, cached per distinct (algorithm, group, size).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "coll/collective.hpp"

namespace ffsim::train {

/// What a collective does for the training step.
enum class Role { GradAllReduce, ParamAllGather, GradReduceScatter, ExpertAllToAll, TensorAllReduce };
[[nodiscard]] const char* role_name(Role r);  ///< "allreduce", "allgather", "reduce_scatter", "alltoall", "tensor_allreduce"
[[nodiscard]] std::vector<std::string> role_names();

/// A backend's choice for one role.
struct RoleAlgorithm {
  std::string algorithm;     ///< coll::algorithms() name
  /// The size the algorithm is given, from the role's natural size S (the full vector of
  /// gradients or parameters): S, or S / n for an allgather (its per-rank input).
  bool per_rank_input = false;
  /// Reduces on the host CPUs (HFReduce): shown on the CPU reducer tracks of a trace.
  bool host_reduce = false;
};

/// The backends a workload may name ("hfreduce", "nccl").
[[nodiscard]] std::vector<std::string> backend_names();
/// The table: backend x role -> algorithm. Throws ValueError for an unknown backend.
[[nodiscard]] RoleAlgorithm algorithm_for(const std::string& backend, Role role);

/// Durations of collectives on one platform, from coll's model: Algorithm::simulate on the step's
/// engine (exact shortcuts inside), or Algorithm::estimate (closed form) for speed.
class CollectiveCosts {
public:
  enum class Method { Simulate, Estimate };
  CollectiveCosts(eval::Engine& engine, const platform::Platform& p, const coll::LibraryParams& lib, Method m);

  /// Seconds of `algorithm` over `g` with `bytes` (the algorithm's own size convention).
  /// Throws ValueError for an unknown algorithm, with the valid names. While recording, a query
  /// not yet known is noted and answers 0.
  double time(const std::string& algorithm, const coll::Group& g, double bytes);

  /// Lets run_recorded() simulate on `threads` threads at once, each run with its own engine from
  /// `make_engine`, all on the one platform (its router is thread-safe). Only for engines that keep
  /// no state between runs, such as the fluid engine (SimGrid's is one per process). Each run is independent and
  /// deterministic, so the times are those of running them one after the other.
  void set_parallel(std::function<std::unique_ptr<eval::Engine>()> make_engine, int threads);
  /// Whether a step should be recorded first (Simulate with parallel runs set).
  [[nodiscard]] bool parallel() const { return method_ == Method::Simulate && threads_ > 1 && make_engine_ != nullptr; }
  /// From now on time() records the queries it cannot answer from its cache and answers 0.
  void begin_recording() { recording_ = true; }
  /// Queries recorded so far (their order is the order run_recorded returns their times in).
  [[nodiscard]] std::size_t recorded() const { return recorded_.size(); }
  /// Stops recording and simulates the recorded queries (in parallel where set_parallel allows).
  /// Returns the wall seconds each one's simulation took, in recorded order (with parallel runs,
  /// each while the others ran beside it).
  std::vector<double> run_recorded();
  /// Stops recording and forgets the recorded queries.
  void discard_recorded();
  /// Distinct (algorithm, group, bytes) evaluated so far.
  [[nodiscard]] std::size_t evaluations() const { return cache_.size(); }
  [[nodiscard]] Method method() const { return method_; }
  /// The size guard (core/size_guard.hpp): simulated collectives are sized before their schedules
  /// are built (coll::Algorithm::schedule_ops x `bytes_per_op`, the engine's, on top of
  /// `base_bytes`, the platform's), and a step whose collectives exceed memory_limit() or a
  /// schedule's operations is refused (SimulationError). 0 bytes per op: no guard.
  void set_size_guard(double bytes_per_op, double base_bytes) {
    bytes_per_op_ = bytes_per_op;
    base_bytes_ = base_bytes;
  }
  [[nodiscard]] const coll::LibraryParams& lib() const { return lib_; }

private:
  using Key = std::tuple<std::string, std::vector<std::uint64_t>, double>;
  struct Query {
    Key key;
    coll::Group group;
  };
  [[nodiscard]] double compute(eval::Engine& e, const platform::Platform& p, const std::string& algorithm,
                               const coll::Group& g, double bytes) const;

  // The operations a query's schedule holds (the algorithm's schedule_ops, with its shortcuts).
  [[nodiscard]] double ops_of(const Query& q) const;
  // Refuses the queries when what they hold at once (one, or `threads_` side by side) is oversized.
  void check_size(const std::vector<const Query*>& queries) const;

  eval::Engine& engine_;
  const platform::Platform& p_;
  double bytes_per_op_ = 0, base_bytes_ = 0;
  const coll::LibraryParams& lib_;
  Method method_;
  std::map<Key, double> cache_;
  std::function<std::unique_ptr<eval::Engine>()> make_engine_;
  int threads_ = 1;
  bool recording_ = false;
  std::vector<Query> recorded_;
  std::set<Key> recorded_keys_;
};

}  // namespace ffsim::train
