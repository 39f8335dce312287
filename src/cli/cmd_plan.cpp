// `ffsim plan <scenario...>`: the capacity plan of one or more designs side by side (counts, cost,
// power, performance, cost- and energy-performance), or a sweep of one knob with --sweep.
// SPDX-License-Identifier: Apache-2.0
#include <chrono>
#include <cmath>
#include <iostream>

#include <CLI/CLI.hpp>

#include "app/kinds.hpp"
#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "config/scenario_doc.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"
#include "plan/design.hpp"
#include "plan/sweep.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

namespace {

struct PlanArgs {
  std::vector<std::string> files;
  bool json = false;
  bool csv = false;
  std::string baseline;
  std::string precision = "tf32";
  std::string sweep;
  bool timing = false;
  bool precision_given = false;  ///< --precision on the command line (else the default)
};

constexpr double kTera = 1e12;

// JSON numbers rounded to 12 significant digits: sums of fitted prices such as 100/63 come out as
// 11850 rather than 11849.999999999998, and the output stays deterministic.
double tidy(double v) { return std::stod(fmt_g(v, 12)); }

// An amount of money: whole units with thousands separators from 100 up, else 3 significant digits.
std::string amount(double v) {
  if (std::fabs(v) >= 100) return fmt_int(std::llround(v));
  return fmt_g(v, 3);
}
std::string percent(double fraction) { return fmt_f(100.0 * fraction, 1) + "%"; }

// The precision must be one the scenario's GPU model has a rate for: a usage error naming
// --precision (the scenario is valid; the option asks for what it does not have).
void check_precision(const plan::ScenarioSpec& s, const PlanArgs& a) {
  const auto& g = s.cluster.node.gpus.front().gpu;
  if (g.compute.count(a.precision)) return;
  std::vector<std::string> have;
  for (const auto& [p, r] : g.compute) have.push_back(p);
  throw UsageError("--precision " + a.precision + (a.precision_given ? "" : " (the default)") + ": GPU model " + g.name +
                   " of " + s.file + " has no " + a.precision + " rate; " +
                   (have.empty() ? std::string("it has no compute rates at all (a device that only copies), so plan cannot rate it")
                                 : "valid: " + join(have)));
}

// Builds the scenario's fabric, with the generator's reason as a ConfigError at /fabric (as `check`).
plan::DesignPlan plan_or_fail(const plan::ScenarioSpec& s, const plan::PlanOptions& o) {
  try {
    return plan::plan_design(s, plan::build_fabric(s), o);
  } catch (const ValueError& e) {
    throw ConfigError(s.file, "/fabric", e.what());
  }
}

// ---------------------------------------------------------------- side by side

void write_design_json(report::JsonWriter& w, const plan::DesignPlan& d, const std::optional<plan::Relative>& rel,
                       Context* calibration = nullptr) {
  const auto& c = d.counts;
  w.begin_object();
  w.field("name", d.name);
  w.field("file", d.file);
  w.field("topology", d.topology);
  w.field("summary", d.summary);
  w.field("node", d.node_model);
  w.field("gpu", d.gpu_model);
  w.field("switch", d.switch_model);
  w.field("gpu_nodes", d.gpu_nodes);
  w.field("gpus_per_node", d.gpus_per_node);
  w.field("gpus", d.gpus);
  w.field("storage_nodes", d.storage_nodes);
  w.field("endpoints", c.endpoints);
  w.field("access_points", c.access_points);
  w.field("layers", c.layers);
  w.field("zones", c.zones);
  w.field("planes", c.planes);
  w.key("switches");
  w.begin_object();
  w.field("total", c.switches);
  w.key("by_tier");
  w.begin_object();
  for (const auto& [t, n] : c.switches_by_tier) w.field(t, n);
  w.end_object();
  w.field("in_chassis", c.switches_in_chassis);
  w.key("standalone_by_model");
  w.begin_object();
  for (const auto& [m, n] : c.standalone_switches_by_model) w.field(m, n);
  w.end_object();
  w.end_object();
  w.key("chassis");
  w.begin_object();
  w.field("total", c.chassis);
  w.key("by_model");
  w.begin_object();
  for (const auto& [m, n] : c.chassis_by_model) w.field(m, n);
  w.end_object();
  w.end_object();
  w.key("cables");
  w.begin_object();
  w.field("total", c.cables);
  w.key("by_kind");
  w.begin_object();
  for (const auto& [k, n] : c.cables_by_kind) w.field(k, n);
  w.end_object();
  w.field("backplane_links", c.backplane_links);
  w.end_object();
  w.field("optics", c.optics);
  w.key("ports");
  w.begin_object();
  w.field("used", c.used_ports);
  w.field("installed", c.total_ports);
  w.end_object();
  w.key("cost");
  if (d.cost) {
    const auto& k = *d.cost;
    w.begin_object();
    w.field("unit", k.unit);
    w.field("price_book", k.price_book);
    w.key("fitted_prices");  // prices solved from a target ("[fit]"): those costs match it by construction
    w.begin_array();
    for (const auto& x : k.fitted) w.value(x);
    w.end_array();
    w.field("switches", tidy(k.switches));
    w.field("chassis", tidy(k.chassis));
    w.field("cables", tidy(k.cables));
    w.field("optics", tidy(k.optics));
    w.field("network", tidy(k.network()));
    w.field("gpu_node", tidy(k.gpu_node_price));
    w.field("gpu_nodes", tidy(k.gpu_nodes));
    w.field("storage_nodes", tidy(k.storage_nodes));
    w.field("servers", tidy(k.servers()));
    w.field("total", tidy(k.total()));
    w.end_object();
  } else {
    w.null();
  }
  auto opt_field = [&](const char* key, const std::optional<double>& v) {
    w.key(key);
    if (v) w.value(tidy(*v));
    else w.null();
  };
  auto opt_watts = [&](const char* key, const std::optional<Watts>& v) {
    w.key(key);
    if (v) w.value(tidy(v->si()));
    else w.null();
  };
  opt_watts("power_w", d.power.total());
  opt_watts("power_per_gpu_w", d.power_per_gpu());
  w.key("power");
  w.begin_object();
  opt_watts("gpu_nodes_w", d.power.gpu_nodes);
  opt_watts("storage_nodes_w", d.power.storage_nodes);
  w.field("switches_w", tidy(d.power.switches.si()));
  w.end_object();
  opt_watts("node_power_w", d.node_power);
  w.field("precision", d.precision);
  w.field("gemm_per_gpu_flops", tidy(d.gemm_per_gpu.si()));
  w.field("gemm_basis", d.gemm_measured ? "measured" : "peak");
  w.field("perf_flops", tidy(d.performance().si()));
  opt_field("cost_performance", d.cost_performance());
  opt_field("node_cost_performance", d.node_cost_performance());
  opt_field("energy_performance", d.energy_performance());
  opt_field("node_energy_performance", d.node_energy_performance());
  w.key("vs_baseline");
  if (rel) {
    w.begin_object();
    w.field("baseline", rel->baseline);
    w.field("node_performance", tidy(rel->node_performance));
    opt_field("node_price", rel->node_price);
    opt_field("node_cost_performance", rel->node_cost_performance);
    opt_field("node_power_saving", rel->node_power_saving);
    opt_field("node_energy_performance", rel->node_energy_performance);
    w.field("performance", tidy(rel->performance));
    opt_field("cost", rel->cost);
    opt_field("cost_performance", rel->cost_performance);
    opt_field("power", rel->power);
    opt_field("energy_performance", rel->energy_performance);
    w.end_object();
  } else {
    w.null();
  }
  if (calibration && calibration->calibration_use()) {  // what --calibration applied and skipped (calib_report.hpp)
    w.key("calibration");
    write_calibration(w, *calibration);
  }
  w.end_object();
}

// How cells are written: for people (thousands separators, units, rounding) or, for CSV, as plain
// numbers in the unit named in the row label.
struct Cells {
  bool raw = false;
  [[nodiscard]] std::string count(int v) const { return raw ? std::to_string(v) : fmt_int(v); }
  [[nodiscard]] std::string money(double v) const { return raw ? fmt_g(tidy(v), 12) : amount(v); }
  [[nodiscard]] std::string power(const std::optional<Watts>& w) const {
    if (!w) return "-";
    return raw ? fmt_g(tidy(w->si()), 12) : fmt_power(*w);
  }
  [[nodiscard]] std::string flops(FlopsPerSecond f) const {
    return raw ? fmt_g(tidy(f.si() / kTera), 12) : fmt_flop_rate(f);
  }
  [[nodiscard]] std::string fraction(const std::optional<double>& v) const {
    if (!v) return "-";
    return raw ? fmt_g(tidy(*v), 12) : percent(*v);
  }
  [[nodiscard]] std::string ratio(const std::optional<double>& v) const {
    if (!v) return "-";
    return raw ? fmt_g(tidy(*v), 12) : fmt_f(*v, 2);
  }
  [[nodiscard]] std::string figure(const std::optional<double>& v) const {
    if (!v) return "-";
    return raw ? fmt_g(tidy(*v), 12) : fmt_g(*v, 4);
  }
  [[nodiscard]] std::string unit(const char* u) const { return raw ? std::string(" (") + u + ")" : ""; }
};

report::Table side_by_side(const std::vector<plan::DesignPlan>& ds, const std::vector<std::optional<plan::Relative>>& rel,
                           const std::string& baseline, const Cells& f) {
  std::vector<std::string> header{"item"};
  for (const auto& d : ds) header.push_back(d.name);
  report::Table t(header);
  auto row = [&](const std::string& label, const std::function<std::string(std::size_t)>& cell) {
    std::vector<std::string> r{label};
    for (std::size_t i = 0; i < ds.size(); ++i) r.push_back(cell(i));
    t.add(std::move(r));
  };
  using Get = double (*)(const plan::CostBreakdown&);
  auto cost_row = [&](const std::string& label, Get get) {
    row(label, [&](std::size_t i) { return ds[i].cost ? f.money(get(*ds[i].cost)) : std::string("-"); });
  };
  row("topology", [&](std::size_t i) { return ds[i].topology; });
  row("switch model", [&](std::size_t i) { return ds[i].switch_model; });
  row("GPU node model", [&](std::size_t i) { return ds[i].node_model; });
  row("GPU nodes", [&](std::size_t i) { return f.count(ds[i].gpu_nodes); });
  row("GPUs", [&](std::size_t i) { return f.count(ds[i].gpus); });
  row("storage nodes", [&](std::size_t i) { return f.count(ds[i].storage_nodes); });
  t.rule();
  row("endpoints (NIC ports)", [&](std::size_t i) { return f.count(ds[i].counts.endpoints); });
  row("access points", [&](std::size_t i) { return f.count(ds[i].counts.access_points); });
  row("layers", [&](std::size_t i) { return f.count(ds[i].counts.layers); });
  row("zones", [&](std::size_t i) { return f.count(ds[i].counts.zones); });
  row("planes", [&](std::size_t i) { return f.count(ds[i].counts.planes); });
  for (const char* tier : {"leaf", "spine", "core", "inter_zone"})
    row(std::string("switches: ") + tier, [&](std::size_t i) { return f.count(ds[i].counts.switches_by_tier.at(tier)); });
  row("switches: total", [&](std::size_t i) { return f.count(ds[i].counts.switches); });
  row("director chassis", [&](std::size_t i) { return f.count(ds[i].counts.chassis); });
  row("switches in chassis", [&](std::size_t i) { return f.count(ds[i].counts.switches_in_chassis); });
  for (const char* kind : {"host_leaf", "leaf_spine", "spine_core", "inter_zone"})
    row(std::string("cables: ") + kind, [&](std::size_t i) { return f.count(ds[i].counts.cables_by_kind.at(kind)); });
  row("cables: total", [&](std::size_t i) { return f.count(ds[i].counts.cables); });
  row("backplane links", [&](std::size_t i) { return f.count(ds[i].counts.backplane_links); });
  row("optics (transceivers)", [&](std::size_t i) { return f.count(ds[i].counts.optics); });
  t.rule();
  row("price book", [&](std::size_t i) { return ds[i].cost ? ds[i].cost->price_book : std::string("none"); });
  row("price unit", [&](std::size_t i) { return ds[i].cost ? ds[i].cost->unit : std::string("-"); });
  // Prices solved from a target ("[fit]" in their source, e.g. Table III's totals): the costs they
  // price reproduce that target by construction, so a reader must not take them for predictions.
  row("prices fitted to a target ([fit])", [&](std::size_t i) {
    if (!ds[i].cost) return std::string("-");
    std::vector<std::string> kinds;
    for (const auto& item : ds[i].cost->fitted) {
      const std::string kind = item.substr(0, item.find(' '));
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
    }
    return kinds.empty() ? std::string("none") : join(kinds);
  });
  cost_row("cost: switches", [](const plan::CostBreakdown& c) { return c.switches; });
  cost_row("cost: chassis", [](const plan::CostBreakdown& c) { return c.chassis; });
  cost_row("cost: cables", [](const plan::CostBreakdown& c) { return c.cables; });
  cost_row("cost: optics", [](const plan::CostBreakdown& c) { return c.optics; });
  cost_row("network cost", [](const plan::CostBreakdown& c) { return c.network(); });
  cost_row("cost: GPU nodes", [](const plan::CostBreakdown& c) { return c.gpu_nodes; });
  cost_row("cost: storage nodes", [](const plan::CostBreakdown& c) { return c.storage_nodes; });
  cost_row("server cost", [](const plan::CostBreakdown& c) { return c.servers(); });
  cost_row("total cost", [](const plan::CostBreakdown& c) { return c.total(); });
  t.rule();
  const std::string w = f.unit("W");
  row("power: GPU nodes" + w, [&](std::size_t i) { return f.power(ds[i].power.gpu_nodes); });
  row("power: storage nodes" + w, [&](std::size_t i) { return f.power(ds[i].power.storage_nodes); });
  row("power: switches" + w, [&](std::size_t i) { return f.power(ds[i].power.switches); });
  row("power: total" + w, [&](std::size_t i) { return f.power(ds[i].power.total()); });
  row("power per GPU" + w, [&](std::size_t i) { return f.power(ds[i].power_per_gpu()); });
  t.rule();
  const std::string p = ds.front().precision;
  const std::string tf = f.unit("TFLOPS");
  row(p + " GEMM per GPU" + tf, [&](std::size_t i) {
    return f.flops(ds[i].gemm_per_gpu) + (f.raw ? "" : ds[i].gemm_measured ? " (measured)" : " (peak)");
  });
  if (f.raw) row(p + " GEMM basis", [&](std::size_t i) { return std::string(ds[i].gemm_measured ? "measured" : "peak"); });
  row("performance (" + p + " GEMM)" + tf, [&](std::size_t i) { return f.flops(ds[i].performance()); });
  row("cost-performance (TFLOPS per price unit)", [&](std::size_t i) { return f.figure(ds[i].cost_performance()); });
  row("energy-performance (TFLOPS per kW)", [&](std::size_t i) { return f.figure(ds[i].energy_performance()); });
  if (ds.size() > 1) {
    t.rule();
    const std::string vs = " vs " + baseline;
    row("node performance" + vs, [&](std::size_t i) { return f.fraction(rel[i]->node_performance); });
    row("node price" + vs, [&](std::size_t i) { return f.fraction(rel[i]->node_price); });
    row("node cost-performance" + vs, [&](std::size_t i) { return f.ratio(rel[i]->node_cost_performance); });
    row("node energy saving" + vs, [&](std::size_t i) { return f.fraction(rel[i]->node_power_saving); });
    row("node energy-performance" + vs, [&](std::size_t i) { return f.ratio(rel[i]->node_energy_performance); });
    row("total cost" + vs, [&](std::size_t i) { return f.fraction(rel[i]->cost); });
    row("cost-performance" + vs, [&](std::size_t i) { return f.ratio(rel[i]->cost_performance); });
    row("energy-performance" + vs, [&](std::size_t i) { return f.ratio(rel[i]->energy_performance); });
  }
  return t;
}

// ---------------------------------------------------------------- sweeps

report::Table sweep_table(const std::string& knob, const std::vector<plan::SweepRow>& rows, bool with_name,
                          const std::string& name, const Cells& f) {
  std::vector<std::string> header;
  if (with_name) header.push_back("scenario");
  header.push_back(knob);
  for (const char* h : {"GPUs", "endpoints", "layers", "zones", "planes", "switches", "cables", "optics",
                        "network cost", "total cost"})
    header.emplace_back(h);
  header.push_back("power" + f.unit("W"));
  header.emplace_back("note");
  report::Table t(header);
  for (const auto& r : rows) {
    std::vector<std::string> cells;
    if (with_name) cells.push_back(name);
    cells.push_back(fmt_g(r.value, 10));
    cells.push_back(r.gpus ? f.count(r.gpus) : "-");
    if (r.plan) {
      const auto& d = *r.plan;
      const auto& c = d.counts;
      for (int v : {c.endpoints, c.layers, c.zones, c.planes, c.switches, c.cables, c.optics}) cells.push_back(f.count(v));
      cells.push_back(d.cost ? f.money(d.cost->network()) : "-");
      cells.push_back(d.cost ? f.money(d.cost->total()) : "-");
      cells.push_back(f.power(d.power.total()));
    } else {
      for (int i = 0; i < 10; ++i) cells.emplace_back("-");
    }
    cells.push_back(r.note);
    t.add(std::move(cells));
  }
  return t;
}

int run_sweep(Context& ctx, const PlanArgs& a, const plan::PlanOptions& o) {
  struct Result {
    std::string name, summary;
    plan::Knob knob;
    std::vector<plan::SweepRow> rows;
  };
  std::vector<Result> results;
  for (const auto& f : a.files) {
    const config::Document doc = config::load_scenario(f);
    const plan::ScenarioSpec base = plan::parse_scenario(doc, ctx.catalog(), /*check_fit=*/false);
    check_precision(base, a);
    plan::Knob k = plan::parse_knob(a.sweep, doc);
    auto rows = plan::sweep(doc, ctx.catalog(), k, o);
    results.push_back(Result{base.name, base.fabric.design->summary(), std::move(k), std::move(rows)});
  }
  if (a.json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "plan");
    w.key("rows");
    w.begin_array();
    for (const auto& r : results)
      for (const auto& row : r.rows) {
        w.begin_object();
        w.field("scenario", r.name);
        w.field("knob", r.knob.name);
        w.field("value", row.value);
        w.field("gpus", row.gpus);
        w.field("fits", row.fits);
        w.field("note", row.note);
        w.key("plan");
        if (row.plan) write_design_json(w, *row.plan, std::nullopt, &ctx);
        else w.null();
        w.end_object();
      }
    w.end_array();
    w.end_object();
    return kOk;
  }
  if (a.csv) {
    std::optional<report::Table> all;
    for (const auto& r : results) {
      report::Table t = sweep_table(r.knob.name, r.rows, true, r.name, Cells{true});
      if (!all) all.emplace(t.header());
      for (const auto& row : t.data()) all->add(row);
    }
    all->print_csv(std::cout);
    print_calibration(std::cerr, ctx);  // stdout is the CSV
    return kOk;
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    std::cout << (i ? "\n" : "") << "Sweep of " << r.knob.name << " (" << join(r.knob.path, ".") << ") for " << r.name
              << ": " << r.summary << "\n";
    sweep_table(r.knob.name, r.rows, false, r.name, Cells{false}).print(std::cout, "  ");
  }
  print_calibration(std::cout, ctx);
  return kOk;
}

// ---------------------------------------------------------------- ffsim sweep

void sweep_check_plan(const PlanArgs& a) {
  if (a.json || a.csv || !a.sweep.empty() || !a.baseline.empty() || a.timing)
    throw UsageError(
        std::string(a.json                ? "--json"
                    : a.csv               ? "--csv"
                    : !a.sweep.empty()    ? "--sweep"
                    : !a.baseline.empty() ? "--baseline"
                                          : "--timing") +
        ": not an option of a swept plan (the sweep writes its own --csv and --json files, plans one design "
        "per point, and writes no wall-clock times); drop it");
  if (a.files.size() != 1)
    throw UsageError("a swept plan plans the sweep's one scenario; drop the other scenario files (" +
                     join(std::vector<std::string>(a.files.begin() + 1, a.files.end())) + ")");
}

// One design's headline figures, in SI base units (prices in the book's unit; performance the
// GEMM rate of every GPU at --precision).
Record plan_record(const plan::DesignPlan& d) {
  const auto power = d.power.total();
  const double perf = d.performance().si();
  return {{"scenario", d.name},
          {"topology", d.topology},
          {"gpus", static_cast<long long>(d.gpus)},
          {"gpu_nodes", static_cast<long long>(d.gpu_nodes)},
          {"storage_nodes", static_cast<long long>(d.storage_nodes)},
          {"switches", static_cast<long long>(d.counts.switches)},
          {"chassis", static_cast<long long>(d.counts.chassis)},
          {"cables", static_cast<long long>(d.counts.cables)},
          {"optics", static_cast<long long>(d.counts.optics)},
          {"cost", d.cost ? Cell(d.cost->total()) : Cell(nullptr)},
          {"network_cost", d.cost ? Cell(d.cost->network()) : Cell(nullptr)},
          {"cost_unit", d.cost ? Cell(d.cost->unit) : Cell(nullptr)},
          {"power_W", power ? Cell(power->si()) : Cell(nullptr)},
          {"precision", d.precision},
          {"performance_flops", perf},
          {"flops_per_cost", d.cost && d.cost->total() > 0 ? Cell(perf / d.cost->total()) : Cell(nullptr)},
          {"flops_per_W", power && power->si() > 0 ? Cell(perf / power->si()) : Cell(nullptr)}};
}

std::vector<Record> sweep_plan(Context& ctx, const PlanArgs& a, const config::Document& doc) {
  sweep_check_plan(a);
  plan::PlanOptions o;
  o.precision = a.precision;
  const plan::ScenarioSpec sc = plan::parse_scenario(doc, ctx.catalog(), /*check_fit=*/false);
  check_precision(sc, a);
  return {plan_record(plan_or_fail(sc, o))};
}

// ---------------------------------------------------------------- the command

int run_plan(Context& ctx, const PlanArgs& a) {
  using Clock = std::chrono::steady_clock;
  plan::PlanOptions o;
  o.precision = a.precision;
  ctx.use_scenarios(a.files);
  if (!a.sweep.empty()) {
    if (!a.baseline.empty())
      throw UsageError("--baseline: a sweep compares no designs (it plans one scenario per value); drop --baseline or --sweep");
    if (a.timing) throw UsageError("--timing: times the side-by-side plan's phases, not a sweep; drop --timing or --sweep");
    return run_sweep(ctx, a, o);
  }

  const auto t0 = Clock::now();
  const config::Catalog& cat = ctx.catalog();
  const auto t1 = Clock::now();
  std::vector<plan::ScenarioSpec> specs;
  for (const auto& f : a.files) specs.push_back(plan::load_scenario(f, cat, /*check_fit=*/false));
  for (const auto& s : specs) check_precision(s, a);
  const auto t2 = Clock::now();
  std::vector<plan::DesignPlan> ds;
  for (const auto& s : specs) ds.push_back(plan_or_fail(s, o));
  const auto t3 = Clock::now();

  std::size_t b = ds.size() - 1;  // the reference design: the last one unless --baseline names another
  if (!a.baseline.empty() && ds.size() == 1)
    throw UsageError("--baseline: one design has nothing to compare with; give two or more scenarios");
  if (!a.baseline.empty()) {
    std::vector<std::string> names;
    for (const auto& d : ds) names.push_back(d.name);
    const auto it = std::find(names.begin(), names.end(), a.baseline);
    if (it == names.end())
      throw UsageError("--baseline: no design named \"" + a.baseline + "\"" + did_you_mean(a.baseline, names) +
                       "; designs: " + join(names));
    b = static_cast<std::size_t>(it - names.begin());
  }
  std::vector<std::optional<plan::Relative>> rel;
  for (const auto& d : ds) rel.push_back(ds.size() > 1 ? std::optional(plan::compare(d, ds[b])) : std::nullopt);

  if (a.json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "plan");
    w.key("designs");
    w.begin_array();
    for (std::size_t i = 0; i < ds.size(); ++i) write_design_json(w, ds[i], rel[i], &ctx);
    w.end_array();
    w.end_object();
  } else {
    const report::Table t = side_by_side(ds, rel, ds[b].name, Cells{a.csv});
    if (a.csv) {
      t.transposed("design").print_csv(std::cout);  // a row per design: one unit per column
      print_calibration(std::cerr, ctx);  // stdout is the CSV
    } else {
      std::cout << "Capacity plan of " << ds.size() << " design" << (ds.size() == 1 ? "" : "s");
      if (ds.size() > 1) std::cout << "; ratios against " << ds[b].name;
      std::cout << "\n";
      for (const auto& d : ds) std::cout << "  " << d.name << ": " << d.summary << "\n";
      std::cout << "\n";
      t.print(std::cout, "  ");
      print_calibration(std::cout, ctx);
    }
  }
  if (a.timing) {
    auto us = [](Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
    std::cerr << "timing_us: catalog " << fmt_f(us(t1 - t0), 1) << " parse " << fmt_f(us(t2 - t1), 1) << " plan "
              << fmt_f(us(t3 - t2), 1) << " endpoints " << ds.front().counts.endpoints << "\n";
  }
  return kOk;
}

}  // namespace

void setup_plan(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand(
      "plan", "Capacity plan: switches, cables, optics, cost, power and cost-performance of designs side by side");
  auto a = std::make_shared<PlanArgs>();
  ctx.expects(sub->add_option("scenarios", a->files, "Scenario JSON files (one column each)")->required()->check(input_file()),
              "a scenario file");
  auto* json = sub->add_flag("--json", a->json, "JSON: an array with one object per design (or per sweep value)");
  auto* csv = sub->add_flag("--csv", a->csv, "CSV of the same table");
  json->excludes(csv);
  ctx.expects(sub->add_option("--baseline", a->baseline, "The design the others are compared with (default: the last one)"),
              "the name of one of the designs");
  auto* precision = sub->add_option("--precision", a->precision, "GEMM precision that measures performance (default: tf32)")
                        ->check(one_of(app::precisions()));
  ctx.expects(precision, "one of " + join(app::precisions()));
  ctx.expects(sub->add_option("--sweep", a->sweep,
                              "Sweep one knob: NAME=START:STOP:STEP or NAME=V1,V2 (gpus, nodes, storage, or a path such as "
                              "fabric.oversubscription)"),
              "KNOB=START:STOP:STEP or KNOB=V1,V2,... (e.g. gpus=2000:32000:2000)");
  sub->add_flag("--timing", a->timing, "Print the time of each phase on stderr (for scripts/bench-plan.sh)");
  sub->callback([&ctx, a, precision] {
    a->precision_given = precision->count() > 0;
    ctx.action = [&ctx, a] { return run_plan(ctx, *a); };
    ctx.sweep = std::make_shared<SweepHook>();
    ctx.sweep->rows = [a](Context& c, const config::Document& doc, int) { return sweep_plan(c, *a, doc); };
    ctx.sweep->check = [a] { sweep_check_plan(*a); };
    ctx.sweep->columns = [] {
      std::vector<std::string> keys;
      for (const auto& kv : plan_record(plan::DesignPlan{})) keys.push_back(kv.first);
      return keys;
    };
  });
}

}  // namespace ffsim::cli
