// Where a calibration holds (calib/scope.hpp), against the catalog: the node family of the measured
// node model, and `--calibration` applying the values that hold for a command's scenarios.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "calib/scope.hpp"
#include "config/catalog.hpp"

namespace ffsim::config {

/// The node models a machine-scoped value of node model `node` holds for: `node` and every node
/// model that extends it (directly or through others), sorted by name.
[[nodiscard]] std::vector<std::string> node_family(const Catalog& cat, const std::string& node);

/// Applies to `cat` the overrides of `c` that hold for scenarios on the node models `targets`
/// (`have_scenarios` false: a command without a scenario, such as `ffsim models`). Rules:
///  - library scope: always applied;
///  - machine scope: applied when some target is in the node family of c.node (node_family); a fact
///    of an entry that other node models use too (a collective library, a CPU model shared with
///    another node) only when every target is; without scenarios, facts of entries only the family
///    uses are applied (they change nothing else) and the others skipped;
///  - a node fact also goes to the family's node models that inherit the measured node's value.
/// The calibrated models must still be valid (as apply_calibration checks). Returns every override
/// with what was done and why.
[[nodiscard]] calib::CalibrationUse apply_scoped(Catalog& cat, const calib::CalibrationFile& c,
                                                 const std::vector<std::string>& targets, bool have_scenarios);

/// The node model a scenario file names at /cluster/node ("" if it cannot be read: the command's
/// own loading then reports why).
[[nodiscard]] std::string scenario_node(const std::string& path);

}  // namespace ffsim::config
