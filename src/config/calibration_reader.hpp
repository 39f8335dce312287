// Calibration files (catalog kind "calibration") read into calib::CalibrationFile and applied to the
// catalog; the machine of a node model that the fits run on (calib::BenchModel).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "calib/bench_model.hpp"
#include "calib/calibration_file.hpp"
#include "config/catalog.hpp"
#include "config/reader.hpp"

namespace ffsim::config {

/// Parses and checks a calibration document (every section, unknown keys rejected).
[[nodiscard]] calib::CalibrationFile parse_calibration(const Document& doc);
[[nodiscard]] calib::CalibrationFile load_calibration(const std::string& path);

/// Overrides every fact of `c` in `cat`, whatever its scope (apply_scoped, config/calibration_scope.hpp, applies
/// only those that hold for a command's scenarios), and checks that the node model (and the hfreduce library, when
/// overridden) still parse. Errors are ConfigErrors at the calibration file's overrides.
void apply_calibration(Catalog& cat, const calib::CalibrationFile& c);

/// `ffsim check` of a calibration catalog entry: parses it and applies it to a copy of `cat`.
void check_calibration_entry(const CatalogEntry& e, const Catalog& cat);

/// The node model `node_name` of the catalog, its CPU's cache and the collective libraries.
/// An unknown name throws ValueError with the valid names.
[[nodiscard]] calib::BenchModel make_bench_model(const Catalog& cat, const std::string& node_name);

}  // namespace ffsim::config
