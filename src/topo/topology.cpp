// What a cluster asks of its fabric, and the link rates its NICs train at.
// SPDX-License-Identifier: Apache-2.0
#include "topo/topology.hpp"

#include <optional>

#include "core/error.hpp"
#include "core/format.hpp"

namespace ffsim::topo {

FabricDemand demand_of(const hw::ClusterSpec& c) {
  FabricDemand d;
  d.gpu_nodes = c.nodes;
  d.nics_per_gpu_node = c.node.compute_nics();
  FFSIM_ASSERT(!c.node.nics.empty(), "demand_of: GPU node without NICs");
  d.host_bandwidth = c.node.nics.front().nic.port_bandwidth;
  d.gpus_per_node = static_cast<int>(c.node.gpus.size());
  if (c.storage) {
    d.storage_nodes = c.storage->count;
    d.nics_per_storage_node = static_cast<int>(c.storage->node.nics.size());
  }
  return d;
}

namespace {
// The NIC at the switch's rate when its own is higher; nullopt when it is not.
std::optional<hw::NicSpec> negotiated(const hw::NicSpec& n, const hw::SwitchSpec& sw) {
  if (n.port_bandwidth <= sw.port_bandwidth) return std::nullopt;
  hw::NicSpec r = n;
  const double ratio = sw.port_bandwidth / n.port_bandwidth;
  r.port_bandwidth = sw.port_bandwidth;
  r.effective_bandwidth = n.effective_bandwidth * ratio;
  return r;
}

std::string gbps(BytesPerSecond b) { return fmt_g(b.si() * 8 / 1e9, 4) + " Gb/s"; }
}  // namespace

std::vector<std::string> negotiate_link_rates(hw::ClusterSpec& c, const hw::SwitchSpec& sw) {
  std::vector<std::string> notes;
  auto apply = [&](hw::NodeSpec& node, bool storage_node, const std::string& key) {
    for (auto& x : node.nics) {
      if (!storage_node && x.role == "storage") continue;  // not on the fabric (demand_of)
      const auto n = negotiated(x.nic, sw);
      if (!n) continue;
      notes.push_back("NIC " + x.name + " of node \"" + node.name + "\" (" + x.nic.name + ", " + gbps(x.nic.port_bandwidth) +
                   ") is faster than the " + gbps(sw.port_bandwidth) + " ports of switch \"" + sw.name + "\": " + key +
                   " links train at the common rate, " + gbps(sw.port_bandwidth) + ", and carry " +
                   fmt_bandwidth(n->effective_bandwidth) + " of payload instead of " +
                   fmt_bandwidth(x.nic.effective_bandwidth));
      x.nic = *n;
    }
  };
  apply(c.node, false, "its");
  if (c.storage) apply(c.storage->node, true, "its");
  return notes;
}

}  // namespace ffsim::topo
