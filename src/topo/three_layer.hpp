// "three_layer": a three-layer fat-tree of pods (leaves + spines) under a core tier.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "topo/topology.hpp"

namespace ffsim::topo {

/// How many core switches a three-layer fat-tree of P pods gets.
enum class CoreSizing {
  Exact,           ///< just enough core ports for the spines' uplinks: ceil(P * k/4)
  PowerOfTwoPods,  ///< provisioned for the next power of two of pods: 2^ceil(log2 P) * k/4
};

/// The shape of a three-layer fat-tree of radix-k switches (non-blocking: k/2 down, k/2 up).
struct ThreeLayerShape {
  int radix = 0;
  int pods = 0;             ///< ceil(endpoints / (k^2/4))
  int leaves_per_pod = 0;   ///< k/2
  int spines_per_pod = 0;   ///< k/2
  int core = 0;             ///< by the sizing rule; 0 with a single pod
  [[nodiscard]] int switches() const { return pods * (leaves_per_pod + spines_per_pod) + core; }
};

/// Throws ValueError for an odd radix, or more endpoints than the rule's core can serve
/// (k^3/4 endpoints for k pods).
[[nodiscard]] ThreeLayerShape three_layer_shape(int radix, long long endpoints, CoreSizing sizing);

/// The parameters of "three_layer" (JSON: "core_sizing": "exact" or "power_of_two_pods").
struct ThreeLayerParams {
  CoreSizing core_sizing = CoreSizing::Exact;
};

/// The "three_layer" design; ValueError for a radix it cannot use.
std::unique_ptr<Topology> make_three_layer(const ThreeLayerParams& params, const hw::SwitchSpec& sw,
                                           const CableLatencies& cables);

}  // namespace ffsim::topo
