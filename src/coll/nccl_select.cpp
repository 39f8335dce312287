// "nccl": the algorithm NCCL itself would pick between ring and tree for the size and scale, by its
// own cost model (src/graph/tuning.cc: time = latency + bytes / algBw with its per-hop latencies and
// per-channel speeds), and then that algorithm on the simulated platform.
// SPDX-License-Identifier: Apache-2.0
#include "coll/nccl_select.hpp"

#include <cmath>

#include "coll/common.hpp"

namespace ffsim::coll {

std::unique_ptr<Algorithm> make_nccl_ring();
std::unique_ptr<Algorithm> make_nccl_tree();

std::vector<NcclChoice> nccl_cost_table(const LibraryParams& lib, const Group& g, double S) {
  const auto& nc = lib.nccl;
  const int n = g.size();
  const int nodes = static_cast<int>(g.nodes().size());
  const int ppn = nodes ? n / nodes : 1;
  std::vector<NcclChoice> t;
  // Ring: 2(n-1) steps, 2(nodes-1) of them across the network (tuning.cc).
  {
    const int steps = 2 * (n - 1), inter = nodes > 1 ? 2 * (nodes - 1) : 0;
    const double lat = nc.ring_base_latency + (steps - inter) * nc.ring_hop_latency_pci + inter * nc.ring_hop_latency_net;
    const double speed = nodes > 1 ? std::min(nc.pci_speed, nc.net_speed) : nc.pci_speed;
    const double bus = nc.channels * speed;
    const double alg = n > 1 ? bus * n / steps : bus;
    t.push_back({"nccl_ring", lat, alg, lat + (n > 1 ? S / alg : 0.0)});
  }
  // Tree: a chain of ppn-1 hops and log2(nodes) network hops, up and down; busBw x tree factor,
  // algBw = busBw / 2 (tuning.cc).
  {
    const double lat = nc.tree_base_latency +
                       2 * ((ppn - 1) * nc.tree_hop_latency_pci + std::log2(std::max(1, nodes)) * nc.tree_hop_latency_net);
    const double speed = nodes > 1 ? std::min(nc.pci_speed, nc.net_speed) : nc.pci_speed;
    const double alg = nc.channels * speed * nc.tree_bw_factor / 2;
    t.push_back({"nccl_tree", lat, alg, lat + S / alg});
  }
  return t;
}

std::string nccl_pick(const LibraryParams& lib, const Group& g, double S) {
  const auto t = nccl_cost_table(lib, g, S);
  return t[1].time < t[0].time ? t[1].algorithm : t[0].algorithm;
}

namespace {

class Nccl final : public Algorithm {
public:
  Kind kind() const override { return Kind::AllReduce; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double S,
               const Options& o) const override {
    return pick(lib, g, S)->emit(s, p, lib, g, S, o);
  }
  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) const override {
    Estimate e = pick(lib, g, S)->estimate(p, lib, g, S);
    e.note = "NCCL picks " + nccl_pick(lib, g, S);
    return e;
  }
  double simulate(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                  double S) const override {
    return pick(lib, g, S)->simulate(e, p, lib, g, S);
  }

private:
  static std::unique_ptr<Algorithm> pick(const LibraryParams& lib, const Group& g, double S) {
    return nccl_pick(lib, g, S) == "nccl_tree" ? make_nccl_tree() : make_nccl_ring();
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_nccl() { return std::make_unique<Nccl>(); }

}  // namespace ffsim::coll
