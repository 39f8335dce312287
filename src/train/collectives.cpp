// Collectives inside a training step.
// SPDX-License-Identifier: Apache-2.0
#include "train/collectives.hpp"

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::train {

const char* role_name(Role r) {
  switch (r) {
    case Role::GradAllReduce: return "allreduce";
    case Role::ParamAllGather: return "allgather";
    case Role::GradReduceScatter: return "reduce_scatter";
    case Role::ExpertAllToAll: return "alltoall";
    case Role::TensorAllReduce: return "tensor_allreduce";
  }
  return "?";
}

std::vector<std::string> role_names() {
  return {"allreduce", "allgather", "reduce_scatter", "alltoall", "tensor_allreduce"};
}

std::vector<std::string> backend_names() { return {"hfreduce", "nccl"}; }

// The one table of which algorithm each backend runs. HFReduce's paper describes only its
// allreduce (Sec. IV); HaiScale's sharded collectives (FSDP's gradient reduce-scatter, FSDP's and
// ZeRO-1's parameter allgather) run on the same host path [I]: D2H, the CPUs, a ring of nodes over
// RDMA, H2D (src/coll/hf_sharded.cpp). Reason: HaiScale is built on HFReduce, and its FSDP is
// claimed 32-41% faster than PyTorch FSDP on NCCL (Sec. V), which NCCL's allgather under HaiScale
// and a whole allreduce per reduce-scatter (the earlier reading) contradicted: they made HaiScale
// slower. Expert all-to-alls and tensor-parallel allreduces of activations go through NCCL under
// either backend.
RoleAlgorithm algorithm_for(const std::string& backend, Role role) {
  struct Row {
    const char* backend;
    Role role;
    RoleAlgorithm alg;
  };
  static const std::vector<Row> table{
      {"hfreduce", Role::GradAllReduce, {"hfreduce", false, true}},
      {"hfreduce", Role::GradReduceScatter, {"hf_reduce_scatter", false, true}},
      {"hfreduce", Role::ParamAllGather, {"hf_allgather", true, true}},
      {"hfreduce", Role::ExpertAllToAll, {"alltoall", false, false}},
      {"hfreduce", Role::TensorAllReduce, {"nccl", false, false}},
      {"nccl", Role::GradAllReduce, {"nccl", false, false}},
      {"nccl", Role::GradReduceScatter, {"reduce_scatter", false, false}},
      {"nccl", Role::ParamAllGather, {"allgather", true, false}},
      {"nccl", Role::ExpertAllToAll, {"alltoall", false, false}},
      {"nccl", Role::TensorAllReduce, {"nccl", false, false}},
  };
  for (const Row& r : table)
    if (backend == r.backend && role == r.role) return r.alg;
  throw ValueError("unknown backend \"" + backend + "\"" + did_you_mean(backend, backend_names()) + "; valid: " +
                   join(backend_names()));
}

CollectiveCosts::CollectiveCosts(eval::Engine& engine, const platform::Platform& p, const coll::LibraryParams& lib,
                                 Method m)
    : engine_(engine), p_(p), lib_(lib), method_(m) {}

double CollectiveCosts::time(const std::string& algorithm, const coll::Group& g, double bytes) {
  if (g.size() <= 1 || bytes <= 0) return 0;
  std::vector<std::uint64_t> ranks;
  ranks.reserve(g.ranks.size());
  for (const auto& r : g.ranks) ranks.push_back(platform::place_key(r));
  auto key = std::make_tuple(algorithm, std::move(ranks), bytes);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const auto& alg = coll::algorithms().get(algorithm).factory();
  const double t = method_ == Method::Simulate ? alg->simulate(engine_, p_, lib_, g, bytes)
                                               : alg->estimate(p_, lib_, g, bytes).time;
  if (!(t >= 0) || !std::isfinite(t))
    throw SimulationError("collective " + algorithm + " over " + std::to_string(g.size()) + " ranks gave no finite time");
  cache_.emplace(std::move(key), t);
  return t;
}

}  // namespace ffsim::train
