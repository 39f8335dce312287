// The two-layer fat-tree (leaf-spine) generator.
// SPDX-License-Identifier: Apache-2.0
#include "topo/two_layer.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/format.hpp"

namespace ffsim::topo {

TwoLayerShape two_layer_shape(int radix, double oversubscription, long long endpoints, bool full) {
  if (radix < 2 || radix % 2 != 0)
    throw ValueError("a fat-tree needs an even switch radix of at least 2, got " + std::to_string(radix));
  if (!(oversubscription >= 1.0))
    throw ValueError("oversubscription (down:up) must be at least 1, got " + fmt_g(oversubscription));
  TwoLayerShape s;
  s.radix = radix;
  // down/up = r and down + up = k.
  s.down = static_cast<int>(std::lround(radix * oversubscription / (1.0 + oversubscription)));
  if (s.down >= radix) s.down = radix - 1;
  s.up = radix - s.down;
  const long long max_hosts = static_cast<long long>(radix) * s.down;
  if (endpoints > max_hosts)
    throw ValueError("a two-layer fat-tree of " + std::to_string(radix) + "-port switches at " + std::to_string(s.down) +
                     ":" + std::to_string(s.up) + " holds at most " + fmt_int(max_hosts) + " endpoints (" +
                     std::to_string(radix) + " leaves x " + std::to_string(s.down) + " hosts); the cluster needs " +
                     fmt_int(endpoints));
  s.leaves = full ? radix : static_cast<int>(std::max<long long>(1, (endpoints + s.down - 1) / s.down));
  s.spines = s.up;
  return s;
}

std::vector<int> add_demand_endpoints(Fabric& f, const FabricDemand& d) {
  std::vector<int> ids;
  for (int n = 0; n < d.gpu_nodes; ++n)
    for (int i = 0; i < d.nics_per_gpu_node; ++i)
      ids.push_back(f.add_endpoint(Endpoint{"n" + std::to_string(n) + ".nic" + std::to_string(i), false, n, i, 0, 0}));
  for (int n = 0; n < d.storage_nodes; ++n)
    for (int i = 0; i < d.nics_per_storage_node; ++i)
      ids.push_back(f.add_endpoint(Endpoint{"s" + std::to_string(n) + ".nic" + std::to_string(i), true, n, i, 0, 0}));
  return ids;
}

FabricSize two_layer_size(const TwoLayerShape& shape, long long hosts) {
  FabricSize z;
  z.switches = static_cast<long long>(shape.leaves) + shape.spines;
  z.leaves = shape.leaves;
  z.links = hosts + static_cast<long long>(shape.leaves) * shape.spines;
  return z;
}

ZoneSwitches add_two_layer_zone(Fabric& f, const TwoLayerShape& shape, const hw::SwitchSpec& sw,
                                const CableLatencies& cables, BytesPerSecond host_bw,
                                const std::vector<int>& endpoint_ids, int zone, int plane, const std::string& prefix,
                                int reserved, const std::string& chassis_model) {
  FFSIM_ASSERT(static_cast<long long>(endpoint_ids.size()) + reserved <= shape.capacity(), "zone over capacity");
  ZoneSwitches z;
  std::vector<int>& leaves = z.leaves;
  std::vector<int>& spines = z.spines;
  for (int l = 0; l < shape.leaves; ++l)
    leaves.push_back(f.add_switch(Switch{prefix + "leaf" + std::to_string(l), Tier::Leaf, zone, plane, -1, sw.ports,
                                         sw.name, sw.latency}));
  for (int s = 0; s < shape.spines; ++s)
    spines.push_back(f.add_switch(Switch{prefix + "spine" + std::to_string(s), Tier::Spine, zone, plane, -1, sw.ports,
                                         sw.name, sw.latency}));
  // Every leaf has one uplink to every spine: a cable between racks, or a backplane trace inside a
  // chassis (as short as a host cable, and electrical).
  const bool chassis = !chassis_model.empty();
  for (int l : leaves)
    for (int s : spines)
      f.connect(f.switch_vertex(l), f.switch_vertex(s), chassis ? LinkKind::Backplane : LinkKind::LeafSpine,
                sw.port_bandwidth, chassis ? cables.host : cables.switch_, !chassis);
  if (chassis) {
    Chassis ch{chassis_model, leaves};
    ch.switches.insert(ch.switches.end(), spines.begin(), spines.end());
    f.add_chassis(std::move(ch));
  }
  // Storage ports spread evenly over the leaves; GPU-node ports fill the rest in node order.
  std::vector<int> compute, storage;
  for (int id : endpoint_ids) (f.endpoint(id).storage ? storage : compute).push_back(id);
  const auto L = static_cast<std::size_t>(shape.leaves);
  std::size_t next_compute = 0, next_storage = 0;
  const auto R = static_cast<std::size_t>(reserved);
  for (std::size_t l = 0; l < L; ++l) {
    const std::size_t quota_storage = storage.size() / L + (l < storage.size() % L ? 1 : 0);
    // Reserved ports go to the last leaves first, so that they do not collide with the storage extras.
    const std::size_t quota_reserved = R / L + (L - 1 - l < R % L ? 1 : 0);
    FFSIM_ASSERT(quota_storage + quota_reserved <= static_cast<std::size_t>(shape.down), "leaf over capacity");
    const std::size_t quota_compute = static_cast<std::size_t>(shape.down) - quota_storage - quota_reserved;
    for (std::size_t i = 0; i < quota_reserved; ++i) z.reserved_leaves.push_back(leaves[l]);
    auto attach = [&](int id) {
      Endpoint& e = f.endpoint(id);
      e.zone = zone;
      e.plane = plane;
      f.connect(f.endpoint_vertex(id), f.switch_vertex(leaves[l]), LinkKind::HostLeaf, host_bw, cables.host, false);
    };
    for (std::size_t i = 0; i < quota_compute && next_compute < compute.size(); ++i) attach(compute[next_compute++]);
    for (std::size_t i = 0; i < quota_storage && next_storage < storage.size(); ++i) attach(storage[next_storage++]);
  }
  FFSIM_ASSERT(next_compute == compute.size() && next_storage == storage.size(), "zone placement left hosts out");
  return z;
}

namespace {

/// "two_layer": one two-layer fat-tree (leaf-spine) of the scenario's switch model.
class TwoLayer final : public Topology {
public:
  TwoLayer(const hw::SwitchSpec& sw, const CableLatencies& cables, double oversub, bool full)
      : sw_(sw), cables_(cables), oversub_(oversub), full_(full) {}
  Fabric build(const FabricDemand& d) const override {
    const TwoLayerShape shape = two_layer_shape(sw_.ports, oversub_, d.endpoints(), full_);
    Fabric f;
    const auto ids = add_demand_endpoints(f, d);
    add_two_layer_zone(f, shape, sw_, cables_, d.host_bandwidth, ids, 0, 0, "");
    f.finalize();
    return f;
  }
  FabricSize size_of(const FabricDemand& d) const override {
    FabricSize z = two_layer_size(two_layer_shape(sw_.ports, oversub_, d.endpoints(), full_), d.endpoints());
    z.endpoints = d.endpoints();
    return z;
  }
  long long capacity() const override { return two_layer_shape(sw_.ports, oversub_, 0, true).capacity(); }
  std::string summary() const override {
    const auto s = two_layer_shape(sw_.ports, oversub_, 0, true);
    return "two-layer fat-tree of " + std::to_string(sw_.ports) + "-port " + sw_.name + ", " + std::to_string(s.down) +
           ":" + std::to_string(s.up) + (full_ ? ", full build" : "");
  }

private:
  hw::SwitchSpec sw_;
  CableLatencies cables_;
  double oversub_;
  bool full_;
};

}  // namespace

std::unique_ptr<Topology> make_two_layer(const TwoLayerParams& p, const hw::SwitchSpec& sw, const CableLatencies& c) {
  (void)two_layer_shape(sw.ports, p.oversubscription, 0, true);
  return std::make_unique<TwoLayer>(sw, c, p.oversubscription, p.full);
}

}  // namespace ffsim::topo
