// Where a calibration holds. Each calibrated value has a scope: "machine" (a fact of the measured
// machine: it holds only where a scenario's node model is the measured node model or extends it)
// or "library" (a software cost of the library itself, which transfers to other machines; the
// calibration file records why). `--calibration` applies only the values that hold for the
// command's scenarios and records every value it applied or skipped, with the reason.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "calib/calibration_file.hpp"
#include "config/catalog.hpp"

namespace ffsim::calib {

inline constexpr const char* kScopeMachine = "machine";
inline constexpr const char* kScopeLibrary = "library";

/// The node models a machine-scoped value of node model `node` holds for: `node` and every node
/// model that extends it (directly or through others), sorted by name.
[[nodiscard]] std::vector<std::string> node_family(const config::Catalog& cat, const std::string& node);

/// One override of a calibration file and what a command did with it.
struct ScopedOverride {
  Override o;
  bool applied = false;
  std::string reason;  ///< why it was applied or skipped
};

/// What `--calibration` did for one command.
struct CalibrationUse {
  std::string file;  ///< the calibration file
  std::string name;  ///< its name
  std::string node;  ///< the node model it was fitted to
  /// The node models of the command's scenarios, in order, without repeats (empty: the command
  /// runs no scenario, e.g. `ffsim models`).
  std::vector<std::string> targets;
  std::vector<std::string> family;  ///< node_family of `node`
  std::vector<ScopedOverride> values;
  /// Set by commands that take the file but apply none of its values (validate refits them).
  std::string note;
  [[nodiscard]] std::size_t applied() const;
};

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
[[nodiscard]] CalibrationUse apply_scoped(config::Catalog& cat, const CalibrationFile& c,
                                          const std::vector<std::string>& targets, bool have_scenarios);

/// The node model a scenario file names at /cluster/node ("" if it cannot be read: the command's
/// own loading then reports why).
[[nodiscard]] std::string scenario_node(const std::string& path);

}  // namespace ffsim::calib
