// Collectives inside a training step: which algorithm each backend uses for each role (one
// table), and their durations from the collective model, cached per distinct (algorithm, group, size).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <map>
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
  /// Throws ValueError for an unknown algorithm, with the valid names.
  double time(const std::string& algorithm, const coll::Group& g, double bytes);
  /// Distinct (algorithm, group, bytes) evaluated so far.
  [[nodiscard]] std::size_t evaluations() const { return cache_.size(); }
  [[nodiscard]] Method method() const { return method_; }
  [[nodiscard]] const coll::LibraryParams& lib() const { return lib_; }

private:
  eval::Engine& engine_;
  const platform::Platform& p_;
  const coll::LibraryParams& lib_;
  Method method_;
  std::map<std::tuple<std::string, std::vector<std::uint64_t>, double>, double> cache_;
};

}  // namespace ffsim::train
