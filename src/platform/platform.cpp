// The simulated machine: resources, paths, lowering.
// SPDX-License-Identifier: Apache-2.0
#include "platform/platform.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>

#include "core/error.hpp"

namespace ffsim::platform {

using sched::Place;
using sched::PlaceKind;

const char* resource_kind_name(ResourceKind k) {
  switch (k) {
    case ResourceKind::GpuLink: return "gpu_link";
    case ResourceKind::PciePort: return "pcie_port";
    case ResourceKind::PcieDuplex: return "pcie_duplex";
    case ResourceKind::PcieBidir: return "pcie_bidir";
    case ResourceKind::Dram: return "dram";
    case ResourceKind::SocketLink: return "socket_link";
    case ResourceKind::Nic: return "nic";
    case ResourceKind::Nvlink: return "nvlink";
    case ResourceKind::Fabric: return "fabric";
    case ResourceKind::GpuCompute: return "gpu_compute";
    case ResourceKind::CpuReduce: return "cpu_reduce";
    case ResourceKind::Disk: return "disk";
    case ResourceKind::PeerToPeer: return "peer_to_peer";
  }
  return "?";
}

std::uint64_t place_key(const Place& p) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(p.node)) << 32) |
         (static_cast<std::uint64_t>(p.storage ? 1 : 0) << 31) | (static_cast<std::uint64_t>(p.kind) << 16) |
         static_cast<std::uint16_t>(p.index);
}

namespace {
std::string devices_on(const hw::NodeSpec& n, const std::string& port) {
  // Devices at or below `port`, for labels: "gpu5+gpu6".
  std::vector<std::string> names;
  auto below = [&](const std::string& dev_port) {
    const hw::PciePortSpec* q = n.port(dev_port);
    for (std::size_t guard = 0; q && guard <= n.ports.size(); ++guard) {
      if (q->name == port) return true;
      if (q->kind == "root_port") return false;
      q = n.port(q->parent);
    }
    return false;
  };
  for (const auto& g : n.gpus)
    if (below(g.port)) names.push_back(g.name);
  for (const auto& x : n.nics)
    if (below(x.port)) names.push_back(x.name);
  std::string r;
  for (std::size_t i = 0; i < names.size(); ++i) r += (i ? "+" : "") + names[i];
  return r;
}
}  // namespace

Platform::NodeTemplate Platform::make_template(const hw::NodeSpec& n) {
  NodeTemplate t;
  t.spec = &n;
  auto add = [&](std::string name, std::string label, ResourceKind kind, double cap) {
    FFSIM_ASSERT(cap > 0 && std::isfinite(cap), "resource " + name + " without a positive capacity");
    t.res.push_back(LocalResource{std::move(name), std::move(label), kind, cap});
    return static_cast<int>(t.res.size()) - 1;
  };
  // PCIe ports and their tree.
  for (std::size_t i = 0; i < n.ports.size(); ++i) {
    const auto& p = n.ports[i];
    const std::string devs = devices_on(n, p.name);
    const std::string what = (p.kind == "switch" ? "PCIe switch " : "root port ") + p.name + " (" + devs + ")";
    t.port_up.push_back(add(p.name + ".up", what + ", device->CPU", ResourceKind::PciePort, p.bandwidth.si()));
    t.port_down.push_back(add(p.name + ".down", what + ", CPU->device", ResourceKind::PciePort, p.bandwidth.si()));
    t.port_duplex.push_back(p.duplex_bandwidth ? add(p.name + ".duplex", what + ", both directions",
                                                     ResourceKind::PcieDuplex, p.duplex_bandwidth->si())
                                               : -1);
    t.port_bidir.push_back(-1);
    if (p.bidirectional_bandwidth) {
      t.port_bidir.back() = add(p.name + ".bidir", what + ", both directions at once", ResourceKind::PcieBidir,
                                p.bidirectional_bandwidth->si());
      t.res.back().up = t.port_up.back();
      t.res.back().down = t.port_down.back();
    }
  }
  auto port_index = [&](const std::string& name) {
    for (std::size_t i = 0; i < n.ports.size(); ++i)
      if (n.ports[i].name == name) return static_cast<int>(i);
    FFSIM_ASSERT(false, "unknown port " + name);
    return -1;
  };
  auto socket_index = [&](const std::string& name) {
    for (std::size_t i = 0; i < n.sockets.size(); ++i)
      if (n.sockets[i].name == name) return static_cast<int>(i);
    FFSIM_ASSERT(false, "unknown socket " + name);
    return -1;
  };
  for (const auto& p : n.ports) {
    t.port_parent.push_back(p.kind == "switch" ? port_index(p.parent) : -1);
    t.port_socket.push_back(socket_index(n.socket_of_port(p.name).name));
  }
  // GPUs.
  for (const auto& g : n.gpus) {
    t.gpu_port.push_back(port_index(g.port));
    t.gpu_up.push_back(add(g.name + ".pcie.up", "GPU " + g.name + " PCIe link, GPU->CPU", ResourceKind::GpuLink,
                           g.gpu.pcie_bandwidth.si()));
    t.gpu_down.push_back(add(g.name + ".pcie.down", "GPU " + g.name + " PCIe link, CPU->GPU", ResourceKind::GpuLink,
                             g.gpu.pcie_bandwidth.si()));
    t.compute.push_back(add(g.name + ".compute", "GPU " + g.name + " compute", ResourceKind::GpuCompute, 1.0));
  }
  // Sockets: DRAM, reducers, links between them.
  const std::size_t S = n.sockets.size();
  t.socket_link.assign(S, std::vector<int>(S, -1));
  for (std::size_t s = 0; s < S; ++s) {
    const auto& sk = n.sockets[s];
    t.dram.push_back(add(sk.name + ".dram", "DRAM " + sk.name, ResourceKind::Dram, sk.dram_bandwidth.si()));
    t.cpu_reduce.push_back(sk.cpu.reduce_bandwidth_per_core
                               ? add(sk.name + ".reduce", "CPU " + sk.name + " reduce", ResourceKind::CpuReduce,
                                     sk.cpu.reduce_bandwidth_per_core->si() * sk.cpu.cores)
                               : -1);
  }
  for (std::size_t a = 0; a < S; ++a)
    for (std::size_t b = 0; b < S; ++b)
      if (a != b)
        t.socket_link[a][b] = add(n.sockets[a].name + "-" + n.sockets[b].name,
                                  "socket link " + n.sockets[a].name + "->" + n.sockets[b].name, ResourceKind::SocketLink,
                                  n.socket_link_bandwidth.si());
  // NICs.
  for (std::size_t j = 0; j < n.nics.size(); ++j) {
    const auto& x = n.nics[j];
    t.nic_port.push_back(port_index(x.port));
    const double cap = x.nic.effective_bandwidth.si() * x.nic.ports;
    t.nic_tx.push_back(add(x.name + ".tx", "NIC " + x.name + " send", ResourceKind::Nic, cap));
    t.nic_rx.push_back(add(x.name + ".rx", "NIC " + x.name + " receive", ResourceKind::Nic, cap));
    if (n.role == "storage" || x.role != "storage") t.compute_nics.push_back(static_cast<int>(j));
  }
  // NVLink.
  const std::size_t G = n.gpus.size();
  t.nvlink.assign(G, std::vector<int>(G, -1));
  if (n.nvlink.kind == "pairs") {
    for (const auto& [a, b] : n.nvlink.pairs) {
      const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
      t.nvlink[ua][ub] = add("nvl." + n.gpus[ua].name + "-" + n.gpus[ub].name,
                             "NVLink " + n.gpus[ua].name + "->" + n.gpus[ub].name, ResourceKind::Nvlink,
                             n.nvlink.bandwidth.si());
      t.nvlink[ub][ua] = add("nvl." + n.gpus[ub].name + "-" + n.gpus[ua].name,
                             "NVLink " + n.gpus[ub].name + "->" + n.gpus[ua].name, ResourceKind::Nvlink,
                             n.nvlink.bandwidth.si());
    }
  } else if (n.nvlink.kind == "switch") {
    for (const auto& g : n.gpus) {
      t.nvswitch_tx.push_back(add(g.name + ".nvl.tx", "NVSwitch port " + g.name + " send", ResourceKind::Nvlink,
                                  n.nvlink.bandwidth.si()));
      t.nvswitch_rx.push_back(add(g.name + ".nvl.rx", "NVSwitch port " + g.name + " receive", ResourceKind::Nvlink,
                                  n.nvlink.bandwidth.si()));
    }
  }
  // Rome has no chained write: all GPU<->NIC peer-to-peer traffic of a node shares one cap per
  // direction (arXiv 2408.14158 Sec. III-A), whichever GPU or NIC takes part.
  if (!n.gpus.empty() && !n.nics.empty() && n.gpu_nic_p2p_bandwidth.si() > 0) {
    t.p2p_to_nic = add("p2p.gpu-nic", "GPU->NIC peer-to-peer (root complex)", ResourceKind::PeerToPeer,
                       n.gpu_nic_p2p_bandwidth.si());
    t.p2p_from_nic = add("p2p.nic-gpu", "NIC->GPU peer-to-peer (root complex)", ResourceKind::PeerToPeer,
                         n.gpu_nic_p2p_bandwidth.si());
  }
  if (n.drives.count > 0) {
    t.disk_read = add("disk.read", "drives read", ResourceKind::Disk, n.drives.read_bandwidth.si() * n.drives.count);
    t.disk_write = add("disk.write", "drives write", ResourceKind::Disk, n.drives.write_bandwidth.si() * n.drives.count);
  }
  // How near each NIC is to each GPU in the PCIe tree: 2 per port their chains share, +1 on the
  // same socket (nic_affinity, which nic_for and the PXN relay choice ask for every path).
  const auto affinity = [&](int gpu, int nic) {
    auto chain = [&](int port) {
      std::vector<int> c;
      for (int q = port; q >= 0; q = t.port_parent[static_cast<std::size_t>(q)]) c.push_back(q);
      return c;
    };
    const auto a = chain(t.gpu_port[static_cast<std::size_t>(gpu)]);
    const auto c = chain(t.nic_port[static_cast<std::size_t>(nic)]);
    if (a.empty() || c.empty()) return 0;  // a device without a port (none of the shipped nodes)
    int shared = 0;
    for (int q : a)
      if (std::find(c.begin(), c.end(), q) != c.end()) ++shared;
    const bool same_socket = t.port_socket[static_cast<std::size_t>(a.back())] == t.port_socket[static_cast<std::size_t>(c.back())];
    return shared * 2 + (same_socket ? 1 : 0);
  };
  t.affinity.assign(n.gpus.size(), std::vector<int>(n.nics.size(), 0));
  for (std::size_t g = 0; g < n.gpus.size(); ++g)
    for (std::size_t j = 0; j < n.nics.size(); ++j) t.affinity[g][j] = affinity(static_cast<int>(g), static_cast<int>(j));
  // Each GPU's own NIC: the nearest in the PCIe tree; GPUs that tie on one set of NICs spread
  // over it in GPU order.
  if (!t.compute_nics.empty()) {
    const auto best_set = [&](std::size_t g) {
      int best = -1;
      std::vector<int> cands;
      for (int j : t.compute_nics) {
        const int sc = t.affinity[g][static_cast<std::size_t>(j)];
        if (sc > best) {
          best = sc;
          cands = {j};
        } else if (sc == best) {
          cands.push_back(j);
        }
      }
      return cands;
    };
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      const auto cands = best_set(g);
      std::size_t rank = 0;  // position of this GPU among the GPUs that share its best NIC set
      for (std::size_t h = 0; h < g; ++h)
        if (best_set(h) == cands) ++rank;
      t.gpu_nic.push_back(cands[rank % cands.size()]);
    }
  }
  return t;
}

Platform::Platform(hw::ClusterSpec cluster, std::shared_ptr<const topo::Fabric> fabric, TrafficConfig traffic,
                   PlatformOptions opts)
    : cluster_(std::move(cluster)), fabric_(std::move(fabric)), traffic_(traffic), opts_(opts) {
  gpu_t_ = make_template(cluster_.node);
  nics_per_gpu_node_ = static_cast<int>(gpu_t_.compute_nics.size());
  auto instantiate = [this](const NodeTemplate& t) {
    const auto b = static_cast<std::uint32_t>(resources_.size());
    for (const auto& r : t.res) {
      Resource x{r.kind, r.capacity};
      if (r.up >= 0) {
        x.up = b + static_cast<std::uint32_t>(r.up);
        x.down = b + static_cast<std::uint32_t>(r.down);
        x.one_way = t.res[static_cast<std::size_t>(r.up)].capacity + t.res[static_cast<std::size_t>(r.down)].capacity;
      }
      resources_.push_back(x);
    }
  };
  for (std::int64_t n = 0; n < cluster_.nodes; ++n) instantiate(gpu_t_);
  storage_base_ = static_cast<std::uint32_t>(resources_.size());
  if (cluster_.storage) {
    storage_t_ = make_template(cluster_.storage->node);
    nics_per_storage_node_ = static_cast<int>(storage_t_.compute_nics.size());
    for (int n = 0; n < cluster_.storage->count; ++n) instantiate(storage_t_);
  }
  fabric_base_ = static_cast<std::uint32_t>(resources_.size());
  if (fabric_) {
    for (const auto& l : fabric_->links()) {
      resources_.push_back(Resource{ResourceKind::Fabric, l.bandwidth.si()});
      resources_.push_back(Resource{ResourceKind::Fabric, l.bandwidth.si()});
    }
  }
}

const Platform::NodeTemplate& Platform::tmpl(const Place& p) const { return p.storage ? storage_t_ : gpu_t_; }

std::uint32_t Platform::base(const Place& p) const {
  if (p.storage) {
    FFSIM_ASSERT(cluster_.storage && p.node >= 0 && p.node < cluster_.storage->count,
                 "storage node out of range: " + sched::place_name(p));
    return storage_base_ + static_cast<std::uint32_t>(p.node) * static_cast<std::uint32_t>(storage_t_.res.size());
  }
  FFSIM_ASSERT(p.node >= 0 && p.node < cluster_.nodes, "GPU node out of range: " + sched::place_name(p));
  return static_cast<std::uint32_t>(p.node) * static_cast<std::uint32_t>(gpu_t_.res.size());
}

std::string Platform::resource_name(std::uint32_t id) const {
  if (id >= fabric_base_) {
    const std::uint32_t l = (id - fabric_base_) / 2;
    const auto& link = fabric_->links()[l];
    auto vname = [&](int v) {
      return fabric_->is_switch_vertex(v)
                 ? fabric_->switches()[static_cast<std::size_t>(v) - fabric_->endpoints().size()].name
                 : fabric_->endpoints()[static_cast<std::size_t>(v)].name;
    };
    return "f." + vname(link.lower) + "-" + vname(link.upper) + ((id - fabric_base_) % 2 == 0 ? ".up" : ".down");
  }
  const bool storage = id >= storage_base_;
  const auto& t = storage ? storage_t_ : gpu_t_;
  const std::uint32_t local = (id - (storage ? storage_base_ : 0)) % static_cast<std::uint32_t>(t.res.size());
  const std::uint32_t node = (id - (storage ? storage_base_ : 0)) / static_cast<std::uint32_t>(t.res.size());
  return (storage ? "s" : "n") + std::to_string(node) + "." + t.res[local].name;
}

std::pair<bool, int> Platform::node_of_resource(std::uint32_t id) const {
  if (id >= fabric_base_) return {false, -1};
  if (id >= storage_base_) return {true, static_cast<int>((id - storage_base_) / storage_t_.res.size())};
  return {false, static_cast<int>(id / gpu_t_.res.size())};
}

std::string Platform::resource_label(std::uint32_t id) const {
  if (id >= fabric_base_) {
    const auto& link = fabric_->links()[(id - fabric_base_) / 2];
    return std::string("fabric ") + topo::link_kind_name(link.kind) + " link " + resource_name(id).substr(2);
  }
  const bool storage = id >= storage_base_;
  const auto& t = storage ? storage_t_ : gpu_t_;
  const std::uint32_t local = (id - (storage ? storage_base_ : 0)) % static_cast<std::uint32_t>(t.res.size());
  return t.res[local].label;
}

int Platform::socket_of(const Place& p) const {
  const auto& t = tmpl(p);
  switch (p.kind) {
    case PlaceKind::Gpu: return t.port_socket[static_cast<std::size_t>(t.gpu_port[static_cast<std::size_t>(p.index)])];
    case PlaceKind::Nic: return t.port_socket[static_cast<std::size_t>(t.nic_port[static_cast<std::size_t>(p.index)])];
    case PlaceKind::Dram:
    case PlaceKind::Cpu: return p.index;
    case PlaceKind::Disk: return 0;
  }
  return 0;
}

void Platform::port_hop(const NodeTemplate& t, const std::vector<int>& dir, int q, std::vector<int>& local) {
  const auto i = static_cast<std::size_t>(q);
  local.push_back(dir[i]);
  if (t.port_duplex[i] >= 0) local.push_back(t.port_duplex[i]);
  if (t.port_bidir[i] >= 0) local.push_back(t.port_bidir[i]);
}

void Platform::chain_up(const NodeTemplate& t, std::uint32_t b, int port, Path& p) const {
  std::vector<int> local;
  for (int q = port; q >= 0; q = t.port_parent[static_cast<std::size_t>(q)]) port_hop(t, t.port_up, q, local);
  for (int r : local) p.resources.push_back(b + static_cast<std::uint32_t>(r));
}

void Platform::chain_down(const NodeTemplate& t, std::uint32_t b, int port, Path& p) const {
  std::vector<int> local;
  for (int q = port; q >= 0; q = t.port_parent[static_cast<std::size_t>(q)]) port_hop(t, t.port_down, q, local);
  for (int r : local) p.resources.push_back(b + static_cast<std::uint32_t>(r));
}

void Platform::local_path(const Place& from, const Place& to, Path& p) const {
  const NodeTemplate& t = tmpl(from);
  const hw::NodeSpec& n = *t.spec;
  const std::uint32_t b = base(from);
  auto R = [&](int local) {
    FFSIM_ASSERT(local >= 0, "missing resource");
    p.resources.push_back(b + static_cast<std::uint32_t>(local));
  };
  auto idx = [](const Place& x) { return static_cast<std::size_t>(x.index); };
  auto sock = [&](int a, int c) {
    if (a != c) R(t.socket_link[static_cast<std::size_t>(a)][static_cast<std::size_t>(c)]);
  };
  auto device_port = [&](const Place& x) {
    return x.kind == PlaceKind::Gpu ? t.gpu_port[idx(x)] : t.nic_port[idx(x)];
  };
  auto is_device = [](const Place& x) { return x.kind == PlaceKind::Gpu || x.kind == PlaceKind::Nic; };
  // An emulated device's memory is its socket's DRAM: a copy to or from it loads that DRAM as well.
  auto device_memory = [&](const Place& x) {
    if (x.kind == PlaceKind::Gpu && n.gpus[idx(x)].gpu.emulated())
      R(t.dram[static_cast<std::size_t>(socket_of(x))]);
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
    if (common < 0) sock(socket_of(from), socket_of(to));
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
    else if (to_nic && t.p2p_to_nic >= 0) R(t.p2p_to_nic);
    else if (from_nic && t.p2p_from_nic >= 0) R(t.p2p_from_nic);
    else if (!to_nic && !from_nic && n.gpu_gpu_p2p_bandwidth.si() > 0) cap(n.gpu_gpu_p2p_bandwidth.si(), "GPU<->GPU peer-to-peer cap");
    p.latency += pcie;
    return;
  }
  // Drives <-> NIC (storage serving reads, absorbing writes): staged through DRAM in one
  // pipelined flow, so DRAM is loaded twice (the drive's DMA and the NIC's).
  if (from.kind == PlaceKind::Disk && to.kind == PlaceKind::Nic) {
    R(t.disk_read);
    R(t.dram[0]);
    R(t.dram[0]);
    sock(0, socket_of(to));
    chain_down(t, b, device_port(to), p);
    p.latency += pcie;
    return;
  }
  if (from.kind == PlaceKind::Nic && to.kind == PlaceKind::Disk) {
    chain_up(t, b, device_port(from), p);
    sock(socket_of(from), 0);
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
    chain_up(t, b, device_port(from), p);
    sock(socket_of(from), socket_of(to));
    if (to.kind == PlaceKind::Dram) R(t.dram[idx(to)]);
    else FFSIM_ASSERT(false, "device to " + sched::place_name(to) + " is not a data path");
    p.latency += pcie;
    return;
  }
  if (from.kind == PlaceKind::Cpu && to.kind == PlaceKind::Gpu) {  // GDRCopy: cores write through the GPU's BAR
    sock(from.index, socket_of(to));
    chain_down(t, b, device_port(to), p);
    R(t.gpu_down[idx(to)]);
    device_memory(to);
    p.latency += pcie;
    return;
  }
  // Host memory -> device.
  if (is_device(to)) {
    FFSIM_ASSERT(from.kind == PlaceKind::Dram, sched::place_name(from) + " to a device is not a data path");
    R(t.dram[idx(from)]);
    sock(socket_of(from), socket_of(to));
    chain_down(t, b, device_port(to), p);
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

int Platform::nic_affinity(const NodeTemplate& t, int gpu, int nic) {
  return t.affinity[static_cast<std::size_t>(gpu)][static_cast<std::size_t>(nic)];
}

int Platform::nic_for(const Place& p, int plane) const {
  const NodeTemplate& t = tmpl(p);
  FFSIM_ASSERT(!t.compute_nics.empty(), "node " + sched::place_name(p) + " has no NIC for the fabric");
  if (plane >= 0) {
    // Among the NICs of one plane: the one of best affinity to `p` (the same scoring as below);
    // ties go to the lowest index.
    std::vector<int> in_plane;
    for (int j : t.compute_nics) {
      Place nic = Place::nic(p.node, j);
      nic.storage = p.storage;
      if (fabric_ && fabric_->endpoints()[static_cast<std::size_t>(endpoint_of(nic))].plane == plane) in_plane.push_back(j);
    }
    if (in_plane.empty()) return -1;
    if (p.kind == PlaceKind::Nic)
      return std::find(in_plane.begin(), in_plane.end(), static_cast<int>(p.index)) != in_plane.end() ? p.index : in_plane.front();
    if (p.kind != PlaceKind::Gpu) {  // a socket's places: a NIC of that socket first
      const int s = socket_of(p);
      for (int j : in_plane)
        if (t.port_socket[static_cast<std::size_t>(t.nic_port[static_cast<std::size_t>(j)])] == s) return j;
      return in_plane.front();
    }
    int best = -1, arg = in_plane.front();
    for (int j : in_plane)
      if (const int sc = nic_affinity(t, p.index, j); sc > best) best = sc, arg = j;
    return arg;
  }
  if (p.kind == PlaceKind::Nic) return p.index;
  if (p.kind != PlaceKind::Gpu) {
    const int s = socket_of(p);
    for (int j : t.compute_nics)
      if (t.port_socket[static_cast<std::size_t>(t.nic_port[static_cast<std::size_t>(j)])] == s) return j;
    return t.compute_nics.front();
  }
  return t.gpu_nic[static_cast<std::size_t>(p.index)];  // the nearest in the PCIe tree (make_template)
}

int Platform::endpoint_of(const Place& nic) const {
  FFSIM_ASSERT(nic.kind == PlaceKind::Nic, "endpoint_of a non-NIC place");
  const NodeTemplate& t = tmpl(nic);
  const auto it = std::find(t.compute_nics.begin(), t.compute_nics.end(), static_cast<int>(nic.index));
  FFSIM_ASSERT(it != t.compute_nics.end(), "NIC " + sched::place_name(nic) + " is not attached to the fabric");
  const int ordinal = static_cast<int>(it - t.compute_nics.begin());
  if (!nic.storage) return nic.node * nics_per_gpu_node_ + ordinal;
  return cluster_.nodes * nics_per_gpu_node_ + nic.node * nics_per_storage_node_ + ordinal;
}

Path Platform::compute_path(const Place& from, const Place& to) const {
  Path p;
  if (from.node == to.node && from.storage == to.storage) {
    local_path(from, to, p);
    return p;
  }
  FFSIM_ASSERT(fabric_ != nullptr, "inter-node transfer on a platform without a fabric");
  const auto [na, nb] = net_nics(from, to);
  send_side(from, na, p);
  net_hops(from, na, to, nb, p);
  recv_side(nb, to, p);
  return p;
}

std::pair<int, int> Platform::net_nics(const Place& from, const Place& to) const {
  // NICs: GPU-node sides choose by affinity; a storage node uses the NIC in the peer's zone.
  int na = from.storage ? -1 : nic_for(from);
  int nb = to.storage ? -1 : nic_for(to);
  auto storage_nic = [&](const Place& storage_place, const Place& peer, int peer_nic) {
    if (storage_place.kind == PlaceKind::Nic) return static_cast<int>(storage_place.index);
    const int zone = peer_nic >= 0 ? fabric_->endpoints()[static_cast<std::size_t>(
                                                              endpoint_of(Place::nic(peer.node, peer_nic)))].zone
                                   : 0;
    for (int j : storage_t_.compute_nics) {
      Place cand = Place::nic(storage_place.node, j);
      cand.storage = true;
      if (fabric_->endpoints()[static_cast<std::size_t>(endpoint_of(cand))].zone == zone) return j;
    }
    return storage_t_.compute_nics[static_cast<std::size_t>(peer.node) % storage_t_.compute_nics.size()];
  };
  if (from.storage) na = storage_nic(from, to, nb);
  if (to.storage) nb = storage_nic(to, from, na);
  if (!from.storage && !to.storage) na = send_nic(from, plane_of_nic(to.node, nb));
  return {na, nb};
}

int Platform::plane_of_nic(int node, int nic) const {
  return fabric_->endpoints()[static_cast<std::size_t>(endpoint_of(Place::nic(node, nic)))].plane;
}

int Platform::send_nic(const Place& from, int plane) const {
  // Planes are separate fabrics (multi-plane, one NIC per GPU): when the two ends' own NICs sit in
  // different planes, the transfer leaves through the sender node's NIC in the receiver's plane,
  // the one nearest the sender (NCCL's PXN moves the data to that NIC's GPU over NVLink; here it
  // crosses the node's own interconnect to that NIC as a local path does).
  const int na = nic_for(from);
  if (plane_of_nic(from.node, na) != plane) {
    const int alt = nic_for(from, plane);
    if (alt >= 0) return alt;
  }
  return na;
}

void Platform::send_side(const Place& from, int na, Path& p) const {
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
    const NodeTemplate& ta = tmpl(from);
    int best = nic_affinity(ta, from.index, na);
    bool best_owns = false;
    const auto gpus = static_cast<int>(ta.nvlink.size());
    for (int g = 0; g < gpus; ++g) {
      if (g == from.index) continue;
      const bool nvlinked = ta.nvlink[static_cast<std::size_t>(from.index)][static_cast<std::size_t>(g)] >= 0 || !ta.nvswitch_tx.empty();
      if (!nvlinked) continue;
      const int a = nic_affinity(ta, g, na);
      const bool owns = nic_for(Place::gpu(from.node, g)) == na;
      if (a > best || (a == best && !(relay == from) && owns && !best_owns)) {
        best = a;
        best_owns = owns;
        relay = Place::gpu(from.node, g);
      }
    }
  }
  if (!(relay == from)) local_path(from, relay, p);
  if (!(relay == nic_a)) local_path(relay, nic_a, p);
  p.resources.push_back(base(nic_a) + static_cast<std::uint32_t>(tmpl(nic_a).nic_tx[static_cast<std::size_t>(na)]));
}

void Platform::net_hops(const Place& from, int na, const Place& to, int nb, Path& p) const {
  Place nic_a = Place::nic(from.node, na);
  nic_a.storage = from.storage;
  Place nic_b = Place::nic(to.node, nb);
  nic_b.storage = to.storage;
  const auto hops = fabric_->route(endpoint_of(nic_a), endpoint_of(nic_b));
  for (const auto& h : hops)
    p.resources.push_back(fabric_base_ + static_cast<std::uint32_t>(h.link) * 2 + (h.up ? 0U : 1U));
  p.latency += fabric_->route_latency(hops).si() + tmpl(nic_a).spec->nics[static_cast<std::size_t>(na)].nic.latency.si();
}

void Platform::recv_side(int nb, const Place& to, Path& p) const {
  Place nic_b = Place::nic(to.node, nb);
  nic_b.storage = to.storage;
  p.resources.push_back(base(nic_b) + static_cast<std::uint32_t>(tmpl(nic_b).nic_rx[static_cast<std::size_t>(nb)]));
  if (!(to == nic_b)) local_path(nic_b, to, p);
}

Platform::PairLoads Platform::all_pairs_loads(const std::vector<Place>& ranks, double bytes) const {
  PairLoads out;
  out.load.assign(resources_.size(), 0.0);
  const std::size_t n = ranks.size();
  auto add = [&](const Path& path, double amount) {
    for (std::uint32_t r : path.resources) out.load[r] += amount;
    out.min_rate_cap = std::min(out.min_rate_cap, path.rate_cap);
  };
  auto note = [&](double latency, bool net) {
    (net ? out.any_net : out.any_local) = true;
    double& m = net ? out.max_net_latency : out.max_local_latency;
    m = std::max(m, latency);
  };
  const bool storage = std::any_of(ranks.begin(), ranks.end(), [](const Place& x) { return x.storage; });
  if (storage || fabric_ == nullptr) {
    // Storage ranks pick their NIC by the peer's zone: one path per pair.
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) {
        if (a == b) continue;
        const Path q = compute_path(ranks[a], ranks[b]);
        add(q, bytes);
        note(q.latency, ranks[a].node != ranks[b].node || ranks[a].storage != ranks[b].storage);
      }
    return out;
  }
  // A node's part of a path (a local path, a sending or a receiving side) depends on the node
  // model alone, not on which node: each is built once, kept relative to the node's first
  // resource, and shifted by each node's base (every GPU node has the same template).
  struct Part {
    std::vector<std::uint32_t> rel;
    double latency = 0, rate_cap = 0;
  };
  std::map<std::array<int, 5>, Part> parts;
  auto cached = [&](const std::array<int, 5>& key, const Place& at, const std::function<void(Path&)>& build) -> const Part& {
    auto it = parts.find(key);
    if (it == parts.end()) {
      Path p;
      build(p);
      Part part;
      const std::uint32_t b0 = base(at);
      for (std::uint32_t r : p.resources) part.rel.push_back(r - b0);
      part.latency = p.latency;
      part.rate_cap = p.rate_cap;
      it = parts.emplace(key, std::move(part)).first;
    }
    return it->second;
  };
  auto add_part = [&](const Part& part, const Place& at, double amount) {
    const std::uint32_t b0 = base(at);
    for (std::uint32_t r : part.rel) out.load[b0 + r] += amount;
    out.min_rate_cap = std::min(out.min_rate_cap, part.rate_cap);
  };
  auto kind = [](const Place& x) { return static_cast<int>(x.kind); };
  // Pairs inside a node: one local path each (a node holds a few ranks).
  std::map<int, std::vector<std::size_t>> by_node;
  for (std::size_t i = 0; i < n; ++i) by_node[ranks[i].node].push_back(i);
  for (const auto& [node, members] : by_node)
    for (std::size_t a : members)
      for (std::size_t b : members) {
        if (a == b) continue;
        const Place &x = ranks[a], &y = ranks[b];
        const Part& q = cached({0, kind(x), x.index, kind(y), y.index}, x, [&](Path& p) { p = compute_path(x, y); });
        add_part(q, x, bytes);
        note(q.latency, false);
      }
  if (by_node.size() < 2) return out;

  // Between nodes, a pair's path is send_side(a, NIC for b's plane) + fabric + recv_side(b).
  const auto& eps = fabric_->endpoints();
  const std::size_t E = eps.size();
  const auto K = static_cast<std::size_t>(nics_per_gpu_node_);
  auto node_of_ep = [&](std::size_t e) { return static_cast<int>(e / K); };
  auto nic_place = [&](int node, int nic) { return Place::nic(node, nic); };
  std::vector<int> planes;  // distinct planes of the receivers' NICs, in order of first use
  std::vector<int> plane_ix(E, -1);
  std::vector<std::size_t> recv_count(E, 0);  // ranks receiving through each endpoint
  std::vector<double> recv_lat(E, 0.0);
  std::vector<std::size_t> plane_total;                   // receivers per plane
  std::map<std::pair<int, int>, std::size_t> node_plane;  // receivers per (node, plane index)
  for (std::size_t b = 0; b < n; ++b) {
    const Place& to = ranks[b];
    const int nb = nic_for(to);
    const auto e = static_cast<std::size_t>(endpoint_of(nic_place(to.node, nb)));
    const int pl = eps[e].plane;
    auto it = std::find(planes.begin(), planes.end(), pl);
    if (it == planes.end()) {
      planes.push_back(pl);
      plane_total.push_back(0);
      it = planes.end() - 1;
    }
    const auto pi = static_cast<std::size_t>(it - planes.begin());
    plane_ix[e] = static_cast<int>(pi);
    ++plane_total[pi];
    ++node_plane[{to.node, static_cast<int>(pi)}];
    // Every rank off b's node sends to b.
    const std::size_t senders = n - by_node[to.node].size();
    const Part& q = cached({2, kind(to), to.index, nb, 0}, to, [&](Path& p) { recv_side(nb, to, p); });
    add_part(q, to, static_cast<double>(senders) * bytes);
    const bool first = recv_count[e] == 0;
    ++recv_count[e];
    recv_lat[e] = first ? q.latency : std::max(recv_lat[e], q.latency);
  }
  // Senders: per rank and receivers' plane, the NIC it leaves by and its side of the path.
  const std::size_t P = planes.size();
  std::vector<std::size_t> send_count(P * E, 0);
  std::vector<double> send_lat(P * E, 0.0);
  std::vector<int> send_nic_of(E, -1);
  for (std::size_t a = 0; a < n; ++a) {
    const Place& from = ranks[a];
    for (std::size_t pi = 0; pi < P; ++pi) {
      const auto own = node_plane.find({from.node, static_cast<int>(pi)});
      const std::size_t peers = plane_total[pi] - (own == node_plane.end() ? 0 : own->second);
      if (peers == 0) continue;
      const int na = send_nic(from, planes[pi]);
      const auto e = static_cast<std::size_t>(endpoint_of(nic_place(from.node, na)));
      send_nic_of[e] = na;
      const Part& q = cached({1, kind(from), from.index, na, 0}, from, [&](Path& p) { send_side(from, na, p); });
      add_part(q, from, static_cast<double>(peers) * bytes);
      const bool first = send_count[pi * E + e] == 0;
      ++send_count[pi * E + e];
      send_lat[pi * E + e] = first ? q.latency : std::max(send_lat[pi * E + e], q.latency);
    }
  }
  // The fabric: a route is the sender's link up to its leaf, hops that depend on the sender only
  // through that leaf (Fabric::host_link), then the receiver's link down. Per receiving endpoint,
  // the senders of one leaf share those hops.
  auto hop_resource = [&](const topo::Hop& h) {
    return fabric_base_ + static_cast<std::uint32_t>(h.link) * 2 + (h.up ? 0U : 1U);
  };
  // Per leaf, its senders grouped by node (a node's endpoints are consecutive): the count, the
  // largest latency (its side + its link up + its NIC), and the two nodes of largest latency, so
  // that a receiver finds the senders off its own node without visiting them.
  struct NodeSenders {
    int node;
    std::size_t count;
    double lat;
    std::size_t ep;  // one of its endpoints: a route's source
  };
  struct LeafGroup {
    int leaf;
    std::size_t total = 0;
    std::vector<NodeSenders> nodes;
    int best = -1, second = -1;  // indices into nodes: largest latency, largest on another node
  };
  const auto switch_count = fabric_->switches().size();
  for (std::size_t pi = 0; pi < P; ++pi) {
    std::vector<LeafGroup> groups;
    std::vector<int> group_of_leaf(switch_count, -1);
    std::size_t receivers = 0;
    for (std::size_t e = 0; e < E; ++e)
      if (plane_ix[e] == static_cast<int>(pi)) receivers += recv_count[e];
    for (std::size_t e = 0; e < E; ++e) {
      const std::size_t c = send_count[pi * E + e];
      if (c == 0) continue;
      const int node = node_of_ep(e);
      const auto own = node_plane.find({node, static_cast<int>(pi)});
      const std::size_t peers = receivers - (own == node_plane.end() ? 0 : own->second);
      const topo::Hop up{fabric_->host_link(static_cast<int>(e)), true};
      out.load[hop_resource(up)] += static_cast<double>(c * peers) * bytes;
      const int na = send_nic_of[e];
      const double lat = send_lat[pi * E + e] + fabric_->hop_latency(up).si() +
                         tmpl(nic_place(node, na)).spec->nics[static_cast<std::size_t>(na)].nic.latency.si();
      const auto leaf = static_cast<std::size_t>(fabric_->leaf_of(static_cast<int>(e)));
      if (group_of_leaf[leaf] < 0) {
        group_of_leaf[leaf] = static_cast<int>(groups.size());
        groups.emplace_back();
        groups.back().leaf = static_cast<int>(leaf);
      }
      LeafGroup& g = groups[static_cast<std::size_t>(group_of_leaf[leaf])];
      g.total += c;
      if (!g.nodes.empty() && g.nodes.back().node == node) {
        g.nodes.back().count += c;
        g.nodes.back().lat = std::max(g.nodes.back().lat, lat);
      } else {
        g.nodes.push_back(NodeSenders{node, c, lat, e});
      }
    }
    for (LeafGroup& g : groups)
      for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
        const double l = g.nodes[static_cast<std::size_t>(i)].lat;
        if (g.best < 0 || l > g.nodes[static_cast<std::size_t>(g.best)].lat) {
          g.second = g.best;
          g.best = i;
        } else if (g.second < 0 || l > g.nodes[static_cast<std::size_t>(g.second)].lat) {
          g.second = i;
        }
      }
    for (std::size_t eb = 0; eb < E; ++eb) {
      if (plane_ix[eb] != static_cast<int>(pi) || recv_count[eb] == 0) continue;
      const int node_b = node_of_ep(eb);
      for (const LeafGroup& g : groups) {
        // The senders of this leaf on other nodes than the receiver's.
        const auto it = std::lower_bound(g.nodes.begin(), g.nodes.end(), node_b,
                                         [](const NodeSenders& ns, int node) { return ns.node < node; });
        const std::size_t m = g.total - (it != g.nodes.end() && it->node == node_b ? it->count : 0);
        if (m == 0) continue;
        const NodeSenders& top = g.nodes[static_cast<std::size_t>(g.best)];
        const NodeSenders& other = top.node != node_b ? top : g.nodes[static_cast<std::size_t>(g.second)];
        const auto hops = fabric_->route(static_cast<int>(other.ep), static_cast<int>(eb));
        const double amount = static_cast<double>(m * recv_count[eb]) * bytes;
        double rest = 0;
        for (std::size_t h = 1; h < hops.size(); ++h) {
          out.load[hop_resource(hops[h])] += amount;
          rest += fabric_->hop_latency(hops[h]).si();
        }
        note(other.lat + rest + recv_lat[eb], true);
      }
    }
  }
  return out;
}

template <class Make>
std::uint32_t Platform::intern(std::uint64_t ka, std::uint64_t kb, Make&& make) const {
  const auto key = std::make_pair(ka, kb);
  if (auto it = path_index_.find(key); it != path_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(paths_.size());
  paths_.push_back(make());
  path_index_.emplace(key, id);
  return id;
}

std::uint32_t Platform::path_id(const Place& from, const Place& to) const {
  return intern(place_key(from), place_key(to), [&] { return compute_path(from, to); });
}

std::uint32_t Platform::compute_resource(const Place& gpu) const {
  FFSIM_ASSERT(gpu.kind == PlaceKind::Gpu, "compute on a non-GPU place");
  return base(gpu) + static_cast<std::uint32_t>(tmpl(gpu).compute[static_cast<std::size_t>(gpu.index)]);
}

void Platform::lower(const sched::Schedule& s, sched::OpId id, Lowered& out) const {
  const sched::Op& o = s.op(id);
  out.latency = 0;
  out.flows.clear();
  switch (o.kind) {
    case sched::OpKind::Delay: out.latency = o.amount; return;
    case sched::OpKind::Compute: {
      // A compute op is a flow of `amount` GPU-seconds through the GPU's compute resource
      // (capacity 1): alone it takes exactly `amount`; two at once share the GPU.
      const Place& g = o.at;
      // Keyed (gpu, all ones): no place pair has that second key.
      const std::uint32_t pid = intern(place_key(g), ~std::uint64_t{0}, [&] {
        Path p;
        p.resources.push_back(compute_resource(g));
        return p;
      });
      out.flows.push_back(Flow{pid, o.amount, 1.0, sched::TrafficClass::Other, 0.0, paths_[pid].rate_cap});
      return;
    }
    case sched::OpKind::Transfer: {
      // A flow carries its class's lane weight on its whole path (CM02 max-min, and SimGrid, give a
      // flow one weight), and every flow of a class carries it, inside a node too: a collective
      // alone then runs as with no classes at all (its flows all weigh the same). Until 2026-12-01
      // only transfers between nodes carried it, so a lone HFReduce's sends outweighed its own
      // copies 4:1 in host memory: 1.8% faster at 72 GPUs, the host-path reduce-scatter 6-8%.
      // What remains: service levels arbitrate only the NIC and switch ports, but here another
      // class's flows in the same DRAM or PCIe link meet the weights too.
      const std::uint32_t pid = path_id(o.at, o.to);
      const double w = traffic_.weight(o.cls);
      out.latency = paths_[pid].latency;
      // A zero-byte transfer still costs its latency and arbitration, as a flow of nothing.
      out.flows.push_back(
          Flow{pid, o.amount, w, o.cls, opts_.arbitration_latency / w, std::min(paths_[pid].rate_cap, o.rate_cap)});
      return;
    }
    case sched::OpKind::Reduce: {
      // k reads of `amount` from the inputs into the cores, one write of `amount` to the output.
      // An accumulating reduce keeps its output (the last input) in cache: it reads only the others.
      // Its memory traffic carries its class's weight (Schedule::set_class), as the copies beside it.
      const double w = traffic_.weight(o.cls), d = opts_.arbitration_latency / w;
      const std::uint32_t end = o.accumulate ? o.inputs_end - 1 : o.inputs_end;
      auto add = [&](std::uint32_t pid) { out.flows.push_back(Flow{pid, o.amount, w, o.cls, d, paths_[pid].rate_cap}); };
      for (std::uint32_t i = o.inputs_begin; i < end; ++i) add(path_id(s.reduce_inputs()[i], o.at));
      if (!o.accumulate) add(path_id(o.at, o.to));
      return;
    }
  }
}

}  // namespace ffsim::platform
