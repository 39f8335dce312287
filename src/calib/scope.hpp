// Where a calibration holds. Each calibrated value has a scope: "machine" (a fact of the measured
// machine: it holds only where a scenario's node model is the measured node model or extends it)
// or "library" (a software cost of the library itself, which transfers to other machines; the
// calibration file records why). `--calibration` applies only the values that hold for the
// command's scenarios and records every value it applied or skipped, with the reason
// (config/calibration_scope.hpp applies them to the catalog).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "calib/calibration_file.hpp"

namespace ffsim::calib {

inline constexpr const char* kScopeMachine = "machine";
inline constexpr const char* kScopeLibrary = "library";

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
  std::vector<std::string> family;  ///< config::node_family of `node`
  std::vector<ScopedOverride> values;
  /// Set by commands that take the file but apply none of its values (validate refits them).
  std::string note;
  [[nodiscard]] std::size_t applied() const;
};

}  // namespace ffsim::calib
