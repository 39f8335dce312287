// "multi_plane": one NIC per GPU, one two-layer fat-tree per plane (arXiv 2408.14158 Sec. IX).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "topo/topology.hpp"

namespace ffsim::topo {

/// The parameters of "multi_plane" (JSON: "planes", "oversubscription", "plane_build").
struct MultiPlaneParams {
  int planes = 1;                 ///< P
  double oversubscription = 1.0;  ///< of each plane's two-layer tree
  bool full = false;              ///< build every plane at its full size ("plane_build": "full")
};

/// The "multi_plane" design: NIC i of every node joins plane i mod P; the planes share no switch,
/// so only NIC ports of the same plane reach each other. ValueError for a radix it cannot use.
std::unique_ptr<Topology> make_multi_plane(const MultiPlaneParams& params, const hw::SwitchSpec& sw,
                                           const CableLatencies& cables);

}  // namespace ffsim::topo
