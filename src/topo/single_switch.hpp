// "single_switch": every NIC port cabled to one switch (a rack, a lab cluster).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "topo/topology.hpp"

namespace ffsim::topo {

/// The parameters of "single_switch" (JSON: "spare_ports").
struct SingleSwitchParams {
  int spare_ports = 0;  ///< ports kept free (uplinks to come, management); the rest take hosts
};

/// The "single_switch" design: one switch of the scenario's model, each NIC port on its own port of
/// it, so any two ports are two host links and one switch apart. ValueError when the demand needs
/// more ports than the switch has free.
std::unique_ptr<Topology> make_single_switch(const SingleSwitchParams& params, const hw::SwitchSpec& sw,
                                             const CableLatencies& cables);

}  // namespace ffsim::topo
