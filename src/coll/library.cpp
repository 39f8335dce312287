// Collective kinds, bus bandwidth factors and rank groups.
// SPDX-License-Identifier: Apache-2.0
#include "coll/collective.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/format.hpp"

namespace ffsim::coll {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::AllReduce: return "allreduce";
    case Kind::ReduceScatter: return "reduce_scatter";
    case Kind::AllGather: return "allgather";
    case Kind::AllToAll: return "alltoall";
    case Kind::Broadcast: return "broadcast";
    case Kind::SendRecv: return "sendrecv";
  }
  return "?";
}

double busbw_factor(Kind k, int n) {
  if (n <= 1) return k == Kind::Broadcast || k == Kind::SendRecv ? 1.0 : 0.0;
  switch (k) {
    case Kind::AllReduce: return 2.0 * (n - 1) / n;
    case Kind::ReduceScatter:
    case Kind::AllGather:
    case Kind::AllToAll: return static_cast<double>(n - 1) / n;
    case Kind::Broadcast:
    case Kind::SendRecv: return 1.0;
  }
  return 1.0;
}

std::vector<int> Group::nodes() const {
  std::vector<int> v;
  for (const auto& p : ranks)
    if (v.empty() || v.back() != p.node) v.push_back(p.node);
  return v;
}

std::vector<std::vector<int>> Group::ranks_by_node() const {
  // Runs of consecutive ranks on one node, each vector allocated once at its run's length (the
  // closed forms call this per evaluation: 1,200 nodes at 9,600 GPUs).
  std::vector<std::vector<int>> v;
  const int n = size();
  for (int r = 0; r < n;) {
    int e = r + 1;
    while (e < n && ranks[static_cast<std::size_t>(e)].node == ranks[static_cast<std::size_t>(r)].node) ++e;
    auto& run = v.emplace_back();
    run.reserve(static_cast<std::size_t>(e - r));
    for (; r < e; ++r) run.push_back(r);
  }
  return v;
}

Group Group::first_gpus(const platform::Platform& p, int gpus) {
  const int per = static_cast<int>(p.cluster().node.gpus.size());
  if (gpus < 1 || gpus > p.cluster().gpus())
    throw ValueError("asked for " + std::to_string(gpus) + " GPUs; the cluster has " + std::to_string(p.cluster().gpus()));
  Group g;
  for (int r = 0; r < gpus; ++r) g.ranks.push_back(sched::Place::gpu(r / per, r % per));
  return g;
}

GroupShape GroupShape::first_gpus(int gpus, int gpus_per_node, int sockets, int compute_nics, bool nvlink) {
  GroupShape q;
  q.ranks = std::max(gpus, 1);
  const int per = std::max(gpus_per_node, 1);
  q.nodes = (q.ranks + per - 1) / per;
  q.ranks_per_node = std::min(q.ranks, per);
  q.sockets = std::max(sockets, 1);
  q.rails = std::max(compute_nics, 1);
  q.nvlink = nvlink;
  return q;
}

GroupShape GroupShape::of(const platform::Platform& p, const Group& g) {
  GroupShape q;
  const auto by_node = g.ranks_by_node();
  q.ranks = std::max(g.size(), 1);
  q.nodes = std::max(static_cast<int>(by_node.size()), 1);
  for (const auto& r : by_node) q.ranks_per_node = std::max(q.ranks_per_node, static_cast<int>(r.size()));
  const hw::NodeSpec& n = p.cluster().node;
  q.sockets = std::max(static_cast<int>(n.sockets.size()), 1);
  q.rails = std::max(n.compute_nics(), 1);
  q.nvlink = n.nvlink.kind != "none";
  return q;
}

double Algorithm::simulate(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                           double bytes) const {
  return simulate_full(e, p, lib, g, bytes);
}

double Algorithm::simulate_full(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                                double bytes) const {
  sched::Schedule s;
  Options o;
  (void)emit(s, p, lib, g, bytes, o);
  return e.run(s, p).makespan;
}

}  // namespace ffsim::coll
