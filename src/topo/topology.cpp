// The topology registry and the "fabric" section parser.
// SPDX-License-Identifier: Apache-2.0
#include "topo/topology.hpp"

#include <optional>

#include "core/error.hpp"
#include "core/format.hpp"
#include "topo/multi_plane.hpp"
#include "topo/multi_zone.hpp"
#include "topo/three_layer.hpp"
#include "topo/two_layer.hpp"

namespace ffsim::topo {

const TopologyRegistry& topologies() {
  static const TopologyRegistry registry = [] {
    TopologyRegistry r("topology");
    r.add("two_layer", "two-layer fat-tree (leaf-spine), any even radix and oversubscription", make_two_layer);
    r.add("multi_zone", "zones of two-layer fat-trees joined by inter-zone switches; storage dual-homed", make_multi_zone);
    r.add("three_layer", "three-layer fat-tree: pods of leaves and spines under a core; explicit core sizing rule",
          make_three_layer);
    r.add("multi_plane", "one NIC per GPU, NIC i in plane i mod P; each plane a two-layer fat-tree (Sec. IX)",
          make_multi_plane);
    return r;
  }();
  return registry;
}

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

void negotiate_link_rates(hw::ClusterSpec& c, const hw::SwitchSpec& sw, const config::Reader& cluster) {
  auto apply = [&](hw::NodeSpec& node, bool storage_node, const std::string& key) {
    for (auto& x : node.nics) {
      if (!storage_node && x.role == "storage") continue;  // not on the fabric (demand_of)
      const auto n = negotiated(x.nic, sw);
      if (!n) continue;
      cluster.note("NIC " + x.name + " of node \"" + node.name + "\" (" + x.nic.name + ", " + gbps(x.nic.port_bandwidth) +
                   ") is faster than the " + gbps(sw.port_bandwidth) + " ports of switch \"" + sw.name + "\": " + key +
                   " links train at the common rate, " + gbps(sw.port_bandwidth) + ", and carry " +
                   fmt_bandwidth(n->effective_bandwidth) + " of payload instead of " +
                   fmt_bandwidth(x.nic.effective_bandwidth));
      x.nic = *n;
    }
  };
  apply(c.node, false, "its");
  if (c.storage) apply(c.storage->node, true, "its");
}

FabricSpec parse_fabric(const config::Reader& r, const config::Catalog& cat) {
  FabricSpec f;
  config::Reader name = r.child("topology", "a topology name (" + join(topologies().names()) + ")");
  f.topology = name.as_string();
  const auto* entry = topologies().find(f.topology);
  if (!entry) name.fail(topologies().unknown_message(f.topology));
  f.sw = hw::switch_ref(r, "switch", cat);
  // Without "cable_latency" in the scenario: [I] light in a cable covers about 0.2 m/ns (5 ns/m), so
  // a host cable of about 1 m (in the rack) takes 5 ns and a switch-to-switch cable of about 10 m
  // (across the row) 50 ns; both are below a switch's own forwarding latency and no published figure
  // of Fire-Flyer 2's cable lengths exists. A scenario overrides them with sourced values.
  CableLatencies cables{Seconds(5e-9), Seconds(50e-9)};
  if (auto c = r.optional_child("cable_latency")) {
    cables.host = c->fact_quantity<Seconds>("host", true);
    cables.switch_ = c->fact_quantity<Seconds>("switch", true);
    c->finish();
  }
  f.design = entry->factory(r, f.sw, cables, cat);
  return f;
}

}  // namespace ffsim::topo
