// `ffsim ops <scenario>`: a discrete-event simulation of the cluster's operations (jobs, failures,
// checkpoints, repairs) over hours to a year on SimGrid: goodput, GPU-hours by state and by failure
// cause, utilisation, queue waits, checkpoint overhead; --checkpoint-sweep for the best interval
// beside Young/Daly's (docs/commands/ops.md).
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <iostream>
#include <optional>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include "app/ops.hpp"
#include "cli/app.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/progress.hpp"
#include "core/unit_parse.hpp"
#include "plan/scenario.hpp"
#include "report/json_writer.hpp"
#include "report/ops_trace.hpp"
#include "report/table.hpp"
#include "report/trace.hpp"

namespace ffsim::cli {

namespace {

struct OpsArgs {
  std::string scenario;
  bool quiet = false;
  std::string jobs;
  long long seed = -1;
  std::string horizon;
  bool without_checkpoints = false;
  std::string sweep;
  int sweep_seeds = 4;
  bool json = false;
  bool csv = false;
  std::string trace;
  bool trace_checkpoints = false;
};

constexpr double kHour = 3600.0;

/// Whether `p` has a link failure process: only then do the outputs have the link-down state (so a
/// scenario without one keeps its outputs as they were).
bool has_link(const ops::OpsParams& p) {
  for (const auto& f : p.failures)
    if (f.unit == ops::FailureUnit::Link) return true;
  return false;
}

void write_gpu_s(report::JsonWriter& w, const ops::GpuSeconds& g, const ops::OpsParams& p, bool pool) {
  w.begin_object();
  w.field("useful", g.useful);
  w.field("checkpoint", g.checkpoint);
  w.field("restart", g.restart);
  w.key("lost");
  w.begin_object();
  for (std::size_t f = 0; f < p.failures.size(); ++f) w.field(p.failures[f].name, g.lost[f]);
  w.end_object();
  w.field("lost_total", g.lost_total());
  if (pool) {
    w.field("idle", g.idle);
    w.field("down", g.down);
    if (has_link(p)) w.field("link_down", g.link_down);
    w.field("total", g.total());
  }
  w.end_object();
}

void write_result_json(report::JsonWriter& w, const ops::OpsResult& r, const ops::OpsParams& p) {
  w.begin_object();
  w.field("goodput", r.goodput());
  w.field("utilisation", r.utilisation());
  w.field("checkpoint_overhead", r.gpu_s.checkpoint / (static_cast<double>(r.gpus) * r.horizon_s));
  w.key("gpu_s");
  write_gpu_s(w, r.gpu_s, p, true);
  w.key("jobs");
  w.begin_array();
  for (const auto& j : r.jobs) {
    w.begin_object();
    w.field("name", j.name);
    w.field("gpus", j.gpus);
    w.field("submitted", j.submitted);
    w.field("started", j.started);
    w.field("completed", j.completed);
    w.field("interrupted", j.interrupted);
    w.field("checkpoints", j.checkpoints);
    w.field("starts", j.waits);
    w.key("mean_wait_s");
    if (j.waits > 0)
      w.value(j.wait_s / static_cast<double>(j.waits));
    else
      w.null();
    w.field("max_wait_s", j.max_wait_s);
    w.key("gpu_s");
    write_gpu_s(w, j.gpu_s, p, false);
    w.end_object();
  }
  w.end_array();
  w.key("failures");
  w.begin_array();
  for (const auto& f : r.failures) {
    w.begin_object();
    w.field("name", f.name);
    w.field("events", f.events);
    w.field("on_down_nodes", f.on_down);
    w.field("job_runs_ended", f.jobs_hit);
    w.field("repairs", f.repairs);
    if (has_link(p)) w.field("links_down", f.links_down);
    w.end_object();
  }
  w.end_array();
  w.field("queued_at_end", r.queued_at_end);
  w.field("running_at_end", r.running_at_end);
  w.end_object();
}

std::string pct(double part, double whole) { return whole > 0 ? fmt_f(100.0 * part / whole, 2) + "%" : "-"; }
std::string gpu_h(double gpu_s) { return fmt_f(gpu_s / kHour, 1); }

void print_result(std::ostream& out, const ops::OpsResult& r, const ops::OpsParams& p) {
  const double total = static_cast<double>(r.gpus) * r.horizon_s;
  out << "  goodput " << pct(r.gpu_s.useful, total) << ", utilisation " << pct(r.gpu_s.busy(), total)
      << ", checkpoint overhead " << pct(r.gpu_s.checkpoint, total) << ", lost to failures "
      << pct(r.gpu_s.lost_total(), total) << "\n";
  report::Table t({"state", "GPU-hours", "share"});
  t.add({"useful", gpu_h(r.gpu_s.useful), pct(r.gpu_s.useful, total)});
  t.add({"checkpoint", gpu_h(r.gpu_s.checkpoint), pct(r.gpu_s.checkpoint, total)});
  t.add({"restart", gpu_h(r.gpu_s.restart), pct(r.gpu_s.restart, total)});
  for (std::size_t f = 0; f < p.failures.size(); ++f)
    t.add({"lost: " + p.failures[f].name, gpu_h(r.gpu_s.lost[f]), pct(r.gpu_s.lost[f], total)});
  t.add({"idle", gpu_h(r.gpu_s.idle), pct(r.gpu_s.idle, total)});
  t.add({"down (repair)", gpu_h(r.gpu_s.down), pct(r.gpu_s.down, total)});
  if (has_link(p)) t.add({"link down", gpu_h(r.gpu_s.link_down), pct(r.gpu_s.link_down, total)});
  t.add({"total", gpu_h(r.gpu_s.total()), pct(r.gpu_s.total(), total)});
  t.print(out, "  ");
  out << "\n";
  report::Table jt({"job", "GPUs", "submitted", "completed", "interrupted", "checkpoints", "mean wait", "max wait",
                    "useful GPU-h", "efficiency"});
  for (const auto& j : r.jobs)
    jt.add({j.name, std::to_string(j.gpus), std::to_string(j.submitted), std::to_string(j.completed),
            std::to_string(j.interrupted), std::to_string(j.checkpoints),
            j.waits > 0 ? fmt_time(Seconds(j.wait_s / static_cast<double>(j.waits))) : "-",
            fmt_time(Seconds(j.max_wait_s)), gpu_h(j.gpu_s.useful), pct(j.gpu_s.useful, j.gpu_s.busy())});
  jt.print(out, "  ");
  out << "\n";
  std::vector<std::string> fcols{"failure", "events", "on down nodes", "job runs ended", "repairs"};
  if (has_link(p)) fcols.emplace_back("links down");
  report::Table ft(fcols);
  for (const auto& f : r.failures) {
    std::vector<std::string> row{f.name, std::to_string(f.events), std::to_string(f.on_down),
                                 std::to_string(f.jobs_hit), std::to_string(f.repairs)};
    if (has_link(p)) row.push_back(std::to_string(f.links_down));
    ft.add(row);
  }
  ft.print(out, "  ");
}

// --csv: one row per (result, kind, name), every row with the same columns (docs/commands/ops.md,
// "Outputs"): the cluster ("all"), each job and each failure process of the run, and of the run
// without checkpoints; the sweep's points and its three intervals. A column that does not apply to
// a row's kind is empty. The numbers are the --json document's, value for value.
std::vector<Record> csv_records(const app::OpsReport& rep) {
  const ops::OpsParams& p = rep.params;
  const Cell none = nullptr;
  const bool link = has_link(p);  // the link-down columns
  // Every column, in order, empty; a row fills in its own.
  auto blank = [&](const std::string& result, const std::string& kind, const std::string& name) {
    Record r{{"result", result}, {"kind", kind}, {"name", name}};
    for (const char* k : {"gpus", "goodput", "utilisation", "checkpoint_overhead", "efficiency", "submitted", "started",
                          "completed", "interrupted", "checkpoints", "starts", "mean_wait_s", "max_wait_s",
                          "useful_gpu_s", "checkpoint_gpu_s", "restart_gpu_s", "lost_gpu_s"})
      r.emplace_back(k, none);
    for (const auto& f : p.failures) r.emplace_back("lost_" + f.name + "_gpu_s", none);
    for (const char* k : {"idle_gpu_s", "down_gpu_s"}) r.emplace_back(k, none);
    if (link) r.emplace_back("link_down_gpu_s", none);
    for (const char* k : {"total_gpu_s", "events", "on_down_nodes", "job_runs_ended", "repairs"})
      r.emplace_back(k, none);
    if (link) r.emplace_back("links_down", none);
    for (const char* k : {"queued_at_end", "running_at_end", "seeds", "interval_s", "checkpoint_cost_s", "mtbf_s"})
      r.emplace_back(k, none);
    return r;
  };
  auto set = [](Record& r, const std::string& k, Cell v) {
    for (auto& kv : r)
      if (kv.first == k) {
        kv.second = std::move(v);
        return;
      }
    throw std::logic_error("ops csv: no column " + k);
  };
  auto gpu_s = [&](Record& r, const ops::GpuSeconds& g) {
    set(r, "useful_gpu_s", g.useful);
    set(r, "checkpoint_gpu_s", g.checkpoint);
    set(r, "restart_gpu_s", g.restart);
    set(r, "lost_gpu_s", g.lost_total());
    for (std::size_t f = 0; f < p.failures.size(); ++f) set(r, "lost_" + p.failures[f].name + "_gpu_s", g.lost[f]);
  };
  std::vector<Record> rows;
  auto result_rows = [&](const std::string& which, const ops::OpsResult& res) {
    const double total = static_cast<double>(res.gpus) * res.horizon_s;
    Record c = blank(which, "cluster", "all");
    set(c, "gpus", res.gpus);
    set(c, "goodput", res.goodput());
    set(c, "utilisation", res.utilisation());
    set(c, "checkpoint_overhead", res.gpu_s.checkpoint / total);
    gpu_s(c, res.gpu_s);
    set(c, "idle_gpu_s", res.gpu_s.idle);
    set(c, "down_gpu_s", res.gpu_s.down);
    if (link) set(c, "link_down_gpu_s", res.gpu_s.link_down);
    set(c, "total_gpu_s", res.gpu_s.total());
    set(c, "queued_at_end", res.queued_at_end);
    set(c, "running_at_end", res.running_at_end);
    rows.push_back(std::move(c));
    for (const auto& j : res.jobs) {
      Record r = blank(which, "job", j.name);
      set(r, "gpus", static_cast<long long>(j.gpus));
      const double busy = j.gpu_s.busy();
      set(r, "efficiency", busy > 0 ? Cell(j.gpu_s.useful / busy) : none);
      set(r, "submitted", j.submitted);
      set(r, "started", j.started);
      set(r, "completed", j.completed);
      set(r, "interrupted", j.interrupted);
      set(r, "checkpoints", j.checkpoints);
      set(r, "starts", j.waits);
      set(r, "mean_wait_s", j.waits > 0 ? Cell(j.wait_s / static_cast<double>(j.waits)) : none);
      set(r, "max_wait_s", j.max_wait_s);
      gpu_s(r, j.gpu_s);
      rows.push_back(std::move(r));
    }
    for (std::size_t i = 0; i < res.failures.size(); ++i) {
      const auto& f = res.failures[i];
      Record r = blank(which, "failure", f.name);
      set(r, "lost_gpu_s", res.gpu_s.lost[i]);  // what this process cost the whole cluster
      set(r, "events", f.events);
      set(r, "on_down_nodes", f.on_down);
      set(r, "job_runs_ended", f.jobs_hit);
      set(r, "repairs", f.repairs);
      if (link) set(r, "links_down", f.links_down);
      rows.push_back(std::move(r));
    }
  };
  result_rows("with_checkpoints", rep.result);
  if (rep.without_checkpoints) result_rows("without_checkpoints", *rep.without_checkpoints);
  if (rep.sweep) {
    const auto& s = *rep.sweep;
    for (const auto& pt : s.points) {
      Record r = blank("checkpoint_sweep", "sweep_point", s.job);
      set(r, "seeds", static_cast<long long>(s.seeds));
      set(r, "interval_s", pt.interval_s);
      set(r, "efficiency", pt.efficiency);
      rows.push_back(std::move(r));
    }
    for (const char* kind : {"best", "fit_best", "young_daly"}) {
      Record r = blank("checkpoint_sweep", kind, s.job);
      set(r, "seeds", static_cast<long long>(s.seeds));
      const std::string k = kind;
      set(r, "interval_s",
          k == "best"         ? Cell(s.best_s)
          : k == "young_daly" ? Cell(s.young_daly_s)
          : s.fit_best_s > 0  ? Cell(s.fit_best_s)
                              : none);
      set(r, "checkpoint_cost_s", s.checkpoint_cost_s);
      set(r, "mtbf_s", s.mtbf_s);
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

app::OpsOptions ops_options(const OpsArgs& a);

// `ffsim sweep --command ops`: one row for the whole cluster ("all") and one per entry of the job
// mix, with GPU-seconds by state. The options that add sections of their own (--json,
// --without-checkpoints, --checkpoint-sweep) are not options of a swept run: sweep the checkpoint
// interval's key instead (e.g. --set /ops/jobs/0/checkpoint/interval=1h,2h).
void check_swept_ops(const OpsArgs& a) {
  const char* option = a.json                  ? "--json"
                       : a.csv                 ? "--csv"
                       : !a.trace.empty()      ? "--trace"
                       : a.trace_checkpoints   ? "--trace-checkpoints"
                       : a.without_checkpoints ? "--without-checkpoints"
                       : !a.sweep.empty()      ? "--checkpoint-sweep"
                                               : nullptr;
  if (option)
    throw UsageError(std::string(option) +
                     ": not an option of a swept ops run (one row per job and one for the cluster); drop it, and "
                     "sweep the scenario's keys instead (e.g. --set /ops/horizon=30d,90d)");
  (void)ops_options(a);
}

Record ops_record(const std::string& scenario, const std::string& row, long long gpus, double goodput,
                  std::optional<double> utilisation, const ops::GpuSeconds& g, long long completed,
                  long long interrupted, long long checkpoints) {
  return {{"scenario", scenario},
          {"row", row},
          {"gpus", gpus},
          {"goodput", goodput},
          {"utilisation", utilisation ? Cell(*utilisation) : Cell(nullptr)},
          {"useful_gpu_s", g.useful},
          {"checkpoint_gpu_s", g.checkpoint},
          {"restart_gpu_s", g.restart},
          {"lost_gpu_s", g.lost_total()},
          {"completed", completed},
          {"interrupted", interrupted},
          {"checkpoints", checkpoints}};
}

std::vector<Record> sweep_ops(Context& ctx, const OpsArgs& a, const config::Document& doc) {
  check_swept_ops(a);
  const plan::ScenarioSpec sc = plan::parse_scenario(doc, ctx.catalog());
  const app::OpsReport r = app::run_ops(sc, ctx.catalog(), ops_options(a));
  const ops::OpsResult& res = r.result;
  long long completed = 0, interrupted = 0, checkpoints = 0;
  for (const auto& j : res.jobs) {
    completed += j.completed;
    interrupted += j.interrupted;
    checkpoints += j.checkpoints;
  }
  std::vector<Record> recs{ops_record(r.scenario, "all", res.gpus, res.goodput(), res.utilisation(), res.gpu_s,
                                      completed, interrupted, checkpoints)};
  for (const auto& j : res.jobs) {
    // A job's goodput is its useful share of the GPU-seconds it held (the text table's efficiency).
    const double busy = j.gpu_s.busy();
    recs.push_back(ops_record(r.scenario, j.name, j.gpus, busy > 0 ? j.gpu_s.useful / busy : 0.0, std::nullopt, j.gpu_s,
                              j.completed, j.interrupted, j.checkpoints));
  }
  return recs;
}

app::OpsOptions ops_options(const OpsArgs& a) {
  app::OpsOptions opt;
  opt.jobs_file = a.jobs;
  if (a.seed >= 0) opt.seed = static_cast<std::uint64_t>(a.seed);
  if (!a.horizon.empty()) {
    double h = 0;
    try {
      h = parse_time(a.horizon).si();
    } catch (const ValueError& e) {
      throw UsageError(std::string("--horizon: ") + e.what() + " (e.g. 30d, 8760h)");
    }
    if (!(h > 0)) throw UsageError("--horizon must be positive");
    opt.horizon_s = h;
  }
  opt.without_checkpoints = a.without_checkpoints;
  opt.sweep_job = a.sweep;
  opt.sweep_seeds = a.sweep_seeds;
  if (a.trace_checkpoints && a.trace.empty())
    throw UsageError(
        "--trace-checkpoints: adds the checkpoints to the --trace timeline; without --trace there is "
        "none (add --trace FILE)");
  opt.timeline = !a.trace.empty();
  return opt;
}

int run_ops(Context& ctx, const OpsArgs& a) {
  const app::OpsOptions opt = ops_options(a);
  if (!a.trace.empty()) check_output_path("--trace", a.trace, {a.scenario, a.jobs, ctx.calibration});
  ctx.use_scenarios({a.scenario});
  const plan::ScenarioSpec sc = plan::load_scenario(a.scenario, ctx.catalog());
  const app::OpsReport r = [&] {
    progress::Meter meter(!a.quiet && ::isatty(STDERR_FILENO) != 0, "simulating operations", std::cerr);
    return app::run_ops(sc, ctx.catalog(), opt);
  }();
  const ops::OpsParams& p = r.params;
  if (!a.trace.empty()) {
    const std::string title =
        "ffsim ops " + r.scenario + ", seed " + std::to_string(p.seed) + ", " + fmt_g(p.horizon_s / 86400.0, 6) + " d";
    const sched::Trace t = report::ops_trace(p, r.result, a.trace_checkpoints, title);
    write_output("--trace", a.trace, [&](std::ostream& os) { report::write_chrome_trace(os, t); });
  }
  if (a.csv) {
    write_records_csv(std::cout, csv_records(r));
    return kOk;
  }
  if (a.json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "ops");
    w.field("scenario", r.scenario);
    w.field("seed", static_cast<long long>(p.seed));
    w.field("horizon_s", p.horizon_s);
    w.field("nodes", p.cluster.nodes);
    w.field("gpus_per_node", p.cluster.gpus_per_node);
    w.field("zones", p.cluster.zones);
    if (!r.step_times.empty()) {
      w.key("step_times");
      w.begin_array();
      for (const auto& st : r.step_times) {
        w.begin_object();
        w.field("job", st.job);
        w.field("workload", st.workload);
        w.field("workload_name", st.workload_name);
        w.field("gpus", st.gpus);
        w.field("layout", st.layout);
        w.field("engine", st.engine);
        w.field("step_s", st.step_s);
        w.field("steps", st.steps);
        w.field("reused", st.reused);
        if (st.placement != "packed") w.field("placement", st.placement);
        w.field("work_s", st.step_s * static_cast<double>(st.steps));
        w.key("checkpoint_bytes");
        if (st.checkpoint_bytes > 0)
          w.value(st.checkpoint_bytes);
        else
          w.null();
        w.end_object();
      }
      w.end_array();
    }
    if (!r.checkpoint_io.empty()) {
      w.key("checkpoint_io");
      w.begin_array();
      for (const auto& io : r.checkpoint_io) {
        w.begin_object();
        w.field("job", io.job);
        w.field("gpus", io.gpus);
        w.field("nodes", io.nodes);
        w.field("placement", io.placement);
        w.field("targets_per_node", io.targets);
        w.field("storage_nodes", io.storage_nodes);
        w.field("bytes", io.bytes);
        w.field("write_bandwidth_per_node", io.write_bw_per_node);
        w.field("read_bandwidth_per_node", io.read_bw_per_node);
        w.field("write_s", io.write_s);
        w.field("read_s", io.read_s);
        w.field("closed_form_write_s", io.closed_form_write_s);
        w.field("reused", io.reused);
        w.end_object();
      }
      w.end_array();
    }
    w.key("result");
    write_result_json(w, r.result, p);
    if (r.without_checkpoints) {
      w.key("without_checkpoints");
      write_result_json(w, *r.without_checkpoints, p);
    }
    if (r.sweep) {
      const auto& s = *r.sweep;
      w.key("checkpoint_sweep");
      w.begin_object();
      w.field("job", s.job);
      w.field("seeds", s.seeds);
      w.field("checkpoint_cost_s", s.checkpoint_cost_s);
      w.field("mtbf_s", s.mtbf_s);
      w.field("young_daly_s", s.young_daly_s);
      w.field("best_s", s.best_s);
      w.key("fit_best_s");
      if (s.fit_best_s > 0)
        w.value(s.fit_best_s);
      else
        w.null();
      w.key("points");
      w.begin_array();
      for (const auto& pt : s.points) {
        w.begin_object();
        w.field("interval_s", pt.interval_s);
        w.field("efficiency", pt.efficiency);
        w.end_object();
      }
      w.end_array();
      w.end_object();
    }
    w.end_object();
    return kOk;
  }
  std::cout << "ffsim ops on " << r.scenario << ": " << fmt_int(p.cluster.nodes) << " nodes x "
            << p.cluster.gpus_per_node << " GPUs in " << p.cluster.zones << (p.cluster.zones == 1 ? " zone" : " zones")
            << ", " << fmt_g(p.horizon_s / 86400.0, 6) << " d (" << fmt_g(p.horizon_s / kHour, 6) << " h), seed "
            << p.seed << ", " << p.jobs.size() << (p.jobs.size() == 1 ? " job" : " jobs") << ", " << p.failures.size()
            << " failure processes\n";
  for (const auto& st : r.step_times)
    std::cout << "  " << st.job << ": a step of " << st.workload_name << " on " << st.gpus << " GPUs (" << st.layout
              << (st.placement != "packed" ? ", placed " + st.placement : std::string()) << ") takes "
              << fmt_time(Seconds(st.step_s)) << " ("
              << (st.engine == "closed-form" ? "its closed form" : "fluid engine, collectives estimated") << "), x "
              << fmt_int(st.steps) << " steps = " << fmt_g(st.step_s * static_cast<double>(st.steps) / 86400.0, 4)
              << " d of work"
              << (st.checkpoint_bytes > 0 ? "; checkpoint of the model: " + fmt_bytes_si(Bytes(st.checkpoint_bytes))
                                          : std::string())
              << "\n";
  for (const auto& io : r.checkpoint_io)
    std::cout << "  " << io.job << ": its checkpoint of " << fmt_bytes_si(Bytes(io.bytes)) << " through the fabric, "
              << io.nodes << (io.nodes == 1 ? " node" : " nodes") << " x " << io.targets
              << (io.targets == 1 ? " flow" : " flows") << " to " << io.storage_nodes << " storage nodes (at most "
              << fmt_bandwidth(BytesPerSecond(io.write_bw_per_node)) << " per node): write "
              << fmt_time(Seconds(io.write_s)) << " (closed form " << fmt_time(Seconds(io.closed_form_write_s))
              << "), restart read " << fmt_time(Seconds(io.read_s)) << " (at most "
              << fmt_bandwidth(BytesPerSecond(io.read_bw_per_node)) << " per node)\n";
  print_result(std::cout, r.result, p);
  if (r.without_checkpoints) {
    std::cout << "\nWithout checkpoints (every job restarts from its beginning after a failure)\n";
    print_result(std::cout, *r.without_checkpoints, p);
  }
  if (r.sweep) {
    const auto& s = *r.sweep;
    std::cout << "\nCheckpoint interval sweep of job " << s.job << " (checkpoint "
              << fmt_time(Seconds(s.checkpoint_cost_s)) << ", job MTBF " << fmt_g(s.mtbf_s / kHour, 4) << " h"
              << ", " << s.seeds << (s.seeds == 1 ? " seed" : " seeds") << " a point)\n";
    report::Table t({"interval", "efficiency"});
    for (const auto& pt : s.points)
      t.add({fmt_time(Seconds(pt.interval_s)) + (pt.interval_s == s.best_s ? " *" : ""),
             fmt_f(100 * pt.efficiency, 3) + "%"});
    t.print(std::cout, "  ");
    std::cout << "  best swept: " << fmt_time(Seconds(s.best_s))
              << "; fit of a/t + b t + c: " << (s.fit_best_s > 0 ? fmt_time(Seconds(s.fit_best_s)) : std::string("-"))
              << "; Young/Daly sqrt(2 C MTBF): " << fmt_time(Seconds(s.young_daly_s)) << "\n";
  }
  if (!a.trace.empty())
    std::cout << "\ntrace: " << a.trace << " (" << r.result.timeline->runs.size() << " job runs, "
              << r.result.timeline->failures.size() << " failures; open it in ui.perfetto.dev)\n";
  return kOk;
}

}  // namespace

void setup_ops(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("ops",
                                 "Operations over hours to a year (SimGrid discrete events): jobs, failures, "
                                 "checkpoints; goodput and GPU-hours by state");
  auto a = std::make_shared<OpsArgs>();
  ctx.expects(sub->add_option("scenario", a->scenario, "Scenario JSON file with an \"ops\" section")
                  ->required()
                  ->check(input_file()),
              "a scenario file");
  ctx.expects(sub->add_option("--jobs", a->jobs, "A job mix file {\"jobs\": [...]} replacing the scenario's")
                  ->check(input_file()),
              "a job mix file");
  ctx.expects(sub->add_option("--seed", a->seed, "Seed of the failure processes (default: the scenario's)")
                  ->check(int_in(0, (1LL << 62))),
              "an integer in [0, 2^62]");
  ctx.expects(sub->add_option("--horizon", a->horizon, "Simulated time (e.g. 30d, 8760h; default: the scenario's)"),
              "a time with a unit (e.g. 30d)");
  sub->add_flag("--without-checkpoints", a->without_checkpoints, "Also simulate with every job's checkpoints off");
  ctx.expects(sub->add_option("--checkpoint-sweep", a->sweep,
                              "Sweep this job's checkpoint interval around Young/Daly's sqrt(2 C MTBF)"),
              "a job name");
  ctx.expects(
      sub->add_option("--sweep-seeds", a->sweep_seeds, "Seeds per swept interval (default 4)")->check(int_in(1, 1000)),
      "an integer in [1, 1000]");
  ctx.expects(
      sub->add_option("--trace", a->trace,
                      "Write the run's timeline (jobs, failures, repairs) as a Chrome/Perfetto trace to this file"),
      "a file name");
  sub->add_flag("--trace-checkpoints", a->trace_checkpoints,
                "Show every checkpoint in the --trace timeline (about 100,000 per job-year at 5 min)");
  sub->add_flag(
      "--quiet", a->quiet,
      "No progress line on stderr (shown only where stderr is a terminal, for runs longer than half a second)");
  auto* json = sub->add_flag("--json", a->json, "Machine-readable output (GPU-seconds, SI units)");
  json->excludes(sub->add_flag("--csv", a->csv,
                               "CSV: a row per job and failure process (and the cluster), GPU-seconds, SI units"));
  sub->callback([&ctx, a] {
    ctx.action = [&ctx, a] { return run_ops(ctx, *a); };
    ctx.sweep = std::make_shared<SweepHook>();
    ctx.sweep->rows = [a](Context& c, const config::Document& doc, int) { return sweep_ops(c, *a, doc); };
    ctx.sweep->check = [a] { check_swept_ops(*a); };
    ctx.sweep->columns = [] {
      std::vector<std::string> keys;
      for (const auto& kv : ops_record("", "", 0, 0, std::nullopt, ops::GpuSeconds{}, 0, 0, 0))
        keys.push_back(kv.first);
      return keys;
    };
  });
}

}  // namespace ffsim::cli
