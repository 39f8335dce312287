// Calibration files (catalog kind "calibration", written by `ffsim calibrate`): which node model
// they calibrate, what was fitted from which measurements, and the facts they override, as typed
// overrides; config/calibration_reader.hpp reads them and applies them to the catalog.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "calib/calibrate.hpp"

namespace ffsim::calib {

inline constexpr const char* kCalibration = "calibration";
/// The catalog kinds an override names (config/hw_reader.hpp's kNode, kGpu, kCpu, kNic: the reader
/// checks that they agree; models/libraries/*.json's kind).
inline constexpr const char* kOverrideNode = "node";
inline constexpr const char* kOverrideGpu = "gpu";
inline constexpr const char* kOverrideCpu = "cpu";
inline constexpr const char* kOverrideNic = "nic";
inline constexpr const char* kOverrideLibrary = "collective_library";

/// One fact a calibration sets: the catalog entry (kind, name), the fact's JSON Pointer in it,
/// its new value (a unit string) and where the value came from.
struct Override {
  std::string kind, name, pointer, value, source;
  std::string param;  ///< the fitted parameter it carries (param_name: "dram_bandwidth", ...)
  /// "machine" (a fact of the measured machine) or "library" (a software cost that transfers to
  /// other machines): see calib/scope.hpp. `scope_reason` says why.
  std::string scope, scope_reason;
  std::string at;  ///< JSON Pointer of this override in the calibration file (for messages)
};

struct CalibrationFile {
  std::string file;
  std::string name;
  std::string node;                   ///< the node model it calibrates
  std::vector<std::string> machines;  ///< machine names of its measurement files
  std::vector<std::string> measurements;  ///< the measurement files
  std::vector<Override> overrides;
};

/// A fitted value as a unit string the catalog reads back: "33.12345GB/s", "9.412345us".
[[nodiscard]] std::string unit_string(double si, bool bandwidth);

/// The facts the fitted node values (node_params) override, each with its source: the calibration
/// file `file`, the fit, its points' measurement files, its residual and, for a value the points do
/// not pin down, its status (a bound, or not pinned): the node model then runs with exactly the values
/// the fits ran with. Parameters no fit touched keep their published values.
[[nodiscard]] std::vector<Override> node_overrides(const BenchModel& m, const Calibration& c, const std::string& file);

/// The scope of a fitted parameter and why (see docs/calibration.md, "Scope"): every parameter
/// calibration fits today is a fact of the measured machine.
[[nodiscard]] std::pair<std::string, std::string> scope_of(Param p);

}  // namespace ffsim::calib
