// The two-layer fat-tree (leaf-spine) generator, and the zone builder that the multi-zone and
// multi-plane generators reuse.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "topo/topology.hpp"

namespace ffsim::topo {

/// The shape of one two-layer fat-tree of radix-k switches. Each leaf has `down` host ports and
/// `up` ports, one to each of the `up` spines; a spine has k ports, so at most k leaves.
///
///            spine0      spine1   ...  spine(up-1)          (up spines, k ports each)
///             |  \  /       |              |
///       leaf0  leaf1 ... leaf(L-1)                          (L <= k leaves, each: up links up)
///       |||||  |||||     |||||                              (down host ports per leaf)
struct TwoLayerShape {
  int radix = 0;
  int down = 0;     ///< host ports per leaf
  int up = 0;       ///< uplinks per leaf (= spines)
  int leaves = 0;
  int spines = 0;
  [[nodiscard]] long long capacity() const { return static_cast<long long>(leaves) * down; }
};

/// The shape for `endpoints` hosts: radix k (even, >= 2), oversubscription r = down/up >= 1.
/// `full` builds all k leaves (the design's full size) instead of just enough for the hosts.
/// Throws ValueError for an odd or too small radix, or when the hosts exceed k * down.
[[nodiscard]] TwoLayerShape two_layer_shape(int radix, double oversubscription, long long endpoints, bool full);

/// What add_two_layer_zone adds for `hosts` host ports: its leaves and spines, a link from every
/// leaf to every spine and one per host.
[[nodiscard]] FabricSize two_layer_size(const TwoLayerShape& shape, long long hosts);

/// The switches of a zone, and the leaf ports it kept free for the caller.
struct ZoneSwitches {
  std::vector<int> leaves;          ///< switch indices
  std::vector<int> spines;          ///< switch indices
  std::vector<int> reserved_leaves; ///< one leaf switch index per reserved host port
};

/// Adds one two-layer zone to `f`: its switches and the host links of `endpoint_ids` (already
/// added to `f`), spread over the leaves: GPU-node ports in blocks of consecutive nodes, storage
/// ports and `reserved` ports (for the caller, e.g. inter-zone links) spread evenly so that every
/// leaf carries a share. With a `chassis_model`, the zone's switches are packaged in one director
/// chassis of that model and its leaf-spine links are backplane links (no cables, no optics).
ZoneSwitches add_two_layer_zone(Fabric& f, const TwoLayerShape& shape, const hw::SwitchSpec& sw,
                                const CableLatencies& cables, BytesPerSecond host_bw,
                                const std::vector<int>& endpoint_ids, int zone, int plane, const std::string& prefix,
                                int reserved = 0, const std::string& chassis_model = "");

/// The parameters of "two_layer".
struct TwoLayerParams {
  double oversubscription = 1.0;  ///< down/up ports per leaf, >= 1
  bool full = false;              ///< build all k leaves ("build": "full") rather than as needed
};

/// The "two_layer" design; ValueError for a switch radix it cannot use.
std::unique_ptr<Topology> make_two_layer(const TwoLayerParams& params, const hw::SwitchSpec& sw,
                                         const CableLatencies& cables);

/// Adds the GPU-node and storage endpoints of a demand (names "n<node>.nic<i>", "s<node>.nic<i>").
/// Returns their indices: GPU-node ports first, in node order.
std::vector<int> add_demand_endpoints(Fabric& f, const FabricDemand& d);

}  // namespace ffsim::topo
