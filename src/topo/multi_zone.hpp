// "multi_zone": zones of two-layer fat-trees joined by inter-zone switches (Fire-Flyer 2).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "topo/topology.hpp"

namespace ffsim::topo {

/// The "multi_zone" registry factory. Parameters: "zones", "oversubscription" (default 1),
/// "zone_build" ("as_needed" or "full"), "inter_zone": {"switches", "links_per_zone"}, and
/// "zone_chassis" (optional: each zone packaged as one director chassis of that price-book name).
std::unique_ptr<Topology> make_multi_zone(const config::Reader& params, const hw::SwitchSpec& sw,
                                          const CableLatencies& cables, const config::Catalog& cat);

}  // namespace ffsim::topo
