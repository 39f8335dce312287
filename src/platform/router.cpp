// Routing: the path between two places, and the shared table of paths.
// SPDX-License-Identifier: Apache-2.0
#include "platform/router.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace ffsim::platform {

using sched::Place;
using sched::PlaceKind;

PathTable::~PathTable() {
  for (std::size_t k = 0; k < kSegments; ++k) delete[] segments_[k].load(std::memory_order_relaxed);
}

void PathTable::store(std::uint32_t id, Path&& p) {
  const auto [k, off] = locate(id);
  Path* seg = segments_[k].load(std::memory_order_acquire);
  if (seg == nullptr) {
    // The first id of a segment may be handed out in one shard while another shard's id of the
    // same segment is too: the first to publish the segment wins, the other frees its own.
    auto* fresh = new Path[std::size_t{1} << (k + kFirstBits)];
    if (segments_[k].compare_exchange_strong(seg, fresh, std::memory_order_acq_rel))
      seg = fresh;
    else
      delete[] fresh;
  }
  seg[off] = std::move(p);
}

std::uint32_t Router::path_id(const Place& from, const Place& to) const {
  return table_.intern(place_key(from), place_key(to), [&] { return route(from, to); });
}

std::uint32_t Router::compute_path_id(const Place& g) const {
  // Keyed (gpu, all ones): no place pair has that second key.
  return table_.intern(place_key(g), ~std::uint64_t{0}, [&] {
    Path p;
    p.time = true;
    p.resources.push_back(m_.compute_resource(g));
    if (!g.storage)
      if (const std::uint32_t pool = m_.pool_resource(m_.model(g).compute[static_cast<std::size_t>(g.index)]);
          pool != kNoResource)
        p.resources.push_back(pool);
    return p;
  });
}

std::uint32_t Router::cores_path_id() const {
  FFSIM_ASSERT(m_.host_cores() != kNoResource, "cores_path_id: the platform has no host_cpu");
  return table_.intern(~std::uint64_t{0}, ~std::uint64_t{0}, [&] {
    Path p;
    p.time = true;
    p.resources.push_back(m_.host_cores());
    p.rate_cap = 1;  // a thread runs on one core at a time
    p.cap_what = "one core";
    return p;
  });
}

bool Router::replicable(const std::vector<std::uint32_t>& ids, std::string* why) const {
  auto no = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (ids.empty()) return no("no copies");
  const Path& first = path(ids[0]);
  if (!first.mirrors.empty()) return no("the first copy's path is a replica path itself");
  const std::size_t n = first.resources.size();
  for (std::size_t i = 1; i < ids.size(); ++i) {
    const Path& q = path(ids[i]);
    if (q.resources.size() != n || q.latency != first.latency || q.rate_cap != first.rate_cap || q.time != first.time ||
        q.cpu_s_per_byte != first.cpu_s_per_byte || !q.mirrors.empty())
      return no("copy " + std::to_string(i) + "'s path differs from the first's in length, latency, cap or kind");
  }
  // Which copies each resource is on (a resource on two copies' paths must be at one position of all).
  std::map<std::uint32_t, std::vector<std::size_t>> on;
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::uint32_t r : path(ids[i]).resources) {
      auto& v = on[r];
      if (v.empty() || v.back() != i) v.push_back(i);
    }
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t r0 = first.resources[k];
    bool same = true;
    for (std::size_t i = 1; i < ids.size(); ++i) same = same && path(ids[i]).resources[k] == r0;
    if (same) continue;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::uint32_t r = path(ids[i]).resources[k];
      const Resource& a = m_.resource(r0);
      const Resource& b = m_.resource(r);
      if (on[r].size() != 1) return no(m_.resource_name(r) + " is on the paths of some copies and not all");
      if (a.kind != b.kind || a.capacity != b.capacity || a.one_way != b.one_way)
        return no(m_.resource_name(r) + " and " + m_.resource_name(r0) + " differ in kind or capacity");
      if (b.kind == ResourceKind::PcieBidir) return no(m_.resource_name(r) + " is a both-ways cap of one copy's own");
      // Each copy's own resources repeat where the first's do (a path that crosses one twice).
      for (std::size_t j = 0; j < k; ++j)
        if ((first.resources[j] == r0) != (path(ids[i]).resources[j] == r))
          return no(m_.resource_name(r) + " repeats on its path unlike " + m_.resource_name(r0));
    }
  }
  return true;
}

std::uint32_t Router::replica_path_id(const std::vector<std::uint32_t>& ids) const {
  FFSIM_ASSERT(!ids.empty(), "replica_path_id: no copies");
  if (ids.size() == 1) return ids[0];
  const std::lock_guard<std::mutex> lock(replica_m_);
  if (const auto it = replica_ids_.find(ids); it != replica_ids_.end()) return it->second;
  std::string why;
  if (!replicable(ids, &why)) throw SimulationError("copies of a transfer cannot run as one flow: " + why);
  const Path& first = path(ids[0]);
  Path p = first;
  p.resources.clear();
  for (std::size_t k = 0; k < first.resources.size(); ++k) {
    const std::uint32_t r0 = first.resources[k];
    bool same = true;
    for (std::size_t i = 1; i < ids.size(); ++i) same = same && path(ids[i]).resources[k] == r0;
    if (same) {
      p.resources.insert(p.resources.end(), ids.size(), r0);  // once per copy
      continue;
    }
    p.resources.push_back(r0);
    for (std::size_t i = 1; i < ids.size(); ++i) {
      const std::pair<std::uint32_t, std::uint32_t> m{path(ids[i]).resources[k], r0};
      if (std::find(p.mirrors.begin(), p.mirrors.end(), m) == p.mirrors.end()) p.mirrors.push_back(m);
    }
  }
  const auto id = table_.intern(kReplicaKey, replica_ids_.size(), [&] { return std::move(p); });
  replica_ids_.emplace(ids, id);
  return id;
}

void Router::port_hop(const NodeModel& t, const std::vector<int>& dir, int q, std::vector<int>& local) {
  const auto i = static_cast<std::size_t>(q);
  local.push_back(dir[i]);
  if (t.port_duplex[i] >= 0) local.push_back(t.port_duplex[i]);
  if (t.port_bidir[i] >= 0) local.push_back(t.port_bidir[i]);
}

std::vector<int> Router::chain(const NodeModel& t, const std::vector<int>& dir, int port) {
  std::vector<int> local;
  for (int q = port; q >= 0; q = t.port_parent[static_cast<std::size_t>(q)]) port_hop(t, dir, q, local);
  return local;
}

void Router::local_path(const Place& from, const Place& to, Path& p) const {
  const NodeModel& t = m_.model(from);
  const hw::NodeSpec& n = *t.spec;
  const std::uint32_t b = m_.base(from);
  // A local resource, and where the GPU nodes are ranks of one machine the machine's too.
  auto R = [&](int local) {
    FFSIM_ASSERT(local >= 0, "missing resource");
    p.resources.push_back(b + static_cast<std::uint32_t>(local));
    if (!from.storage)
      if (const std::uint32_t pool = m_.pool_resource(local); pool != kNoResource) p.resources.push_back(pool);
  };
  auto chain_up = [&](int port) {
    for (int r : chain(t, t.port_up, port)) R(r);
  };
  auto chain_down = [&](int port) {
    for (int r : chain(t, t.port_down, port)) R(r);
  };
  auto idx = [](const Place& x) { return static_cast<std::size_t>(x.index); };
  auto sock = [&](int a, int c) {
    if (a != c) R(t.socket_link[static_cast<std::size_t>(a)][static_cast<std::size_t>(c)]);
  };
  auto device_port = [&](const Place& x) { return x.kind == PlaceKind::Gpu ? t.gpu_port[idx(x)] : t.nic_port[idx(x)]; };
  auto is_device = [](const Place& x) { return x.kind == PlaceKind::Gpu || x.kind == PlaceKind::Nic; };
  // An emulated device's memory is its socket's DRAM: a copy to or from it loads that DRAM as well.
  auto device_memory = [&](const Place& x) {
    if (x.kind == PlaceKind::Gpu && n.gpus[idx(x)].gpu.emulated()) R(t.dram[static_cast<std::size_t>(m_.socket_of(x))]);
  };
  const double pcie = n.pcie_latency.si();
  if (from == to && from.kind != PlaceKind::Dram) return;  // nothing moves (a DRAM copy still reads and writes)

  // Device <-> device (GPU<->GPU or GPU<->NIC) peer-to-peer.
  if (is_device(from) && is_device(to)) {
    FFSIM_ASSERT(from.kind == PlaceKind::Gpu || to.kind == PlaceKind::Gpu, "NIC to NIC inside a node");
    if (from.kind == PlaceKind::Gpu && to.kind == PlaceKind::Gpu) {
      const int nv = t.nvlink[idx(from)][idx(to)];
      if (nv >= 0) {
        R(nv);
        p.latency += pcie;
        return;
      }
      if (!t.nvswitch_tx.empty()) {
        R(t.nvswitch_tx[idx(from)]);
        R(t.nvswitch_rx[idx(to)]);
        p.latency += pcie;
        return;
      }
    }
    // Up from the source to the lowest common port, down to the destination. Traffic between
    // two devices below the same PCIe switch turns inside the switch; below the same root port
    // (Fire-Flyer's GPU5/GPU6) it goes up into the root complex and back down.
    std::vector<int> chain_a, chain_b;
    for (int q = device_port(from); q >= 0; q = t.port_parent[static_cast<std::size_t>(q)]) chain_a.push_back(q);
    for (int q = device_port(to); q >= 0; q = t.port_parent[static_cast<std::size_t>(q)]) chain_b.push_back(q);
    int common = -1;
    for (int q : chain_a)
      if (std::find(chain_b.begin(), chain_b.end(), q) != chain_b.end()) {
        common = q;
        break;
      }
    device_memory(from);
    if (from.kind == PlaceKind::Gpu) R(t.gpu_up[idx(from)]);
    auto walk = [&](const std::vector<int>& chain, const std::vector<int>& up_or_down) {
      for (int q : chain) {
        const bool turn_inside = q == common && n.ports[static_cast<std::size_t>(q)].kind == "switch";
        if (turn_inside) break;
        std::vector<int> local;
        port_hop(t, up_or_down, q, local);
        for (int r : local) R(r);
        if (q == common) break;
      }
    };
    walk(chain_a, t.port_up);
    if (common < 0) sock(m_.socket_of(from), m_.socket_of(to));
    walk(chain_b, t.port_down);
    if (to.kind == PlaceKind::Gpu) R(t.gpu_down[idx(to)]);
    device_memory(to);
    // The peer-to-peer rates: through the root complex a node-wide resource (Rome's limit), inside
    // a PCIe switch a cap on the flow alone (each GPU-NIC pair of a DGX-style node has its own).
    const bool in_switch = common >= 0 && n.ports[static_cast<std::size_t>(common)].kind == "switch";
    const bool to_nic = to.kind == PlaceKind::Nic, from_nic = from.kind == PlaceKind::Nic;
    auto cap = [&](double bps, const char* what) {
      if (bps < p.rate_cap) {
        p.rate_cap = bps;
        p.cap_what = what;
      }
    };
    if ((to_nic || from_nic) && in_switch && n.gpu_nic_p2p_bandwidth.si() > 0)
      cap(n.gpu_nic_p2p_bandwidth.si(), "GPU<->NIC peer-to-peer cap (inside a PCIe switch)");
    else if (to_nic && t.p2p_to_nic >= 0)
      R(t.p2p_to_nic);
    else if (from_nic && t.p2p_from_nic >= 0)
      R(t.p2p_from_nic);
    else if (!to_nic && !from_nic && n.gpu_gpu_p2p_bandwidth.si() > 0)
      cap(n.gpu_gpu_p2p_bandwidth.si(), "GPU<->GPU peer-to-peer cap");
    p.latency += pcie;
    return;
  }
  // Drives <-> NIC (storage serving reads, absorbing writes): staged through DRAM in one
  // pipelined flow, so DRAM is loaded twice (the drive's DMA and the NIC's).
  if (from.kind == PlaceKind::Disk && to.kind == PlaceKind::Nic) {
    R(t.disk_read);
    R(t.dram[0]);
    R(t.dram[0]);
    sock(0, m_.socket_of(to));
    chain_down(device_port(to));
    p.latency += pcie;
    return;
  }
  if (from.kind == PlaceKind::Nic && to.kind == PlaceKind::Disk) {
    chain_up(device_port(from));
    sock(m_.socket_of(from), 0);
    R(t.dram[0]);
    R(t.dram[0]);
    R(t.disk_write);
    p.latency += pcie;
    return;
  }
  // Device -> host memory or cores.
  if (is_device(from)) {
    device_memory(from);
    if (from.kind == PlaceKind::Gpu) R(t.gpu_up[idx(from)]);
    chain_up(device_port(from));
    sock(m_.socket_of(from), m_.socket_of(to));
    if (to.kind == PlaceKind::Dram)
      R(t.dram[idx(to)]);
    else
      FFSIM_ASSERT(false, "device to " + sched::place_name(to) + " is not a data path");
    p.latency += pcie;
    return;
  }
  if (from.kind == PlaceKind::Cpu && to.kind == PlaceKind::Gpu) {  // GDRCopy: cores write through the GPU's BAR
    sock(from.index, m_.socket_of(to));
    chain_down(device_port(to));
    R(t.gpu_down[idx(to)]);
    device_memory(to);
    p.latency += pcie;
    return;
  }
  // Host memory -> device.
  if (is_device(to)) {
    FFSIM_ASSERT(from.kind == PlaceKind::Dram, sched::place_name(from) + " to a device is not a data path");
    R(t.dram[idx(from)]);
    sock(m_.socket_of(from), m_.socket_of(to));
    chain_down(device_port(to));
    if (to.kind == PlaceKind::Gpu) R(t.gpu_down[idx(to)]);
    device_memory(to);
    p.latency += pcie;
    return;
  }
  // Host-side places: DRAM, cores, drives.
  if (from.kind == PlaceKind::Dram && to.kind == PlaceKind::Dram) {
    R(t.dram[idx(from)]);
    sock(from.index, to.index);
    R(t.dram[idx(to)]);
    return;
  }
  if (from.kind == PlaceKind::Dram && to.kind == PlaceKind::Cpu) {  // a reducer reads its input
    R(t.dram[idx(from)]);
    sock(from.index, to.index);
    if (t.cpu_reduce[idx(to)] >= 0) R(t.cpu_reduce[idx(to)]);
    return;
  }
  if (from.kind == PlaceKind::Cpu && to.kind == PlaceKind::Dram) {  // a reducer writes its output
    sock(from.index, to.index);
    R(t.dram[idx(to)]);
    return;
  }
  if (from.kind == PlaceKind::Disk && to.kind == PlaceKind::Dram) {
    R(t.disk_read);
    R(t.dram[idx(to)]);
    return;
  }
  if (from.kind == PlaceKind::Dram && to.kind == PlaceKind::Disk) {
    R(t.dram[idx(from)]);
    R(t.disk_write);
    return;
  }
  FFSIM_ASSERT(false, sched::place_name(from) + " -> " + sched::place_name(to) + " is not a data path");
}

Path Router::route(const Place& from, const Place& to) const {
  Path p;
  if (from.node == to.node && from.storage == to.storage) {
    local_path(from, to, p);
  } else {
    FFSIM_ASSERT(m_.fabric() != nullptr, "inter-node transfer on a platform without a fabric");
    const auto [na, nb] = net_nics(from, to);
    send_side(from, na, p);
    net_hops(from, na, to, nb, p);
    recv_side(nb, to, p);
  }
  // The host threads' core time (PlatformOptions::host_cpu): a message between ranks, a reducer's
  // read, an emulated device's copy.
  const auto& hc = m_.options().host_cpu;
  if (m_.host_cores() != kNoResource && !from.storage && !to.storage) {
    const auto emulated = [&](const Place& x) {
      return x.kind == PlaceKind::Gpu && m_.model(x).spec->gpus[static_cast<std::size_t>(x.index)].gpu.emulated();
    };
    if (from.node != to.node)
      p.cpu_s_per_byte = hc.transport_s_per_byte;
    else if (from.kind == PlaceKind::Dram && to.kind == PlaceKind::Cpu)
      p.cpu_s_per_byte = hc.reduce_s_per_byte;
    else if (emulated(from) || emulated(to))
      p.cpu_s_per_byte = hc.copy_s_per_byte;
  }
  return p;
}

std::pair<int, int> Router::net_nics(const Place& from, const Place& to) const {
  // NICs: GPU-node sides choose by affinity; a storage node uses the NIC in the peer's zone.
  int na = from.storage ? -1 : m_.nic_for(from);
  int nb = to.storage ? -1 : m_.nic_for(to);
  auto storage_nic = [&](const Place& storage_place, const Place& peer, int peer_nic) {
    if (storage_place.kind == PlaceKind::Nic) return static_cast<int>(storage_place.index);
    const int zone =
        peer_nic >= 0
            ? m_.fabric()->endpoints()[static_cast<std::size_t>(m_.endpoint_of(Place::nic(peer.node, peer_nic)))].zone
            : 0;
    for (int j : m_.storage_model().compute_nics) {
      Place cand = Place::nic(storage_place.node, j);
      cand.storage = true;
      if (m_.fabric()->endpoints()[static_cast<std::size_t>(m_.endpoint_of(cand))].zone == zone) return j;
    }
    return m_.storage_model()
        .compute_nics[static_cast<std::size_t>(peer.node) % m_.storage_model().compute_nics.size()];
  };
  if (from.storage) na = storage_nic(from, to, nb);
  if (to.storage) nb = storage_nic(to, from, na);
  if (!from.storage && !to.storage) na = send_nic(from, m_.plane_of_nic(to.node, nb));
  return {na, nb};
}

int Router::send_nic(const Place& from, int plane) const {
  // Planes are separate fabrics (multi-plane, one NIC per GPU): when the two ends' own NICs sit in
  // different planes, the transfer leaves through the sender node's NIC in the receiver's plane,
  // the one nearest the sender (NCCL's PXN moves the data to that NIC's GPU over NVLink; here it
  // crosses the node's own interconnect to that NIC as a local path does).
  const int na = m_.nic_for(from);
  if (m_.plane_of_nic(from.node, na) != plane) {
    const int alt = m_.nic_for(from, plane);
    if (alt >= 0) return alt;
  }
  return na;
}

void Router::send_side(const Place& from, int na, Path& p) const {
  Place nic_a = Place::nic(from.node, na);
  nic_a.storage = from.storage;
  // PXN (NCCL 2.12 on): a GPU whose NIC for this transfer sits farther in the PCIe tree than
  // another GPU it reaches over NVLink (an NVSwitch, or its bridge partner) hands the data to that
  // GPU, which sends it through the NIC: NVLink, then the nearer GPU's path to the NIC. On
  // Fire-Flyer (no NVLink, or pairs on one socket) and for a GPU's own NIC nothing changes.
  // Among the nearest GPUs, the one whose own NIC it is relays (each NIC's proxy GPU, as NCCL
  // binds one), so that the relayed traffic spreads over the GPUs of a switch.
  Place relay = from;
  if (!from.storage && from.kind == PlaceKind::Gpu) {
    const NodeModel& ta = m_.model(from);
    int best = ta.nic_affinity(from.index, na);
    bool best_owns = false;
    const auto gpus = static_cast<int>(ta.nvlink.size());
    for (int g = 0; g < gpus; ++g) {
      if (g == from.index) continue;
      const bool nvlinked =
          ta.nvlink[static_cast<std::size_t>(from.index)][static_cast<std::size_t>(g)] >= 0 || !ta.nvswitch_tx.empty();
      if (!nvlinked) continue;
      const int a = ta.nic_affinity(g, na);
      const bool owns = m_.nic_for(Place::gpu(from.node, g)) == na;
      if (a > best || (a == best && !(relay == from) && owns && !best_owns)) {
        best = a;
        best_owns = owns;
        relay = Place::gpu(from.node, g);
      }
    }
  }
  if (!(relay == from)) local_path(from, relay, p);
  if (!(relay == nic_a)) local_path(relay, nic_a, p);
  p.resources.push_back(m_.base(nic_a) +
                        static_cast<std::uint32_t>(m_.model(nic_a).nic_tx[static_cast<std::size_t>(na)]));
}

void Router::net_hops(const Place& from, int na, const Place& to, int nb, Path& p) const {
  Place nic_a = Place::nic(from.node, na);
  nic_a.storage = from.storage;
  Place nic_b = Place::nic(to.node, nb);
  nic_b.storage = to.storage;
  const auto hops = m_.fabric()->route(m_.endpoint_of(nic_a), m_.endpoint_of(nic_b));
  for (const auto& h : hops) p.resources.push_back(m_.fabric_resource(h));
  p.latency +=
      m_.fabric()->route_latency(hops).si() + m_.model(nic_a).spec->nics[static_cast<std::size_t>(na)].nic.latency.si();
}

void Router::recv_side(int nb, const Place& to, Path& p) const {
  Place nic_b = Place::nic(to.node, nb);
  nic_b.storage = to.storage;
  p.resources.push_back(m_.base(nic_b) +
                        static_cast<std::uint32_t>(m_.model(nic_b).nic_rx[static_cast<std::size_t>(nb)]));
  if (!(to == nic_b)) local_path(nic_b, to, p);
}

}  // namespace ffsim::platform
