// "nccl": the algorithm and protocol NCCL itself would pick for the size and scale, by its own cost
// model (NCCL 2.7 src/graph/tuning.cc: ring and tree x LL, LL128, Simple; time = latency + bytes /
// algBw with its per-hop latencies and per-channel speeds), and then that algorithm in that protocol
// on the simulated platform (its chunks, bytes on the wire, latencies and per-channel cap).
// SPDX-License-Identifier: Apache-2.0
#include "coll/nccl_select.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "coll/common.hpp"

namespace ffsim::coll {

std::unique_ptr<Algorithm> make_nccl_ring();
std::unique_ptr<Algorithm> make_nccl_tree();

namespace {

// NCCL's rating of a group of `nodes` nodes with `nics` compute NICs each, whose first ring crosses
// only NVLink inside a node (`intra_nvlink`) or not.
NcclView make_view(const NcclParams& nc, int nodes, int nics, bool intra_nvlink) {
  NcclView v;
  v.nodes = nodes;
  // One set of channels per compute NIC: NCCL builds its channels rail by rail (ring_orders).
  v.nics = std::max(1, nics);
  v.channels = nc.channels * v.nics;
  v.intra_nvlink = intra_nvlink;
  // Per channel NCCL rates a PCIe hop at pci_speed and the NIC at net_speed; an NVLink hop is rated
  // above the NIC (sm80: 20 GB/s per link, 12 links to an NVSwitch), so across nodes the NIC binds.
  const double intra = v.intra_nvlink ? nc.net_speed : nc.pci_speed;
  v.speed = v.nodes > 1 ? std::min(intra, nc.net_speed) : nc.pci_speed;
  v.bus_bw = std::min(v.channels * v.speed, nc.max_bus_bw);
  return v;
}

}  // namespace

NcclView nccl_view(const platform::Platform& p, const LibraryParams& lib, const Group& g) {
  // The intra-node hop class is the worst of the first ring's hops inside nodes (NCCL's graph
  // typeIntra): NVLink only if there is one and every one of them is an NVLink hop.
  const auto orders = ring_orders(p, g, lib.nccl.numa_restricted);
  const auto& order = orders.front();
  bool nvlink = true, any = false;
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    const auto& a = g.ranks[static_cast<std::size_t>(order[i])];
    const auto& b = g.ranks[static_cast<std::size_t>(order[i + 1])];
    if (a.node != b.node) continue;
    any = true;
    if (hop_type(p, a, b) != HopType::NvLink) nvlink = false;
  }
  return make_view(lib.nccl, static_cast<int>(g.nodes().size()), p.cluster().node.compute_nics(), nvlink && any);
}

NcclView nccl_view(const LibraryParams& lib, const GroupShape& g, bool intra_nvlink) {
  // A ring with no hop inside a node has no NVLink hop there (as the platform's view).
  return make_view(lib.nccl, g.nodes, g.rails, intra_nvlink && g.ranks_per_node > 1);
}

const char* protocol_name(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::LL: return "LL";
    case NcclProtocol::LL128: return "LL128";
    case NcclProtocol::Simple: break;
  }
  return "Simple";
}

namespace {

// NCCL's log2i: floor(log2(n)) for n >= 1, 0 below.
int log2i(double n) {
  int l = 0;
  while (n >= 2) {
    n /= 2;
    ++l;
  }
  return l;
}

}  // namespace

// NCCL 2.7 src/graph/tuning.cc, ncclTopoTuneModel (bandwidths and latencies per algorithm and
// protocol, allreduce) and ncclTopoGetAlgoTime (the tree's correction factor, the ring's plateau,
// time = latency + bytes / algBw). Constants: models/libraries/nccl.json, each with its source.
std::vector<NcclChoice> nccl_cost_table(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) {
  if (g.size() < 2) return {};  // tuning.cc returns before its model for nRanks <= 1
  return nccl_cost_table(nccl_view(p, lib, g), lib, g.size(), S);
}

std::vector<NcclChoice> nccl_cost_table(const NcclView& v, const LibraryParams& lib, int n, double S) {
  const auto& nc = lib.nccl;
  std::vector<NcclChoice> t;
  if (n < 2) return t;  // tuning.cc returns before its model for nRanks <= 1
  const int nodes = std::max(1, v.nodes);
  const int ppn = n / nodes;                               // nRanks / nNodes (integer, in the tree's latency)
  const double ppn_real = static_cast<double>(n) / nodes;  // float ppn (LL128's discount)
  const int steps = 2 * (n - 1), inter = 2 * (nodes - 1);  // allreduce: nsteps, nInterSteps
  // LL128 is on by default only where the intra-node path is NVLink on sm70 / sm80 (tuning.cc's
  // protocol enable, [S]: as recalled; ffsim treats every GPU as sm80, as it does for the 235 GB/s cap).
  const bool ll128_on = v.intra_nvlink;
  // tuning.cc's bandwidth column: llMaxBw by node count (llMaxBws [S], see nccl.json).
  const double ll_max = nc.ll_max_bus_bw(nodes);
  const double ll128_factor = ppn_real < 2 ? nc.ll128_bw_factor_one_gpu_per_node : nc.ll128_bw_factor;
  const double ll128_cap = nc.ll128_max_bw_per_channel * v.channels;
  // ncclTopoGetAlgoTime: logSize = log2i(nBytes >> 6), the tree's factor where logSize < the row's length.
  const int log_size = log2i(std::floor(std::max(0.0, S) / 64));
  for (const char* algo : {"nccl_ring", "nccl_tree"}) {
    const bool ring = std::string(algo) == "nccl_ring";
    for (NcclProtocol proto : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
      const NcclProtocolLatencies& l = nc.of(proto);
      // busBw = nChannels x speed, at most 235 GB/s (sm80), then the model's refinements.
      double bus = v.bus_bw;
      if (ring && proto == NcclProtocol::LL) bus = std::min(bus * nc.ll_ring_bw_factor, ll_max);
      if (!ring) bus *= nc.tree_bw_factor;
      if (!ring && proto == NcclProtocol::LL) bus /= nc.ll_tree_bw_divisor;
      if (proto == NcclProtocol::LL128) bus = std::min(bus * ll128_factor, ll128_cap);
      // algBw: ring busBw x nRanks / nsteps, tree busBw x 0.5.
      double alg = ring ? bus * n / steps : bus * 0.5;
      double lat = 0;
      if (ring) {
        const double intra = v.intra_nvlink ? l.ring_hop_latency_nvlink : l.ring_hop_latency_pci;
        lat = l.ring_base_latency + (steps - inter) * intra + inter * l.ring_hop_latency_net;
        // "Plateau effect of ring": a multi-node Simple allreduce of at least nRanks / 16 x 64 KiB.
        if (proto == NcclProtocol::Simple && nodes > 1 && S >= n * nc.ring_plateau_bytes_per_rank)
          lat *= nc.ring_plateau_factor;
      } else {
        // A chain of ppn - 1 intra-node hops and log2i(nNodes) network hops, up and down.
        const double intra = v.intra_nvlink ? l.tree_hop_latency_nvlink : l.tree_hop_latency_pci;
        lat = l.tree_base_latency + 2 * ((ppn - 1) * intra + log2i(nodes) * l.tree_hop_latency_net);
        if (log_size < static_cast<int>(l.tree_correction.size()))
          alg *= l.tree_correction[static_cast<std::size_t>(log_size)];
      }
      const bool on = proto != NcclProtocol::LL128 || ll128_on;
      t.push_back({algo, proto, v.channels, lat, alg, lat + S / alg, on});
    }
  }
  return t;
}

const NcclChoice& nccl_row(const std::vector<NcclChoice>& table, const std::string& algorithm, NcclProtocol protocol) {
  for (const auto& c : table)
    if (c.algorithm == algorithm && c.protocol == protocol) return c;
  throw std::out_of_range("no NCCL cost row for " + algorithm + " " + protocol_name(protocol));
}

NcclPick nccl_pick(const std::vector<NcclChoice>& t) {
  NcclPick best{"nccl_ring", NcclProtocol::Simple};
  double min_time = std::numeric_limits<double>::infinity();
  // getAlgoInfo's loop: algorithms in NCCL's order (NCCL_ALGO_TREE 0, NCCL_ALGO_RING 1), protocols
  // LL, LL128, Simple; a strictly smaller time replaces the pick.
  for (const char* algo : {"nccl_tree", "nccl_ring"})
    for (NcclProtocol proto : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple})
      for (const auto& c : t)
        if (c.enabled && c.algorithm == algo && c.protocol == proto && c.time < min_time) {
          min_time = c.time;
          best = {c.algorithm, c.protocol};
        }
  return best;
}

NcclPick nccl_pick(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) {
  return nccl_pick(nccl_cost_table(p, lib, g, S));
}

NcclPick nccl_simple_pick(const std::vector<NcclChoice>& t) {
  std::vector<NcclChoice> simple;
  for (const auto& c : t)
    if (c.protocol == NcclProtocol::Simple) simple.push_back(c);
  return nccl_pick(simple);
}

namespace {

class Nccl final : public Algorithm {
public:
  Kind kind() const override { return Kind::AllReduce; }
  Emitted emit(sched::Schedule& s, const platform::Platform& p, const LibraryParams& lib, const Group& g, double S,
               const Options& o) const override {
    LibraryParams run = lib;
    return pick(p, run, g, S)->emit(s, p, run, g, S, o);
  }
  Estimate estimate(const platform::Platform& p, const LibraryParams& lib, const Group& g, double S) const override {
    // One cost table for the pick and the note (each table walks every node).
    const NcclPick c = nccl_pick(nccl_cost_table(p, lib, g, S));
    LibraryParams run = lib;
    run.nccl.protocol = c.protocol;
    Estimate e = (c.algorithm == "nccl_tree" ? make_nccl_tree() : make_nccl_ring())->estimate(p, run, g, S);
    e.note = "NCCL picks " + c.algorithm + ", " + protocol_name(c.protocol);
    return e;
  }
  double simulate(eval::Engine& e, const platform::Platform& p, const LibraryParams& lib, const Group& g,
                  double S) const override {
    LibraryParams run = lib;
    return pick(p, run, g, S)->simulate(e, p, run, g, S);
  }
  // NCCL's pick needs the intra-node hop class (its per-channel speed, whether LL128 is on), which
  // the shape knows only as "the GPUs have NVLink": the larger of the picks with and without NVLink
  // hops inside the node (without, when the GPUs have none), each with its protocol's chunk.
  double schedule_ops(const LibraryParams& lib, const GroupShape& g, double S, bool full) const override {
    double most = 0;
    for (const bool nvlink : {false, true}) {
      if (nvlink && !g.nvlink) continue;
      const NcclPick c = nccl_pick(nccl_cost_table(nccl_view(lib, g, nvlink), lib, g.ranks, S));
      LibraryParams run = lib;
      run.nccl.protocol = c.protocol;
      most = std::max(
          most, (c.algorithm == "nccl_tree" ? make_nccl_tree() : make_nccl_ring())->schedule_ops(run, g, S, full));
    }
    return most;
  }

private:
  // NCCL's full pick, algorithm and protocol: the schedules move that protocol's chunks and bytes
  // on the wire at its latencies and per-channel cap (docs/nccl.md). `lib` takes the protocol.
  static std::unique_ptr<Algorithm> pick(const platform::Platform& p, LibraryParams& lib, const Group& g, double S) {
    const NcclPick c = nccl_pick(nccl_cost_table(p, lib, g, S));
    lib.nccl.protocol = c.protocol;
    return c.algorithm == "nccl_tree" ? make_nccl_tree() : make_nccl_ring();
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_nccl() { return std::make_unique<Nccl>(); }

}  // namespace ffsim::coll
