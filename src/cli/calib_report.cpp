// Text output shared by `ffsim calibrate` and `ffsim validate`.
// SPDX-License-Identifier: Apache-2.0
#include "cli/calib_report.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>

#include "calib/scope.hpp"
#include "cli/context.hpp"
#include "core/format.hpp"
#include "core/parallel.hpp"
#include "core/spell.hpp"
#include "core/unit_parse.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

std::string calib_regime_rule(const calib::BenchModel& m) {
  if (m.llc <= 0) return "the node's CPU gives no last-level cache: every point is in the DRAM regime";
  return "working set <= 2 x " + fmt_bytes(Bytes(m.llc)) + " (twice the last-level cache of " +
         m.node.sockets.front().cpu.name + "): cache regime; above: DRAM regime " +
         "(the node model takes the DRAM regime's values)";
}

std::string calib_value(double si, bool bandwidth) {
  if (std::isnan(si)) return "-";
  return bandwidth ? fmt_bandwidth(BytesPerSecond(si)) : fmt_time(Seconds(si));
}

void print_fits(std::ostream& os, const calib::Calibration& c) {
  report::Table t({"regime", "fit", "group", "points", "values", "RMS", "max"});
  calib::Regime last = calib::Regime::Cache;
  bool first = true, last_levels = false;
  for (const auto& f : c.fits) {
    if (!first && (f.regime != last || f.levels != last_levels)) t.rule();
    first = false;
    last = f.regime;
    last_levels = f.levels;
    std::string vals;
    for (const auto& v : f.values) {
      if (!vals.empty()) vals += ", ";
      vals += v.name + " " + (v.number ? (std::isnan(v.value) ? std::string("-") : fmt_g(v.value, 4)) : calib_value(v.value, v.bandwidth));
      if (v.status.rfind("not pinned", 0) == 0) vals += " (not pinned)";
      else if (v.status.rfind("an upper bound", 0) == 0) vals += " (upper bound)";
      else if (v.status.rfind("a lower bound", 0) == 0) vals += " (lower bound)";
      else if (v.status.rfind("at its floor", 0) == 0) vals += " (at its floor)";
      else if (!v.applied) vals += " (recorded)";
    }
    t.add({f.levels ? "levels" : calib::regime_name(f.regime), f.name, f.group.empty() ? "-" : f.group, std::to_string(f.points.size()), vals,
           fmt_f(100 * f.rms, 1) + "%", fmt_f(100 * f.max_abs, 1) + "%"});
  }
  t.print(os, "  ");
}

namespace {

// "38.3 GB/s" from the override's unit string ("38.31234GB/s"), as the other outputs print it.
std::string shown(const calib::Override& o) {
  for (Dimension d : {Dimension::Bandwidth, Dimension::Time}) {
    try {
      const double si = parse_quantity_si(o.value, d);
      return calib_value(si, d == Dimension::Bandwidth);
    } catch (const ValueError&) {
    }
  }
  return o.value;
}

}  // namespace

void print_calibration(std::ostream& os, Context& ctx) {
  const calib::CalibrationUse* u = ctx.calibration_use();
  if (!u) return;
  os << "\nCalibration " << u->file << " (" << u->name << ", fitted to node model " << u->node << "): " << u->applied() << " of "
     << u->values.size() << " values applied";
  if (!u->note.empty()) os << " (" << u->note << ")";
  else if (!u->targets.empty()) os << " to node model " << join(u->targets, ", ");
  os << "\n";
  if (!u->note.empty() || u->values.empty()) return;
  report::Table t({"", "parameter", "value", "scope", "fact", "why"});
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& v : u->values) {
      if (v.applied != (pass == 0)) continue;
      t.add({v.applied ? "applied" : "skipped", v.o.param, shown(v.o), v.o.scope, v.o.kind + " " + v.o.name + " " + v.o.pointer,
             v.reason});
    }
  t.print(os, "  ");
  // The reasons for the scopes, once each.
  std::vector<std::string> seen;
  for (const auto& v : u->values) {
    const std::string line = v.o.param + " (" + v.o.scope + "): " + v.o.scope_reason;
    if (std::find(seen.begin(), seen.end(), line) == seen.end()) seen.push_back(line);
  }
  os << "  scopes, as the calibration file records them:\n";
  for (const auto& l : seen) os << "    " << l << "\n";
}

void write_calibration(report::JsonWriter& w, Context& ctx) {
  const calib::CalibrationUse* u = ctx.calibration_use();
  if (!u) {
    w.null();
    return;
  }
  w.begin_object();
  w.field("file", u->file);
  w.field("name", u->name);
  w.field("node", u->node);
  w.key("scenario_nodes");
  w.begin_array();
  for (const auto& t : u->targets) w.value(t);
  w.end_array();
  if (!u->note.empty()) w.field("note", u->note);
  for (int pass = 0; pass < 2; ++pass) {
    w.key(pass == 0 ? "applied" : "skipped");
    w.begin_array();
    for (const auto& v : u->values) {
      if (v.applied != (pass == 0)) continue;
      w.begin_object();
      w.field("parameter", v.o.param);
      w.field("kind", v.o.kind);
      w.field("name", v.o.name);
      w.field("pointer", v.o.pointer);
      w.field("value", v.o.value);
      w.field("scope", v.o.scope);
      w.field("scope_reason", v.o.scope_reason);
      w.field("reason", v.reason);
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
}

void add_fit_threads_option(CLI::App* sub, Context& ctx, int& threads) {
  ctx.expects(
      sub->add_option("--threads", threads,
                      "Simulate each evaluation's measured points on this many threads at once (the fits' fluid "
                      "engine; default: the machine's hardware threads; the results do not depend on it)")
          ->check(int_in(1, 4096)),
      "an integer in [1, 4096]");
}

int fit_threads(int given) { return given > 0 ? given : hardware_threads(); }

}  // namespace ffsim::cli
