// Measurement files written by hfreduce-bench (schema "ffsim.hfreduce-bench/1"): read and checked
// into calib::MeasurementFile.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "calib/measurement.hpp"
#include "config/reader.hpp"

namespace ffsim::config {

/// True if the document is a measurement file (it declares the schema).
[[nodiscard]] bool is_measurement(const Reader& root);
/// Parses and checks a measurement file: unknown keys, missing fields, negative or non-finite
/// times, times out of order (min <= median <= max), rates inconsistent with bytes and time
/// (algbw_Bps must equal bytes / median within 1e-4), unknown stages. Errors are ConfigErrors.
[[nodiscard]] calib::MeasurementFile parse_measurement(const Document& doc);
[[nodiscard]] calib::MeasurementFile load_measurement(const std::string& path);

}  // namespace ffsim::config
