// "multi_zone": zones of two-layer fat-trees joined by a few inter-zone switches, with storage
// nodes dual-homed (one NIC into each zone), as Fire-Flyer 2 (arXiv 2408.14158 Sec. III-B).
// SPDX-License-Identifier: Apache-2.0
#include "topo/multi_zone.hpp"

#include "core/error.hpp"
#include "core/format.hpp"
#include "topo/two_layer.hpp"

namespace ffsim::topo {

namespace {

//   zone 0: two-layer fat-tree                 zone 1: two-layer fat-tree
//   spines ....                                spines ....
//   leaves ... leafA                   leafB ... leaves
//   hosts       |                        |         hosts
//               +---- iz0, iz1 ... ------+        (inter-zone switches on leaf host ports)
// With "zone_chassis", each zone's leaves and spines are one director chassis (backplane links).
// GPU nodes split into contiguous blocks, one per zone; storage node s puts NIC z into zone z.
class MultiZone final : public Topology {
public:
  MultiZone(const hw::SwitchSpec& sw, const CableLatencies& c, int zones, double oversub, bool full, int iz_switches,
            int iz_links, std::string chassis)
      : sw_(sw), cables_(c), zones_(zones), oversub_(oversub), full_(full), iz_switches_(iz_switches),
        iz_links_(iz_links), chassis_(std::move(chassis)) {}

  Fabric build(const FabricDemand& d) const override {
    if (d.storage_nodes > 0 && d.nics_per_storage_node != zones_)
      throw ValueError("storage nodes are dual-homed with one NIC per zone, but they have " +
                       std::to_string(d.nics_per_storage_node) + (d.nics_per_storage_node == 1 ? " NIC" : " NICs") + " for " + std::to_string(zones_) + " zones");
    Fabric f;
    const auto ids = add_demand_endpoints(f, d);
    const int reserved = iz_switches_ * iz_links_;
    std::vector<std::vector<int>> per_zone(static_cast<std::size_t>(zones_));
    for (int id : ids) {
      const Endpoint& e = f.endpoint(id);
      const int z = e.storage ? e.nic : static_cast<int>(static_cast<long long>(e.node) * zones_ / d.gpu_nodes);
      per_zone[static_cast<std::size_t>(z)].push_back(id);
    }
    std::vector<ZoneSwitches> zs;
    for (int z = 0; z < zones_; ++z) {
      const auto need = static_cast<long long>(per_zone[static_cast<std::size_t>(z)].size()) + reserved;
      TwoLayerShape shape;
      try {
        shape = two_layer_shape(sw_.ports, oversub_, need, full_);
      } catch (const ValueError& e) {
        throw ValueError("zone " + std::to_string(z) + ": " + e.what() + " (" +
                         fmt_int(static_cast<long long>(per_zone[static_cast<std::size_t>(z)].size())) +
                         " host ports + " + std::to_string(reserved) + " inter-zone links)");
      }
      zs.push_back(add_two_layer_zone(f, shape, sw_, cables_, d.host_bandwidth, per_zone[static_cast<std::size_t>(z)], z,
                                      0, "z" + std::to_string(z) + ".", reserved, chassis_));
    }
    for (int i = 0; i < iz_switches_; ++i) {
      const int sw = f.add_switch(Switch{"iz" + std::to_string(i), Tier::InterZone, -1, 0, -1, sw_.ports, sw_.name,
                                         sw_.latency});
      for (int z = 0; z < zones_; ++z)
        for (int k = 0; k < iz_links_; ++k) {
          const int leaf = zs[static_cast<std::size_t>(z)].reserved_leaves[static_cast<std::size_t>(i * iz_links_ + k)];
          f.connect(f.switch_vertex(leaf), f.switch_vertex(sw), LinkKind::InterZone, sw_.port_bandwidth, cables_.switch_,
                    true);
        }
    }
    f.finalize();
    return f;
  }

  FabricSize size_of(const FabricDemand& d) const override {
    // GPU node v joins zone v zones / nodes (as build()); storage node NIC z joins zone z.
    FabricSize z;
    z.endpoints = d.endpoints();
    const int reserved = iz_switches_ * iz_links_;
    for (int k = 0; k < zones_; ++k) {
      const auto first = [&](int zone) {  // the first node v with v zones / nodes >= zone
        return (static_cast<long long>(zone) * d.gpu_nodes + zones_ - 1) / zones_;
      };
      const long long hosts =
          (first(k + 1) - first(k)) * d.nics_per_gpu_node + (d.storage_nodes > 0 ? d.storage_nodes : 0);
      const FabricSize one = two_layer_size(two_layer_shape(sw_.ports, oversub_, hosts + reserved, full_), hosts);
      z.switches += one.switches;
      z.leaves += one.leaves;
      z.links += one.links;
    }
    z.switches += iz_switches_;
    z.links += static_cast<long long>(iz_switches_) * zones_ * iz_links_;
    return z;
  }

  long long capacity() const override {
    return zones_ * (two_layer_shape(sw_.ports, oversub_, 0, true).capacity() - iz_switches_ * iz_links_);
  }

  std::string summary() const override {
    const auto s = two_layer_shape(sw_.ports, oversub_, 0, true);
    return std::to_string(zones_) + " zones of two-layer fat-trees (" + std::to_string(sw_.ports) + "-port " + sw_.name +
           ", " + std::to_string(s.down) + ":" + std::to_string(s.up) + "), " + std::to_string(iz_switches_) +
           " inter-zone switches x " + std::to_string(iz_links_) + " links per zone" +
           (chassis_.empty() ? "" : ", each zone one " + chassis_ + " chassis");
  }

private:
  hw::SwitchSpec sw_;
  CableLatencies cables_;
  int zones_;
  double oversub_;
  bool full_;
  int iz_switches_;
  int iz_links_;
  std::string chassis_;
};

}  // namespace

std::unique_ptr<Topology> make_multi_zone(const MultiZoneParams& p, const hw::SwitchSpec& sw, const CableLatencies& c) {
  (void)two_layer_shape(sw.ports, p.oversubscription, 0, true);
  return std::make_unique<MultiZone>(sw, c, p.zones, p.oversubscription, p.full, p.inter_zone_switches, p.links_per_zone,
                                     p.chassis);
}

}  // namespace ffsim::topo
