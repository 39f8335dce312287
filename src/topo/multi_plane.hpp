// "multi_plane": one NIC per GPU, one two-layer fat-tree per plane (arXiv 2408.14158 Sec. IX).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "topo/topology.hpp"

namespace ffsim::topo {

/// The "multi_plane" registry factory. Parameters: "planes" (P), "oversubscription" (default 1),
/// "plane_build" ("as_needed" or "full"). NIC i of every node joins plane i mod P; the planes share
/// no switch, so only NIC ports of the same plane reach each other.
std::unique_ptr<Topology> make_multi_plane(const config::Reader& params, const hw::SwitchSpec& sw,
                                           const CableLatencies& cables, const config::Catalog& cat);

}  // namespace ffsim::topo
