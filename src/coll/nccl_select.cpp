// "nccl": the algorithm NCCL itself would pick between ring and tree for the size and scale, by its
// own cost model (src/graph/tuning.cc: time = latency + bytes / algBw with its per-hop latencies and
// per-channel speeds), and then that algorithm on the simulated platform.
// SPDX-License-Identifier: Apache-2.0
#include "coll/nccl_select.hpp"

#include <algorithm>
#include <cmath>

#include "coll/common.hpp"

namespace ffsim::coll {

std::unique_ptr<Algorithm> make_nccl_ring();
std::unique_ptr<Algorithm> make_nccl_tree();

NcclView nccl_view(const platform::Platform& p, const LibraryParams& lib, const Group& g) {
  const auto& nc = lib.nccl;
  NcclView v;
  v.nodes = static_cast<int>(g.nodes().size());
  // One set of channels per compute NIC: NCCL builds its channels rail by rail (ring_orders).
  v.nics = std::max(1, p.cluster().node.compute_nics());
  v.channels = nc.channels * v.nics;
  // The intra-node hop class is the worst of the first ring's hops inside nodes (NCCL's graph
  // typeIntra): NVLink only if every one of them is an NVLink hop.
  const auto orders = ring_orders(p, g, nc.numa_restricted);
  const auto& order = orders.front();
  v.intra_nvlink = true;
  bool any = false;
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    const auto& a = g.ranks[static_cast<std::size_t>(order[i])];
    const auto& b = g.ranks[static_cast<std::size_t>(order[i + 1])];
    if (a.node != b.node) continue;
    any = true;
    if (hop_type(p, a, b) != HopType::NvLink) v.intra_nvlink = false;
  }
  if (!any) v.intra_nvlink = false;
  // Per channel NCCL rates a PCIe hop at pci_speed and the NIC at net_speed; an NVLink hop is rated
  // above the NIC (sm80: 20 GB/s per link, 12 links to an NVSwitch), so across nodes the NIC binds.
  const double intra = v.intra_nvlink ? nc.net_speed : nc.pci_speed;
  v.speed = v.nodes > 1 ? std::min(intra, nc.net_speed) : nc.pci_speed;
  v.bus_bw = std::min(v.channels * v.speed, nc.max_bus_bw);
  return v;
}

std::vector<NcclChoice> nccl_cost_table(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) {
  const auto& nc = lib.nccl;
  const NcclView v = nccl_view(p, lib, g);
  const int n = g.size();
  const int nodes = v.nodes;
  const int ppn = nodes ? n / nodes : 1;
  std::vector<NcclChoice> t;
  // Ring: 2(n-1) steps, 2(nodes-1) of them across the network (tuning.cc).
  {
    const int steps = 2 * (n - 1), inter = nodes > 1 ? 2 * (nodes - 1) : 0;
    const double intra_lat = v.intra_nvlink ? nc.ring_hop_latency_nvlink : nc.ring_hop_latency_pci;
    double lat = nc.ring_base_latency + (steps - inter) * intra_lat + inter * nc.ring_hop_latency_net;
    // tuning.cc's "plateau effect of ring": a multi-node Simple allreduce of at least nRanks/16 x
    // 64 KiB bytes has its ring latency multiplied by 1.9.
    if (nodes > 1 && S >= n * nc.ring_plateau_bytes_per_rank) lat *= nc.ring_plateau_factor;
    const double alg = n > 1 ? v.bus_bw * n / steps : v.bus_bw;
    t.push_back({"nccl_ring", v.channels, lat, alg, lat + (n > 1 ? S / alg : 0.0)});
  }
  // Tree: a chain of ppn-1 hops and log2(nodes) network hops, up and down; busBw x tree factor,
  // algBw = busBw / 2 (tuning.cc).
  {
    const double intra_lat = v.intra_nvlink ? nc.tree_hop_latency_nvlink : nc.tree_hop_latency_pci;
    const double lat = nc.tree_base_latency +
                       2 * ((ppn - 1) * intra_lat + std::log2(std::max(1, nodes)) * nc.tree_hop_latency_net);
    const double alg = v.bus_bw * nc.tree_bw_factor / 2;
    t.push_back({"nccl_tree", v.channels, lat, alg, lat + S / alg});
  }
  return t;
}

std::string nccl_pick(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) {
  const auto t = nccl_cost_table(p, lib, g, S);
  return t[1].time < t[0].time ? t[1].algorithm : t[0].algorithm;
}

namespace {

class Nccl final : public Algorithm {
public:
  Kind kind() const override { return Kind::AllReduce; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double S,
               const Options& o) const override {
    return pick(p, lib, g, S)->emit(s, p, lib, g, S, o);
  }
  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) const override {
    Estimate e = pick(p, lib, g, S)->estimate(p, lib, g, S);
    e.note = "NCCL picks " + nccl_pick(p, lib, g, S);
    return e;
  }
  double simulate(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                  double S) const override {
    return pick(p, lib, g, S)->simulate(e, p, lib, g, S);
  }
  // NCCL's pick needs the platform (its per-channel speeds): the larger of the two it may pick.
  double schedule_ops(const LibraryParams& lib, const GroupShape& g, double S, bool full) const override {
    return std::max(make_nccl_tree()->schedule_ops(lib, g, S, full), make_nccl_ring()->schedule_ops(lib, g, S, full));
  }

private:
  static std::unique_ptr<Algorithm> pick(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) {
    return nccl_pick(p, lib, g, S) == "nccl_tree" ? make_nccl_tree() : make_nccl_ring();
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_nccl() { return std::make_unique<Nccl>(); }

}  // namespace ffsim::coll
