// Text output shared by `ffsim calibrate` and `ffsim validate`.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ostream>
#include <string>

#include "calib/calibrate.hpp"

namespace ffsim::cli {

/// "working set <= 32 MiB (the CPU's last-level cache): cache regime; above: DRAM regime".
[[nodiscard]] std::string calib_regime_rule(const calib::BenchModel& m);
/// "33.1 GB/s", "9.41 us".
[[nodiscard]] std::string calib_value(double si, bool bandwidth);
/// One row per fit: regime, fit, group, points, fitted values, RMS and largest relative residual.
void print_fits(std::ostream& os, const calib::Calibration& c);

}  // namespace ffsim::cli
