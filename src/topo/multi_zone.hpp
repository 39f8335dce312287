// "multi_zone": zones of two-layer fat-trees joined by inter-zone switches (Fire-Flyer 2).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "topo/topology.hpp"

namespace ffsim::topo {

/// The parameters of "multi_zone" (JSON: "zones", "oversubscription", "zone_build",
/// "inter_zone": {"switches", "links_per_zone"}, "zone_chassis").
struct MultiZoneParams {
  int zones = 1;
  double oversubscription = 1.0;
  bool full = false;              ///< build every zone at its full size ("zone_build": "full")
  int inter_zone_switches = 0;
  int links_per_zone = 0;         ///< from each inter-zone switch's ports into each zone
  std::string chassis;            ///< each zone packaged as one director chassis of this price-book name, or ""
};

/// The "multi_zone" design; ValueError for a radix it cannot use.
std::unique_ptr<Topology> make_multi_zone(const MultiZoneParams& params, const hw::SwitchSpec& sw,
                                          const CableLatencies& cables);

}  // namespace ffsim::topo
