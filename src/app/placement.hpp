// Placements for the commands (coll/placement.hpp): the CLI calls services, not coll.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "coll/placement.hpp"

namespace ffsim::app {

using coll::parse_placement;
using coll::Placement;

}  // namespace ffsim::app
