// "single_switch": every NIC port cabled to one switch (a rack, a lab cluster).
// SPDX-License-Identifier: Apache-2.0
#include "topo/single_switch.hpp"

#include "core/error.hpp"
#include "core/format.hpp"
#include "topo/two_layer.hpp"

namespace ffsim::topo {

namespace {

//            switch (ports - spare)
//   | nic0 of n0 | nic1 of n0 | ... | storage nics
// No uplinks: the switch's whole bandwidth is between its hosts (a non-blocking crossbar).
class SingleSwitch final : public Topology {
public:
  SingleSwitch(const hw::SwitchSpec& sw, const CableLatencies& c, int spare) : sw_(sw), cables_(c), spare_(spare) {}

  Fabric build(const FabricDemand& d) const override {
    if (d.endpoints() > capacity())
      throw ValueError("one " + std::to_string(sw_.ports) + "-port " + sw_.name + " switch with " +
                       std::to_string(spare_) + " spare port" + (spare_ == 1 ? "" : "s") + " holds at most " +
                       fmt_int(capacity()) + " endpoints; the cluster needs " + fmt_int(d.endpoints()) +
                       " (use two_layer for more)");
    Fabric f;
    const auto ids = add_demand_endpoints(f, d);
    const int s = f.add_switch(Switch{"switch0", Tier::Leaf, 0, 0, -1, sw_.ports, sw_.name, sw_.latency});
    for (int id : ids)
      f.connect(f.endpoint_vertex(id), f.switch_vertex(s), LinkKind::HostLeaf, d.host_bandwidth, cables_.host, false);
    f.finalize();
    return f;
  }

  FabricSize size_of(const FabricDemand& d) const override {
    if (d.endpoints() > capacity()) (void)build(d);  // throws its ValueError before it allocates anything
    FabricSize z;
    z.endpoints = d.endpoints();
    z.switches = z.leaves = 1;
    z.links = d.endpoints();
    return z;
  }

  long long capacity() const override { return sw_.ports - spare_; }

  std::string summary() const override {
    return "one " + std::to_string(sw_.ports) + "-port " + sw_.name + " switch" +
           (spare_ > 0 ? " (" + std::to_string(spare_) + " ports spare)" : "");
  }

private:
  hw::SwitchSpec sw_;
  CableLatencies cables_;
  int spare_;
};

}  // namespace

std::unique_ptr<Topology> make_single_switch(const SingleSwitchParams& p, const hw::SwitchSpec& sw,
                                             const CableLatencies& c) {
  if (p.spare_ports < 0 || p.spare_ports >= sw.ports)
    throw ValueError("spare_ports must leave at least one of the switch's " + std::to_string(sw.ports) +
                     " ports for hosts, got " + std::to_string(p.spare_ports));
  return std::make_unique<SingleSwitch>(sw, c, p.spare_ports);
}

}  // namespace ffsim::topo
