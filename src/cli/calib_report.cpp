// Text output shared by `ffsim calibrate` and `ffsim validate`.
// SPDX-License-Identifier: Apache-2.0
#include "cli/calib_report.hpp"

#include <cmath>

#include "core/format.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

std::string calib_regime_rule(const calib::BenchModel& m) {
  if (m.llc <= 0) return "the node's CPU gives no last-level cache: every point is in the DRAM regime";
  return "working set <= 2 x " + fmt_bytes(Bytes(m.llc)) + " (twice the last-level cache of " +
         m.node.sockets.front().cpu.name + ", which then serves most of its bytes): cache regime; above: DRAM regime " +
         "(the node model takes the DRAM regime's values)";
}

std::string calib_value(double si, bool bandwidth) {
  if (std::isnan(si)) return "-";
  return bandwidth ? fmt_bandwidth(BytesPerSecond(si)) : fmt_time(Seconds(si));
}

void print_fits(std::ostream& os, const calib::Calibration& c) {
  report::Table t({"regime", "fit", "group", "points", "values", "RMS", "max"});
  calib::Regime last = calib::Regime::Cache;
  bool first = true;
  for (const auto& f : c.fits) {
    if (!first && f.regime != last) t.rule();
    first = false;
    last = f.regime;
    std::string vals;
    for (const auto& v : f.values) {
      if (!vals.empty()) vals += ", ";
      vals += v.name + " " + calib_value(v.value, v.bandwidth);
      if (v.status.rfind("not pinned", 0) == 0) vals += " (not pinned)";
      else if (v.status.rfind("an upper bound", 0) == 0) vals += " (upper bound)";
      else if (v.status.rfind("a lower bound", 0) == 0) vals += " (lower bound)";
      else if (v.status.rfind("at its floor", 0) == 0) vals += " (at its floor)";
      else if (!v.applied) vals += " (recorded)";
    }
    t.add({calib::regime_name(f.regime), f.name, f.group.empty() ? "-" : f.group, std::to_string(f.points.size()), vals,
           fmt_f(100 * f.rms, 1) + "%", fmt_f(100 * f.max_abs, 1) + "%"});
  }
  t.print(os, "  ");
}

}  // namespace ffsim::cli
