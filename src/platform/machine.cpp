// The machine as resources: node models, their instances, the fabric's links, NIC choice.
// SPDX-License-Identifier: Apache-2.0
#include "platform/machine.hpp"

#include <algorithm>
#include <cmath>

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
    case ResourceKind::HostCores: return "host_cores";
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

NodeModel make_node_model(const hw::NodeSpec& n) {
  NodeModel t;
  t.spec = &n;
  auto add = [&](std::string name, std::string label, ResourceKind kind, double cap) {
    FFSIM_ASSERT(cap > 0 && std::isfinite(cap), "resource " + name + " without a positive capacity");
    t.res.push_back(NodeModel::LocalResource{std::move(name), std::move(label), kind, cap});
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
                                  "socket link " + n.sockets[a].name + "->" + n.sockets[b].name,
                                  ResourceKind::SocketLink, n.socket_link_bandwidth.si());
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
      t.nvlink[ua][ub] =
          add("nvl." + n.gpus[ua].name + "-" + n.gpus[ub].name, "NVLink " + n.gpus[ua].name + "->" + n.gpus[ub].name,
              ResourceKind::Nvlink, n.nvlink.bandwidth.si());
      t.nvlink[ub][ua] =
          add("nvl." + n.gpus[ub].name + "-" + n.gpus[ua].name, "NVLink " + n.gpus[ub].name + "->" + n.gpus[ua].name,
              ResourceKind::Nvlink, n.nvlink.bandwidth.si());
    }
  } else if (n.nvlink.kind == "switch") {
    for (const auto& g : n.gpus) {
      t.nvswitch_tx.push_back(
          add(g.name + ".nvl.tx", "NVSwitch port " + g.name + " send", ResourceKind::Nvlink, n.nvlink.bandwidth.si()));
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
    t.disk_write =
        add("disk.write", "drives write", ResourceKind::Disk, n.drives.write_bandwidth.si() * n.drives.count);
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
    const bool same_socket =
        t.port_socket[static_cast<std::size_t>(a.back())] == t.port_socket[static_cast<std::size_t>(c.back())];
    return shared * 2 + (same_socket ? 1 : 0);
  };
  t.affinity.assign(n.gpus.size(), std::vector<int>(n.nics.size(), 0));
  for (std::size_t g = 0; g < n.gpus.size(); ++g)
    for (std::size_t j = 0; j < n.nics.size(); ++j)
      t.affinity[g][j] = affinity(static_cast<int>(g), static_cast<int>(j));
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
}  // namespace

Machine::Machine(hw::ClusterSpec cluster, std::shared_ptr<const topo::Fabric> fabric, TrafficConfig traffic,
                 PlatformOptions opts)
    : cluster_(std::move(cluster)), fabric_(std::move(fabric)), traffic_(std::move(traffic)), opts_(opts) {
  gpu_t_ = make_node_model(cluster_.node);
  nics_per_gpu_node_ = static_cast<int>(gpu_t_.compute_nics.size());
  auto instantiate = [this](const NodeModel& t) {
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
    storage_t_ = make_node_model(cluster_.storage->node);
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
  pool_base_ = static_cast<std::uint32_t>(resources_.size());
  if (opts_.host_pool) {
    // The machine the ranks share: its model has the node's structure (the same local indices);
    // its DRAM, reduce cores and ports (the emulated devices' copy threads) cap the ranks together.
    pool_t_ = make_node_model(*opts_.host_pool);
    FFSIM_ASSERT(pool_t_.res.size() == gpu_t_.res.size(), "host_pool: another structure than the node's");
    instantiate(pool_t_);
    // Real GPUs are the machine's too (a CUDA run's ranks share them); an emulated device's link is
    // a rank's own copy thread.
    const bool real_gpus = !cluster_.node.gpus.empty() && !cluster_.node.gpus.front().gpu.emulated();
    pool_.assign(gpu_t_.res.size(), kNoResource);
    for (std::size_t i = 0; i < gpu_t_.res.size(); ++i) {
      const ResourceKind k = gpu_t_.res[i].kind;
      if (k == ResourceKind::Dram || k == ResourceKind::CpuReduce || k == ResourceKind::PciePort ||
          k == ResourceKind::PcieDuplex || k == ResourceKind::PcieBidir || k == ResourceKind::SocketLink ||
          k == ResourceKind::PeerToPeer || (real_gpus && (k == ResourceKind::GpuLink || k == ResourceKind::GpuCompute)))
        pool_[i] = pool_base_ + static_cast<std::uint32_t>(i);
    }
    if (opts_.host_cpu.cores > 0) {
      host_cores_ = static_cast<std::uint32_t>(resources_.size());
      resources_.push_back(Resource{ResourceKind::HostCores, static_cast<double>(opts_.host_cpu.cores)});
    }
  }
}

std::uint32_t Machine::base(const Place& p) const {
  if (p.storage) {
    FFSIM_ASSERT(cluster_.storage && p.node >= 0 && p.node < cluster_.storage->count,
                 "storage node out of range: " + sched::place_name(p));
    return storage_base_ + static_cast<std::uint32_t>(p.node) * static_cast<std::uint32_t>(storage_t_.res.size());
  }
  FFSIM_ASSERT(p.node >= 0 && p.node < cluster_.nodes, "GPU node out of range: " + sched::place_name(p));
  return static_cast<std::uint32_t>(p.node) * static_cast<std::uint32_t>(gpu_t_.res.size());
}

std::string Machine::resource_name(std::uint32_t id) const {
  if (id == host_cores_) return "machine.cores";
  if (id >= pool_base_) return "machine." + pool_t_.res[id - pool_base_].name;
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

std::pair<bool, int> Machine::node_of_resource(std::uint32_t id) const {
  if (id >= fabric_base_) return {false, -1};  // the fabric's, and the ranks' machine's (host_pool)
  if (id >= storage_base_) return {true, static_cast<int>((id - storage_base_) / storage_t_.res.size())};
  return {false, static_cast<int>(id / gpu_t_.res.size())};
}

std::string Machine::resource_label(std::uint32_t id) const {
  if (id == host_cores_) return "the cores the ranks' threads share";
  if (id >= pool_base_) return pool_t_.res[id - pool_base_].label + " (the machine the ranks share)";
  if (id >= fabric_base_) {
    const auto& link = fabric_->links()[(id - fabric_base_) / 2];
    return std::string("fabric ") + topo::link_kind_name(link.kind) + " link " + resource_name(id).substr(2);
  }
  const bool storage = id >= storage_base_;
  const auto& t = storage ? storage_t_ : gpu_t_;
  const std::uint32_t local = (id - (storage ? storage_base_ : 0)) % static_cast<std::uint32_t>(t.res.size());
  return t.res[local].label;
}

int Machine::socket_of(const Place& p) const {
  const auto& t = model(p);
  switch (p.kind) {
    case PlaceKind::Gpu: return t.port_socket[static_cast<std::size_t>(t.gpu_port[static_cast<std::size_t>(p.index)])];
    case PlaceKind::Nic: return t.port_socket[static_cast<std::size_t>(t.nic_port[static_cast<std::size_t>(p.index)])];
    case PlaceKind::Dram:
    case PlaceKind::Cpu: return p.index;
    case PlaceKind::Disk: return 0;
  }
  return 0;
}

int Machine::nic_for(const Place& p, int plane) const {
  const NodeModel& t = model(p);
  FFSIM_ASSERT(!t.compute_nics.empty(), "node " + sched::place_name(p) + " has no NIC for the fabric");
  if (plane >= 0) {
    // Among the NICs of one plane: the one of best affinity to `p` (the same scoring as below);
    // ties go to the lowest index.
    std::vector<int> in_plane;
    for (int j : t.compute_nics) {
      Place nic = Place::nic(p.node, j);
      nic.storage = p.storage;
      if (fabric_ && fabric_->endpoints()[static_cast<std::size_t>(endpoint_of(nic))].plane == plane)
        in_plane.push_back(j);
    }
    if (in_plane.empty()) return -1;
    if (p.kind == PlaceKind::Nic)
      return std::find(in_plane.begin(), in_plane.end(), static_cast<int>(p.index)) != in_plane.end()
                 ? p.index
                 : in_plane.front();
    if (p.kind != PlaceKind::Gpu) {  // a socket's places: a NIC of that socket first
      const int s = socket_of(p);
      for (int j : in_plane)
        if (t.port_socket[static_cast<std::size_t>(t.nic_port[static_cast<std::size_t>(j)])] == s) return j;
      return in_plane.front();
    }
    int best = -1, arg = in_plane.front();
    for (int j : in_plane)
      if (const int sc = t.nic_affinity(p.index, j); sc > best) best = sc, arg = j;
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

int Machine::endpoint_of(const Place& nic) const {
  FFSIM_ASSERT(nic.kind == PlaceKind::Nic, "endpoint_of a non-NIC place");
  const NodeModel& t = model(nic);
  const auto it = std::find(t.compute_nics.begin(), t.compute_nics.end(), static_cast<int>(nic.index));
  FFSIM_ASSERT(it != t.compute_nics.end(), "NIC " + sched::place_name(nic) + " is not attached to the fabric");
  const int ordinal = static_cast<int>(it - t.compute_nics.begin());
  if (!nic.storage) return nic.node * nics_per_gpu_node_ + ordinal;
  return cluster_.nodes * nics_per_gpu_node_ + nic.node * nics_per_storage_node_ + ordinal;
}

int Machine::plane_of_nic(int node, int nic) const {
  return fabric_->endpoints()[static_cast<std::size_t>(endpoint_of(Place::nic(node, nic)))].plane;
}

std::uint32_t Machine::compute_resource(const Place& gpu) const {
  FFSIM_ASSERT(gpu.kind == PlaceKind::Gpu, "compute on a non-GPU place");
  return base(gpu) + static_cast<std::uint32_t>(model(gpu).compute[static_cast<std::size_t>(gpu.index)]);
}

}  // namespace ffsim::platform
