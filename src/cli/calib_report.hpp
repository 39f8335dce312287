// Text output, and the --threads option, shared by `ffsim calibrate` and `ffsim validate`.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ostream>
#include <string>

#include "calib/calibrate.hpp"

namespace ffsim::report {
class JsonWriter;
}
namespace CLI {
class App;
}

namespace ffsim::cli {

/// "working set <= 32 MiB (the CPU's last-level cache): cache regime; above: DRAM regime".
[[nodiscard]] std::string calib_regime_rule(const calib::BenchModel& m);
/// "33.1 GB/s", "9.41 us".
[[nodiscard]] std::string calib_value(double si, bool bandwidth);
/// One row per fit: regime, fit, group, points, fitted values, RMS and largest relative residual.
void print_fits(std::ostream& os, const calib::Calibration& c);

struct Context;
/// What --calibration did for this command, in text: the file, the node model it was fitted to,
/// the scenarios' node models, and every value applied or skipped with the reason. Nothing
/// without --calibration. Every command that takes --calibration prints it.
void print_calibration(std::ostream& os, Context& ctx);
/// The same as the "calibration" member of a --json object (call after w.key("calibration")):
/// {"file", "name", "node", "scenario_nodes", "applied": [...], "skipped": [...]}; each value has
/// parameter, kind, name, pointer, value, scope, scope_reason and reason. null without --calibration.
void write_calibration(report::JsonWriter& w, Context& ctx);

/// --threads of calibrate and validate: the points of each evaluation of a fit simulated at once
/// (0, not given: the machine's hardware threads; fit_threads resolves it).
void add_fit_threads_option(CLI::App* sub, Context& ctx, int& threads);
[[nodiscard]] int fit_threads(int given);

}  // namespace ffsim::cli
