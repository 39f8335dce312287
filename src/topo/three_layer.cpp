// "three_layer": a three-layer fat-tree of pods under a core tier.
// SPDX-License-Identifier: Apache-2.0
#include "topo/three_layer.hpp"

#include "core/error.hpp"
#include "core/format.hpp"
#include "topo/two_layer.hpp"

namespace ffsim::topo {

//                 core0 ... core(C-1)          C = ceil(P k/4) or 2^ceil(log2 P) k/4; k/2 groups
//                /     \          \            of C/(k/2) cores; spine j of every pod -> group j
//    pod 0: spines (k/2) ... pod P-1: spines   each spine: k/2 up (over its group), k/2 down
//           leaves (k/2)              leaves   each leaf: k/2 up (one per spine), k/2 hosts
//           hosts (k^2/4)             hosts
ThreeLayerShape three_layer_shape(int radix, long long endpoints, CoreSizing sizing) {
  if (radix < 4 || radix % 4 != 0)
    throw ValueError("a three-layer fat-tree needs a radix divisible by 4 (k/2 spines split into k/2 core groups), got " +
                     std::to_string(radix));
  ThreeLayerShape s;
  s.radix = radix;
  s.leaves_per_pod = radix / 2;
  s.spines_per_pod = radix / 2;
  const long long per_pod = static_cast<long long>(radix) * radix / 4;
  const long long max_pods = radix;  // a core switch has one port per pod at most in the k-ary design
  s.pods = static_cast<int>(std::max<long long>(1, (endpoints + per_pod - 1) / per_pod));
  if (s.pods > max_pods)
    throw ValueError("a three-layer fat-tree of " + std::to_string(radix) + "-port switches holds at most " +
                     fmt_int(max_pods * per_pod) + " endpoints (" + std::to_string(radix) + " pods x " + fmt_int(per_pod) +
                     "); the cluster needs " + fmt_int(endpoints));
  if (s.pods == 1) return s;
  int provisioned = s.pods;
  if (sizing == CoreSizing::PowerOfTwoPods) {
    provisioned = 1;
    while (provisioned < s.pods) provisioned *= 2;
    if (provisioned > max_pods) provisioned = static_cast<int>(max_pods);
  }
  const long long uplinks = static_cast<long long>(provisioned) * s.spines_per_pod * (radix / 2);
  const int groups = radix / 2;
  // Core ports must cover the uplinks, and the cores must split evenly into the k/2 groups.
  long long core = (uplinks + radix - 1) / radix;
  core = (core + groups - 1) / groups * groups;
  s.core = static_cast<int>(core);
  return s;
}

namespace {

class ThreeLayer final : public Topology {
public:
  ThreeLayer(const hw::SwitchSpec& sw, const CableLatencies& c, CoreSizing sizing) : sw_(sw), cables_(c), sizing_(sizing) {}

  Fabric build(const FabricDemand& d) const override {
    const ThreeLayerShape s = three_layer_shape(sw_.ports, d.endpoints(), sizing_);
    Fabric f;
    const auto ids = add_demand_endpoints(f, d);
    const long long per_pod = static_cast<long long>(s.leaves_per_pod) * (sw_.ports / 2);
    const TwoLayerShape pod_shape{sw_.ports, sw_.ports / 2, sw_.ports / 2, s.leaves_per_pod, s.spines_per_pod};
    std::vector<std::vector<int>> pod_spines;
    for (int p = 0; p < s.pods; ++p) {
      const auto first = static_cast<std::size_t>(std::min<long long>(p * per_pod, static_cast<long long>(ids.size())));
      const auto last = static_cast<std::size_t>(std::min<long long>((p + 1) * per_pod, static_cast<long long>(ids.size())));
      const std::vector<int> members(ids.begin() + static_cast<std::ptrdiff_t>(first),
                                     ids.begin() + static_cast<std::ptrdiff_t>(last));
      ZoneSwitches z = add_two_layer_zone(f, pod_shape, sw_, cables_, d.host_bandwidth, members, 0, 0,
                                          "p" + std::to_string(p) + ".");
      for (int sw : z.leaves) f.switch_at(sw).pod = p;
      for (int sw : z.spines) f.switch_at(sw).pod = p;
      pod_spines.push_back(z.spines);
    }
    if (s.core > 0) {
      std::vector<int> core;
      for (int c = 0; c < s.core; ++c)
        core.push_back(f.add_switch(Switch{"core" + std::to_string(c), Tier::Core, 0, 0, -1, sw_.ports, sw_.name, sw_.latency}));
      const int groups = sw_.ports / 2, per_group = s.core / groups, up = sw_.ports / 2;
      for (int p = 0; p < s.pods; ++p)
        for (int j = 0; j < s.spines_per_pod; ++j)
          for (int i = 0; i < up; ++i) {
            // Spine j's uplinks go round-robin over core group j, offset per pod to balance ports.
            const int c = (j % groups) * per_group + (p * up + i) % per_group;
            f.connect(f.switch_vertex(pod_spines[static_cast<std::size_t>(p)][static_cast<std::size_t>(j)]),
                      f.switch_vertex(core[static_cast<std::size_t>(c)]), LinkKind::SpineCore, sw_.port_bandwidth,
                      cables_.switch_, true);
          }
    }
    f.finalize();
    return f;
  }

  FabricSize size_of(const FabricDemand& d) const override {
    const ThreeLayerShape s = three_layer_shape(sw_.ports, d.endpoints(), sizing_);
    FabricSize z;
    z.endpoints = d.endpoints();
    z.switches = s.switches();
    z.leaves = static_cast<long long>(s.pods) * s.leaves_per_pod;
    // Hosts, every pod's leaf-spine links, and k/2 uplinks per spine to the core.
    z.links = d.endpoints() + static_cast<long long>(s.pods) * s.leaves_per_pod * s.spines_per_pod +
              (s.core > 0 ? static_cast<long long>(s.pods) * s.spines_per_pod * (sw_.ports / 2) : 0);
    return z;
  }

  long long capacity() const override {
    return static_cast<long long>(sw_.ports) * sw_.ports / 4 * sw_.ports;
  }

  std::string summary() const override {
    return std::string("three-layer fat-tree of ") + std::to_string(sw_.ports) + "-port " + sw_.name + ", core " +
           (sizing_ == CoreSizing::Exact ? "sized exactly" : "provisioned for the next power of two of pods");
  }

private:
  hw::SwitchSpec sw_;
  CableLatencies cables_;
  CoreSizing sizing_;
};

}  // namespace

std::unique_ptr<Topology> make_three_layer(const ThreeLayerParams& p, const hw::SwitchSpec& sw, const CableLatencies& c) {
  (void)three_layer_shape(sw.ports, 0, p.core_sizing);
  return std::make_unique<ThreeLayer>(sw, c, p.core_sizing);
}

}  // namespace ffsim::topo
