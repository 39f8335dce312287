// JSON -> fabric designs: one parameter reader per topology, and the registry.
// SPDX-License-Identifier: Apache-2.0
#include "config/topo_reader.hpp"

#include "config/hw_reader.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"
#include "topo/multi_plane.hpp"
#include "topo/multi_zone.hpp"
#include "topo/single_switch.hpp"
#include "topo/three_layer.hpp"
#include "topo/two_layer.hpp"

namespace ffsim::config {

namespace {

// Builds the design of checked parameters; a limit of the design fails at the "fabric" section.
template <class Make>
std::unique_ptr<topo::Topology> build_at(const Reader& p, Make&& make) {
  try {
    return make();
  } catch (const ValueError& e) {
    p.fail(e.what());
  }
}

std::unique_ptr<topo::Topology> read_two_layer(const Reader& p, const hw::SwitchSpec& sw, const topo::CableLatencies& c) {
  topo::TwoLayerParams t;
  t.oversubscription = p.number_in_or("oversubscription", 1.0, 1e6, 1.0);
  t.full = p.choice_or("build", {"as_needed", "full"}, "as_needed") == "full";
  p.finish();
  return build_at(p, [&] { return topo::make_two_layer(t, sw, c); });
}

std::unique_ptr<topo::Topology> read_multi_zone(const Reader& p, const hw::SwitchSpec& sw, const topo::CableLatencies& c) {
  topo::MultiZoneParams t;
  t.zones = static_cast<int>(p.integer("zones", 1, 64));
  t.oversubscription = p.number_in_or("oversubscription", 1.0, 1e6, 1.0);
  t.full = p.choice_or("zone_build", {"as_needed", "full"}, "as_needed") == "full";
  if (p.has("zone_chassis")) {
    const Reader cr = p.child("zone_chassis");
    t.chassis = cr.as_string();
    if (!is_snake_case(t.chassis))
      cr.fail("expected the snake_case name of a director chassis in the price book (e.g. \"cs8500\"), got \"" + t.chassis +
              "\"");
  }
  if (auto iz = p.optional_child("inter_zone")) {
    t.inter_zone_switches = static_cast<int>(iz->fact_integer("switches", 0, 1024));
    if (t.inter_zone_switches == 0 && t.zones > 1)
      iz->fail_at("switches", "expected at least 1 inter-zone switch: without one the " + std::to_string(t.zones) +
                                  " zones cannot reach each other (give the switches that join them, or \"zones\": 1)");
    t.links_per_zone = static_cast<int>(iz->fact_integer("links_per_zone", 1, 1 << 20));
    if (static_cast<long long>(t.links_per_zone) * t.zones > sw.ports)
      iz->fail_at("links_per_zone", std::to_string(t.links_per_zone) + " links into each of " + std::to_string(t.zones) +
                                        " zones need " + std::to_string(t.links_per_zone * t.zones) + " ports; the " +
                                        sw.name + " has " + std::to_string(sw.ports));
    iz->finish();
  } else if (t.zones > 1) {
    p.fail("missing required key \"inter_zone\" (expected {\"switches\": N, \"links_per_zone\": M} joining the zones)");
  }
  p.finish();
  return build_at(p, [&] { return topo::make_multi_zone(t, sw, c); });
}

std::unique_ptr<topo::Topology> read_three_layer(const Reader& p, const hw::SwitchSpec& sw, const topo::CableLatencies& c) {
  topo::ThreeLayerParams t;
  const std::string rule = p.choice_or("core_sizing", {"exact", "power_of_two_pods"}, "exact");
  p.finish();
  t.core_sizing = rule == "exact" ? topo::CoreSizing::Exact : topo::CoreSizing::PowerOfTwoPods;
  return build_at(p, [&] { return topo::make_three_layer(t, sw, c); });
}

std::unique_ptr<topo::Topology> read_multi_plane(const Reader& p, const hw::SwitchSpec& sw, const topo::CableLatencies& c) {
  topo::MultiPlaneParams t;
  t.planes = static_cast<int>(p.integer("planes", 1, 1024));
  t.oversubscription = p.number_in_or("oversubscription", 1.0, 1e6, 1.0);
  t.full = p.choice_or("plane_build", {"as_needed", "full"}, "as_needed") == "full";
  p.finish();
  return build_at(p, [&] { return topo::make_multi_plane(t, sw, c); });
}

std::unique_ptr<topo::Topology> read_single_switch(const Reader& p, const hw::SwitchSpec& sw,
                                                   const topo::CableLatencies& c) {
  topo::SingleSwitchParams t;
  t.spare_ports = static_cast<int>(p.integer_or("spare_ports", 0, 0, 1 << 20));
  p.finish();
  return build_at(p, [&] { return topo::make_single_switch(t, sw, c); });
}

}  // namespace

const TopologyRegistry& topologies() {
  static const TopologyRegistry registry = [] {
    TopologyRegistry r("topology");
    r.add("two_layer", "two-layer fat-tree (leaf-spine), any even radix and oversubscription", read_two_layer);
    r.add("multi_zone", "zones of two-layer fat-trees joined by inter-zone switches; storage dual-homed", read_multi_zone);
    r.add("three_layer", "three-layer fat-tree: pods of leaves and spines under a core; explicit core sizing rule",
          read_three_layer);
    r.add("multi_plane", "one NIC per GPU, NIC i in plane i mod P; each plane a two-layer fat-tree (Sec. IX)",
          read_multi_plane);
    r.add("single_switch", "every NIC port on one switch (a rack, a lab cluster)", read_single_switch);
    return r;
  }();
  return registry;
}

topo::FabricSpec parse_fabric(const Reader& r, const Catalog& cat) {
  topo::FabricSpec f;
  Reader name = r.child("topology", "a topology name (" + join(topologies().names()) + ")");
  f.topology = name.as_string();
  const auto* entry = topologies().find(f.topology);
  if (!entry) name.fail(topologies().unknown_message(f.topology));
  f.sw = switch_ref(r, "switch", cat);
  // Without "cable_latency" in the scenario: [I] light in a cable covers about 0.2 m/ns (5 ns/m), so
  // a host cable of about 1 m (in the rack) takes 5 ns and a switch-to-switch cable of about 10 m
  // (across the row) 50 ns; both are below a switch's own forwarding latency and no published figure
  // of Fire-Flyer 2's cable lengths exists. A scenario overrides them with sourced values.
  topo::CableLatencies cables{Seconds(5e-9), Seconds(50e-9)};
  if (auto c = r.optional_child("cable_latency")) {
    cables.host = c->fact_quantity<Seconds>("host", true);
    cables.switch_ = c->fact_quantity<Seconds>("switch", true);
    c->finish();
  }
  f.design = entry->factory(r, f.sw, cables);
  return f;
}

}  // namespace ffsim::config
