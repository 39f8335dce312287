// Shared machinery of the algorithms.
// SPDX-License-Identifier: Apache-2.0
#include "coll/common.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include "core/error.hpp"
#include "core/format.hpp"
#include "sched/schedule.hpp"

namespace ffsim::coll {

using sched::Place;

std::vector<int> ring_order(const platform::Platform& p, const Group& g, bool numa_restricted) {
  std::vector<int> order;
  const hw::NodeSpec& n = p.cluster().node;
  // Per NIC of the node model: which GPUs sit on its socket (every node is the same model; the
  // port chains are walked once per NIC, not once per node).
  std::unordered_map<int, std::vector<char>> near_nic;
  std::vector<int> near, far;  // one node's ranks by socket (kept across nodes: no allocation per node)
  for (const auto& ranks : g.ranks_by_node()) {
    if (!numa_restricted || n.nics.empty() || ranks.size() < 2) {
      order.insert(order.end(), ranks.begin(), ranks.end());
      continue;
    }
    const int node = g.ranks[static_cast<std::size_t>(ranks.front())].node;
    const int nic = p.nic_for(Place::dram(node, 0));
    auto [it, fresh] = near_nic.try_emplace(nic);
    if (fresh) {
      const std::string nic_socket = n.socket_of_port(n.nics[static_cast<std::size_t>(nic)].port).name;
      for (const auto& gpu : n.gpus) it->second.push_back(static_cast<char>(n.socket_of_port(gpu.port).name == nic_socket));
    }
    near.clear();
    far.clear();
    for (int r : ranks)
      (it->second[static_cast<std::size_t>(g.ranks[static_cast<std::size_t>(r)].index)] ? near : far).push_back(r);
    const std::size_t half = (near.size() + 1) / 2;
    order.insert(order.end(), near.begin(), near.begin() + static_cast<std::ptrdiff_t>(half));
    order.insert(order.end(), far.begin(), far.end());
    order.insert(order.end(), near.begin() + static_cast<std::ptrdiff_t>(half), near.end());
  }
  return order;
}

std::vector<std::vector<int>> ring_orders(const platform::Platform& p, const Group& g, bool numa_restricted) {
  const hw::NodeSpec& n = p.cluster().node;
  std::vector<int> rails;  // the node's compute NICs
  for (std::size_t j = 0; j < n.nics.size(); ++j)
    if (n.nics[j].role != "storage") rails.push_back(static_cast<int>(j));
  const auto by_node = g.ranks_by_node();
  if (rails.size() < 2 || by_node.size() < 2) return {ring_order(p, g, numa_restricted)};
  std::vector<std::vector<int>> orders(rails.size());
  for (const auto& ranks : by_node) {
    // The node's ranks by GPU index; ring r starts at the first one whose NIC is rail r (else at
    // position r mod the count), goes round, and ends at its exit (below).
    std::vector<int> local(ranks.begin(), ranks.end());
    std::sort(local.begin(), local.end(), [&](int a, int b) {
      return g.ranks[static_cast<std::size_t>(a)].index < g.ranks[static_cast<std::size_t>(b)].index;
    });
    for (std::size_t r = 0; r < rails.size(); ++r) {
      const auto gpu = [&](std::size_t i) { return g.ranks[static_cast<std::size_t>(local[i])]; };
      std::size_t start = r % local.size();
      for (std::size_t i = 0; i < local.size(); ++i)
        if (p.nic_for(gpu(i)) == rails[r]) {
          start = i;
          break;
        }
      // It leaves from the other GPU nearest the same NIC (a DGX-style switch's second GPU), so
      // that both ends of the hop between nodes sit by NIC r (and its plane).
      std::size_t exit = start;
      int best = -1;
      for (std::size_t k = 1; k < local.size(); ++k) {
        const std::size_t i = (start + k) % local.size();
        if (const int a = p.nic_affinity(gpu(i), rails[r]); a > best) best = a, exit = i;
      }
      for (std::size_t k = 0; k < local.size(); ++k) {
        const std::size_t i = (start + k) % local.size();
        if (i != exit || k == 0) orders[r].push_back(local[i]);
      }
      if (exit != start) orders[r].push_back(local[exit]);
    }
  }
  return orders;
}

HopType hop_type(const platform::Platform& p, const Place& a, const Place& b) {
  if (a.node != b.node || a.storage != b.storage) return HopType::Net;
  const auto& nv = p.cluster().node.nvlink;
  if (a.kind == sched::PlaceKind::Gpu && b.kind == sched::PlaceKind::Gpu) {
    if (nv.kind == "switch") return HopType::NvLink;
    for (const auto& [x, y] : nv.pairs)
      if ((x == a.index && y == b.index) || (x == b.index && y == a.index)) return HopType::NvLink;
  }
  return HopType::Pci;
}

double nccl_hop_latency(const platform::Platform& p, const LibraryParams& lib, const Place& a, const Place& b, bool tree) {
  const NcclProtocolLatencies& n = lib.nccl.active();  // the protocol the schedule moves
  switch (hop_type(p, a, b)) {
    case HopType::NvLink: return tree ? n.tree_hop_latency_nvlink : n.ring_hop_latency_nvlink;
    case HopType::Pci: return tree ? n.tree_hop_latency_pci : n.ring_hop_latency_pci;
    case HopType::Net: return tree ? n.tree_hop_latency_net : n.ring_hop_latency_net;
  }
  return 0;
}

double nccl_tree_chunk(const LibraryParams& lib, double channel_bytes, int ranks, int nodes) {
  const NcclParams& nc = lib.nccl;
  nodes = std::max(1, nodes);
  int log2i = 0;
  while ((2 << log2i) <= nodes) ++log2i;
  switch (nc.protocol) {
    case NcclProtocol::LL:
      // The LL tree kernel moves one step of its buffer per chunk (nccl.json ll/step_size).
      return nc.ll.step_size;
    case NcclProtocol::LL128: {
      // src/enqueue.cc computeColl (NCCL 2.7), tree LL128: the chunk is one step of the buffer in
      // line bytes (step_size x wire_factor: 614,400 B), halved while nBytes / (nChannels x chunk)
      // < nstepsLL128 x 64 / ppn (down to 128 KiB), then x 16 / ppn (down to 32 KiB), with
      // nstepsLL128 = 1 + log2i(nNodes) + 0.1 ppn; the chunk's data is its lines' 120 of 128 bytes.
      const double ppn = static_cast<double>(ranks) / nodes;
      const double steps = 1 + log2i + 0.1 * ppn;
      double chunk = std::round(nc.ll128.step_size * nc.ll128.wire_factor);
      auto per_channel = [&] { return std::floor(channel_bytes / chunk); };
      while (per_channel() < steps * 64 / ppn && chunk > 131072) chunk /= 2;
      while (per_channel() < steps * 16 / ppn && chunk > 32768) chunk /= 2;
      return chunk / nc.ll128.wire_factor;
    }
    case NcclProtocol::Simple: break;
  }
  if (nc.tree_chunk_bytes > 0) return nc.tree_chunk_bytes;
  const double depth = ranks / nodes - 1 + log2i;
  double chunk = nc.step_size;
  // NCCL compares nBytes / (nChannels * chunkSize) in integer arithmetic.
  auto per_channel = [&] { return std::floor(channel_bytes / chunk); };
  while (per_channel() < depth * 8 && chunk > 131072) chunk /= 2;
  while (per_channel() < depth * 4 && chunk > 65536) chunk /= 2;
  while (per_channel() < depth && chunk > 32768) chunk /= 2;
  return chunk;
}

double nccl_protocol_cap(const LibraryParams& lib, bool tree, double channels, int rings, int nodes) {
  const NcclParams& nc = lib.nccl;
  const double wire = nc.active().wire_factor;
  switch (nc.protocol) {
    case NcclProtocol::LL128: return nc.ll128_max_bw_per_channel * channels * wire;
    case NcclProtocol::LL: {
      if (tree) break;
      const double cap = nc.ll_max_bus_bw(nodes);
      return cap > 0 ? cap / std::max(1, rings) * wire : std::numeric_limits<double>::infinity();
    }
    case NcclProtocol::Simple: break;
  }
  return std::numeric_limits<double>::infinity();
}

sched::OpId with_protocol_cap(sched::Schedule& s, sched::OpId op, double cap) {
  if (cap < std::numeric_limits<double>::infinity()) s.set_rate_cap(op, cap);
  return op;
}

double nccl_channels_per_ring(const platform::Platform& p, const LibraryParams& lib, int rings) {
  return static_cast<double>(lib.nccl.channels) * std::max(1, p.cluster().node.compute_nics()) / std::max(1, rings);
}

const char* nccl_protocol_cap_what(const LibraryParams& lib) {
  return lib.nccl.protocol == NcclProtocol::LL128 ? "NCCL's LL128 bandwidth per channel (tuning.cc ll128MaxBwPerCh)"
                                                  : "NCCL's ring LL bandwidth cap (tuning.cc llMaxBws)";
}

double nccl_path_latency(const platform::Platform& p, double hop_latency, const Place& from, const Place& to) {
  const bool inside = from.node == to.node && from.storage == to.storage;
  return inside ? hop_latency : std::max(hop_latency, p.path(p.path_id(from, to)).latency);
}

sched::OpId transfer_after(sched::Schedule& s, sched::OpId before, const Place& from, const Place& to, double bytes,
                           sched::TrafficClass cls, std::uint32_t tag, const sched::DataRef* src,
                           const sched::DataRef* dst, double latency) {
  const sched::OpId t =
      src ? s.transfer(*src, *dst, Bytes(bytes), cls, tag) : s.transfer(from, to, Bytes(bytes), cls, tag);
  if (!std::isnan(latency)) s.set_latency(t, latency);
  if (before != kNoOp) s.depend(t, before);
  return t;
}

namespace {

// The transfer of a hop of NCCL's kernels after `ready`: its own latency the path's, or inside a
// node a hop latency below it (see nccl_path_latency); what the hop's latency exceeds the path's
// by is the caller's delay.
sched::OpId nccl_transfer(sched::Schedule& s, const platform::Platform& p, double hop_latency, sched::OpId ready,
                          const Place& from, const Place& to, double bytes, sched::TrafficClass cls, std::uint32_t tag,
                          const sched::DataRef* src, const sched::DataRef* dst) {
  const double own = nccl_path_latency(p, hop_latency, from, to);
  return transfer_after(s, ready, from, to, bytes, cls, tag, src, dst,
                        own < p.path(p.path_id(from, to)).latency ? own : std::numeric_limits<double>::quiet_NaN());
}

}  // namespace

sched::OpId hop_transfer(sched::Schedule& s, const platform::Platform& p, double hop_latency, sched::OpId before,
                         const Place& from, const Place& to, double bytes, sched::TrafficClass cls, std::uint32_t tag,
                         const sched::DataRef* src, const sched::DataRef* dst) {
  const double physical = p.path(p.path_id(from, to)).latency;
  sched::OpId prev = before;
  if (hop_latency > physical) {
    const sched::OpId d = s.delay(Seconds(hop_latency - physical), tag);
    if (prev != kNoOp) s.depend(d, prev);
    prev = d;
  }
  return nccl_transfer(s, p, hop_latency, prev, from, to, bytes, cls, tag, src, dst);
}

sched::OpId pipelined_hop_transfer(sched::Schedule& s, const platform::Platform& p, double hop_latency,
                                   sched::OpId data_ready, sched::OpId prev_send, const Place& from, const Place& to,
                                   double bytes, sched::TrafficClass cls, std::uint32_t tag, const sched::DataRef* src,
                                   const sched::DataRef* dst) {
  const double physical = p.path(p.path_id(from, to)).latency;
  sched::OpId ready = data_ready;
  if (hop_latency > physical) {
    ready = s.delay(Seconds(hop_latency - physical), tag);
    if (data_ready != kNoOp) s.depend(ready, data_ready);
  }
  const sched::OpId t = nccl_transfer(s, p, hop_latency, ready, from, to, bytes, cls, tag, src, dst);
  if (prev_send != kNoOp) s.depend(t, prev_send);
  return t;
}

sched::OpId barrier(sched::Schedule& s, const std::vector<sched::OpId>& ops, std::uint32_t tag) {
  sched::OpId b = kNoOp;
  for (sched::OpId o : ops) {
    if (o == kNoOp) continue;
    if (b == kNoOp) b = s.delay(Seconds(0), tag);
    s.depend(b, o);
  }
  return b;
}

double gpu_reduce_time(const platform::Platform& p, const Place& gpu, double bytes) {
  const auto& spec = p.cluster().node.gpus[static_cast<std::size_t>(gpu.index)].gpu;
  return 3.0 * bytes / spec.memory_bandwidth.si();
}

std::pair<std::size_t, std::size_t> split(std::size_t elems, int n, int i) {
  const auto un = static_cast<std::size_t>(n), ui = static_cast<std::size_t>(i);
  const std::size_t base = elems / un, extra = elems % un;
  const std::size_t begin = ui * base + std::min(ui, extra);
  return {begin, begin + base + (ui < extra ? 1 : 0)};
}

int socket_index(const hw::NodeSpec& n, const std::string& name) {
  for (std::size_t i = 0; i < n.sockets.size(); ++i)
    if (n.sockets[i].name == name) return static_cast<int>(i);
  return 0;
}

sched::OpId ready_of(const Options& o, int rank) {
  return o.ready.empty() ? kNoOp : o.ready.at(static_cast<std::size_t>(rank));
}

Emitted no_traffic(sched::Schedule& s, const Group& g, double full, const Options& o, Shards shards) {
  Emitted e;
  const int n = g.size();
  for (int r = 0; r < n; ++r) {
    if (o.with_data) {
      const sched::BufferId b = s.buffer(g.ranks[static_cast<std::size_t>(r)], Bytes(full), "g" + std::to_string(r));
      e.input.push_back(b);
      e.output.push_back(b);
    }
    const sched::OpId d = s.delay(Seconds(0));
    if (ready_of(o, r) != kNoOp) s.depend(d, ready_of(o, r));
    e.done.push_back(d);
  }
  if (o.with_data) {
    e.data_bytes = full;
    if (n > 1 && shards == Shards::Results) e.out_range.assign(static_cast<std::size_t>(n), {0.0, 0.0});
    if (n > 1 && shards == Shards::Contributions) e.in_range.assign(static_cast<std::size_t>(n), {0.0, 0.0});
  }
  return e;
}

namespace {
// Resource r carrying `l` bytes binds if it takes longer than the bound so far. A bidirectional
// cap binds only when these flows cross both directions of its port. Callers visit resources in
// increasing id, so ties go to the lowest id.
template <class LoadOf>
void consider(Bound& b, const platform::Platform& p, std::uint32_t r, double l, const LoadOf& load_of) {
  const platform::Resource& res = p.resource(r);
  const double cap = res.kind == platform::ResourceKind::PcieBidir
                         ? res.capacity_when(load_of(res.up) > 0, load_of(res.down) > 0)
                         : res.capacity;
  const double t = l / cap;
  if (t > b.time * (1 + 1e-12)) {
    b.time = t;
    b.resource = r;
  }
}
}  // namespace

Bound bottleneck_bound(const platform::Platform& p, const std::vector<std::pair<std::uint32_t, double>>& path_bytes) {
  std::unordered_map<std::uint32_t, double> load;
  Bound b;
  for (const auto& [pid, bytes] : path_bytes) {
    const auto& path = p.path(pid);
    for (std::uint32_t r : path.resources) load[r] += bytes;
    if (std::isfinite(path.rate_cap) && bytes / path.rate_cap > b.time) {
      b.time = bytes / path.rate_cap;
      b.resource = eval::kLimitRateCap;
      b.cap_what = path.cap_what;
    }
  }
  // Deterministic: ties go to the lowest resource id.
  std::vector<std::pair<std::uint32_t, double>> v(load.begin(), load.end());
  std::sort(v.begin(), v.end());
  const auto load_of = [&](std::uint32_t r) {
    const auto it = load.find(r);
    return it == load.end() ? 0.0 : it->second;
  };
  for (const auto& [r, l] : v) consider(b, p, r, l, load_of);
  return b;
}

std::vector<double> flow_bound_times(const platform::Platform& p,
                                     const std::vector<std::pair<std::uint32_t, double>>& path_bytes) {
  std::unordered_map<std::uint32_t, double> load;
  for (const auto& [pid, bytes] : path_bytes)
    for (std::uint32_t r : p.path(pid).resources) load[r] += bytes;
  const auto load_of = [&](std::uint32_t r) {
    const auto it = load.find(r);
    return it == load.end() ? 0.0 : it->second;
  };
  std::vector<double> out;
  out.reserve(path_bytes.size());
  for (const auto& [pid, bytes] : path_bytes) {
    const auto& path = p.path(pid);
    Bound b;
    if (std::isfinite(path.rate_cap)) b.time = bytes / path.rate_cap;
    for (std::uint32_t r : path.resources) consider(b, p, r, load_of(r), load_of);
    out.push_back(b.time);
  }
  return out;
}

Bound bottleneck_bound(const platform::Platform& p, const std::vector<double>& load, double cap_time) {
  Bound b;
  if (cap_time > 0) {
    b.time = cap_time;
    b.resource = eval::kLimitRateCap;
  }
  const auto load_of = [&](std::uint32_t r) { return load[r]; };
  for (std::uint32_t r = 0; r < load.size(); ++r)
    if (load[r] > 0) consider(b, p, r, load[r], load_of);
  return b;
}

std::string bound_label(const platform::Platform& p, std::uint32_t r) {
  if (r == eval::kLimitNone) return "latency";
  // (Until 2026-12-01 every cap was "GPU peer-to-peer cap", also the GPU<->NIC cap of a PCIe switch.)
  if (r == eval::kLimitRateCap) return "peer-to-peer rate cap";
  return p.resource_label(r);
}

std::string bound_label(const platform::Platform& p, const Bound& b) {
  if (b.resource == eval::kLimitRateCap && b.cap_what) return b.cap_what;
  return bound_label(p, b.resource);
}

double host_memory_bytes(const platform::Platform& p, const std::vector<std::pair<std::uint32_t, double>>& path_bytes,
                         int node) {
  double dram = 0;
  for (const auto& [pid, bytes] : path_bytes)
    for (std::uint32_t r : p.path(pid).resources)
      if (p.resource(r).kind == platform::ResourceKind::Dram && p.node_of_resource(r) == std::make_pair(false, node))
        dram += bytes;
  return dram;
}

void check_schedule_size(double ops, const std::string& what) {
  if (ops > static_cast<double>(sched::Schedule::kMaxOps))
    throw SimulationError(what + " makes more than " + std::to_string(sched::Schedule::kMaxOps) +
                          " operations, more than a simulated schedule holds: simulate a smaller size or fewer "
                          "GPUs, or use the closed form (--engine analytic)");
}

int piece_count(double bytes, double piece, int copies) {
  const double k = piece_count_real(bytes, piece);
  check_schedule_size(k * std::max(copies, 1), "cutting " + fmt_bytes(Bytes(bytes)) + " into pieces of " +
                                                   fmt_bytes(Bytes(piece)) + " for " + std::to_string(copies) + " ranks");
  return static_cast<int>(k);
}

double piece_count_real(double bytes, double piece) {
  return piece > 0 && bytes > 0 ? std::max(1.0, std::ceil(bytes / piece)) : 1.0;
}

Cut cut(double bytes, double piece) {
  Cut c;
  c.count = piece_count_real(bytes, piece);
  c.piece = c.count > 1 ? piece : bytes;
  c.last = bytes - (c.count - 1) * c.piece;
  return c;
}

Cut cut(double bytes, double piece, int copies) {
  (void)piece_count(bytes, piece, copies);
  return cut(bytes, piece);
}

std::pair<std::size_t, std::size_t> cut_elems(std::size_t elems, double piece_bytes, int elem_size, int count, int i) {
  const auto per = static_cast<std::size_t>(std::max(1.0, std::floor(piece_bytes / std::max(elem_size, 1))));
  const auto ui = static_cast<std::size_t>(i);
  const std::size_t begin = std::min(elems, ui * per);
  return {begin, i + 1 >= count ? elems : std::min(elems, begin + per)};
}

std::vector<std::vector<int>> alike_gpus(const platform::Platform& p,
                                         const std::vector<std::vector<std::pair<sched::Place, sched::Place>>>& copies,
                                         const std::vector<std::pair<sched::Place, sched::Place>>& others) {
  const std::size_t L = copies.size(), kinds = L ? copies[0].size() : 0;
  // paths[l][k]: GPU l's copy of kind k. Who crosses each resource: the GPUs (as a bit set) and
  // whether any other transfer does.
  std::vector<std::vector<std::uint32_t>> paths(L);
  std::map<std::uint32_t, std::pair<std::uint64_t, bool>> users;
  FFSIM_ASSERT(L <= 64, "alike_gpus: at most 64 GPUs a node");
  for (std::size_t l = 0; l < L; ++l) {
    FFSIM_ASSERT(copies[l].size() == kinds, "alike_gpus: the same kinds of copies for every GPU");
    for (const auto& [from, to] : copies[l]) {
      paths[l].push_back(p.path_id(from, to));
      for (std::uint32_t r : p.path(paths[l].back()).resources) users[r].first |= std::uint64_t{1} << l;
    }
  }
  for (const auto& [from, to] : others)
    for (std::uint32_t r : p.path(p.path_id(from, to)).resources) users[r].second = true;
  // Can GPU l join the class whose first GPU is f? Its own resources (where its paths and f's differ,
  // position by position) must be its alone, and answer to f's the same way in every kind.
  auto joins = [&](const std::vector<int>& cls, int l) {
    std::map<std::uint32_t, std::uint32_t> to_first, from_first;  // l's own resource <-> f's
    const int f = cls.front();
    for (std::size_t k = 0; k < kinds; ++k) {
      std::vector<std::uint32_t> ids;
      for (int m : cls) ids.push_back(paths[static_cast<std::size_t>(m)][k]);
      ids.push_back(paths[static_cast<std::size_t>(l)][k]);
      if (!p.router().replicable(ids)) return false;
      const auto& a = p.path(paths[static_cast<std::size_t>(f)][k]).resources;
      const auto& b = p.path(paths[static_cast<std::size_t>(l)][k]).resources;
      for (std::size_t j = 0; j < a.size(); ++j) {
        if (a[j] == b[j]) continue;
        for (const auto& [r, gpu] : {std::pair{a[j], f}, std::pair{b[j], l}}) {
          const auto& u = users.at(r);
          if (u.second || u.first != std::uint64_t{1} << gpu) return false;
        }
        if (to_first.emplace(b[j], a[j]).first->second != a[j] || from_first.emplace(a[j], b[j]).first->second != b[j])
          return false;
      }
    }
    return true;
  };
  std::vector<std::vector<int>> classes;
  for (std::size_t l = 0; l < L; ++l) {
    bool placed = false;
    for (auto& cls : classes)
      if (joins(cls, static_cast<int>(l))) {
        cls.push_back(static_cast<int>(l));
        placed = true;
        break;
      }
    if (!placed) classes.push_back({static_cast<int>(l)});
  }
  return classes;
}

}  // namespace ffsim::coll
