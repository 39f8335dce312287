// Collectives inside a training step.
// SPDX-License-Identifier: Apache-2.0
#include "train/collectives.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/parallel.hpp"
#include "core/size_guard.hpp"
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

double CollectiveCosts::compute(eval::Engine& e, const platform::Platform& p, const std::string& algorithm,
                                const coll::Group& g, double bytes) const {
  const auto& alg = coll::algorithms().get(algorithm).factory();
  const double t = method_ == Method::Simulate ? alg->simulate(e, p, lib_, g, bytes) : alg->estimate(p, lib_, g, bytes).time;
  if (!(t >= 0) || !std::isfinite(t))
    throw SimulationError("collective " + algorithm + " over " + std::to_string(g.size()) + " ranks gave no finite time");
  return t;
}

double CollectiveCosts::time(const std::string& algorithm, const coll::Group& g, double bytes) {
  if (g.size() <= 1 || bytes <= 0) return 0;
  std::vector<std::uint64_t> ranks;
  ranks.reserve(g.ranks.size());
  for (const auto& r : g.ranks) ranks.push_back(platform::place_key(r));
  Key key = std::make_tuple(algorithm, std::move(ranks), bytes);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  if (recording_) {
    (void)coll::algorithms().get(algorithm);  // an unknown name fails here, as it would below
    if (recorded_keys_.insert(key).second) recorded_.push_back(Query{std::move(key), g});
    return 0;
  }
  {
    const Query one{key, g};
    check_size({&one});
  }
  const double t = compute(engine_, p_, algorithm, g, bytes);
  cache_.emplace(std::move(key), t);
  return t;
}

double CollectiveCosts::ops_of(const Query& q) const {
  return coll::algorithms()
      .get(std::get<0>(q.key))
      .factory()
      ->schedule_ops(lib_, coll::GroupShape::of(p_, q.group), std::get<2>(q.key), false);
}

void CollectiveCosts::check_size(const std::vector<const Query*>& queries) const {
  if (method_ != Method::Simulate || bytes_per_op_ <= 0 || queries.empty()) return;
  std::vector<double> ops;
  double largest = 0, total = 0;
  const Query* worst = queries.front();
  for (const Query* x : queries) {
    const double o = ops_of(*x);
    ops.push_back(o);
    total += o;
    if (o > largest) largest = o, worst = x;
  }
  std::sort(ops.begin(), ops.end(), std::greater<>());
  const std::size_t at_once = parallel() ? std::min(ops.size(), static_cast<std::size_t>(threads_)) : 1;
  Footprint f{total, base_bytes_};
  for (std::size_t i = 0; i < at_once; ++i) f.bytes += ops[i] * bytes_per_op_;
  const auto max_ops = static_cast<double>(sched::Schedule::kMaxOps);
  if (!oversized(f, largest, max_ops)) return;
  refuse_oversized(
      "a training step (" + fmt_int(static_cast<long long>(queries.size())) + " simulated collective" +
          (queries.size() == 1 ? ")" : "s)"),
      f,
      "the largest, " + std::get<0>(worst->key) + " of " + fmt_bytes(Bytes(std::get<2>(worst->key))) + " over " +
          fmt_int(worst->group.size()) + " GPUs: " + fmt_g(largest, 3) + " operations; a schedule holds at most " +
          fmt_int(static_cast<long long>(max_ops)),
      "train on fewer GPUs (--gpus), or take the collectives' closed forms (--collectives estimate), which "
      "build no schedule",
      largest > max_ops);
}

void CollectiveCosts::set_parallel(std::function<std::unique_ptr<eval::Engine>()> make_engine, int threads) {
  make_engine_ = std::move(make_engine);
  threads_ = std::max(1, threads);
}

void CollectiveCosts::discard_recorded() {
  recording_ = false;
  recorded_.clear();
  recorded_keys_.clear();
}

std::vector<double> CollectiveCosts::run_recorded() {
  recording_ = false;
  std::vector<Query> q = std::move(recorded_);
  recorded_.clear();
  recorded_keys_.clear();
  {
    std::vector<const Query*> all;
    for (const Query& x : q) all.push_back(&x);
    check_size(all);
  }
  std::vector<double> t(q.size(), 0.0), wall(q.size(), 0.0);
  auto query = [&](std::size_t i, eval::Engine& e, const platform::Platform& p) {
    const auto t0 = std::chrono::steady_clock::now();
    t[i] = compute(e, p, std::get<0>(q[i].key), q[i].group, std::get<2>(q[i].key));
    wall[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (!parallel() || q.size() < 2) {
    for (std::size_t i = 0; i < q.size(); ++i) query(i, engine_, p_);
  } else {
    // Each query runs with a fresh engine on the one platform (its router is thread-safe): the
    // threads share nothing else. The largest schedules first (by their operations, the size
    // guard's estimate; ties in recorded order): a thread that took the step's largest collective
    // last would end after the others by all of it (VGG16's 411 MB bucket on 10,000 GPUs: the
    // step's simulation on 2 threads 17.9 s in recorded order). Results go by index: the order
    // changes no output.
    std::vector<std::size_t> order(q.size());
    std::vector<double> ops(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) {
      order[i] = i;
      ops[i] = ops_of(q[i]);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ops[a] > ops[b]; });
    parallel_for(q.size(), threads_, [&](std::size_t k) {
      const std::unique_ptr<eval::Engine> e = make_engine_();
      query(order[k], *e, p_);
    });
  }
  for (std::size_t i = 0; i < q.size(); ++i) cache_.emplace(std::move(q[i].key), t[i]);
  return wall;
}

}  // namespace ffsim::train
