// `ffsim train <scenario>`: one simulated training step per GPU count: step time, throughput,
// scaling efficiency, breakdown (compute, exposed communication, pipeline bubble) and MFU.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "app/engines.hpp"
#include "app/placement.hpp"
#include "app/train.hpp"
#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/parallel.hpp"
#include "core/progress.hpp"
#include "core/spell.hpp"
#include "plan/scenario.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"
#include "report/trace.hpp"
#include "train/run.hpp"

namespace ffsim::cli {

namespace {

struct TrainArgs {
  std::string scenario;
  bool quiet = false;
  std::string workload;  ///< another scenario whose "workload" runs on this one's cluster
  std::string gpus;
  std::string backend;
  std::string placement;  ///< --placement (empty: packed)
  std::string engine = "analytic";
  std::string collectives = "simulate";
  std::string trace;
  int trace_gpus = 0;
  bool json = false;
  bool csv = false;
  bool full = false;
  bool timing = false;
  int threads = 0;  ///< 0: the machine's hardware threads
};

std::vector<int> parse_gpus(const std::string& s) {
  constexpr long kMax = 1L << 24;
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    long v = 0;
    bool too_large = false;
    try {
      v = std::stol(item, &used);
    } catch (const std::out_of_range&) {
      too_large = item.find('-') == std::string::npos;
      used = too_large ? item.size() : 0;
      v = too_large ? kMax + 1 : 0;
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v <= 0)
      throw UsageError("--gpus: expected a comma-separated list of positive GPU counts, got \"" + s + "\"");
    if (too_large || v > kMax)
      throw UsageError("--gpus: " + item + " GPUs is too large (at most " + fmt_int(kMax) + ")");
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) != out.end())
      throw UsageError("--gpus: " + item + " appears twice in \"" + s + "\"; give each GPU count once");
    out.push_back(static_cast<int>(v));
  }
  if (!s.empty() && s.back() == ',')
    throw UsageError("--gpus: expected a comma-separated list of positive GPU counts, got \"" + s + "\" (a trailing comma)");
  if (out.empty()) throw UsageError("--gpus: expected at least one GPU count");
  return out;
}

std::string pct(double f) { return fmt_f(100 * f, 1) + "%"; }

// A run of the steps: what the outputs are made of.
struct TrainRun {
  std::optional<plan::ScenarioSpec> job;
  train::WorkloadSpec w;
  std::string job_from;
  std::vector<train::StepResult> rows;
  std::vector<double> wall;
  train::GpuRates rates;
  app::EngineChoice engine;  ///< the engine the steps ran on (closed-form for a kind that has only that)
};

// The steps of `a` on `sc` (and the --trace file when asked): UsageErrors for a GPU count that
// cannot run, ConfigErrors of the workload's own list.
TrainRun compute_train(Context& ctx, const TrainArgs& a, const plan::ScenarioSpec& sc, const app::EngineChoice& asked,
                       int threads, bool show_progress) {
  // The job: the scenario's own workload, or with --workload another scenario's on this cluster.
  std::optional<plan::ScenarioSpec> job;
  if (!a.workload.empty()) {
    job = plan::load_scenario(a.workload, ctx.catalog());
    if (!job->workload)
      throw ConfigError(job->file, "", "--workload: this scenario has no \"workload\" section to run on " + sc.name +
                                           "'s cluster; name one that has (scenarios/train-*.json)");
  } else if (!sc.workload) {
    throw ConfigError(sc.file, "", "the scenario has no \"workload\" section; `ffsim train` needs one (see "
                                   "scenarios/train-*.json), or name one with --workload scenarios/train-vgg16-ddp.json "
                                   "to run its job on this cluster");
  }
  train::WorkloadSpec w = job ? *job->workload : *sc.workload;
  const std::string job_from = job ? job->name : sc.name;
  if (!a.backend.empty()) {
    const auto b = train::backend_names();
    if (std::find(b.begin(), b.end(), a.backend) == b.end())
      throw UsageError("--backend: unknown backend \"" + a.backend + "\"" + did_you_mean(a.backend, b) + "; valid: " + join(b));
    w.backend = a.backend;
  }
  if (!a.placement.empty()) w.placement = app::parse_placement(a.placement);
  // The engine: a kind with a closed form runs on it with --engine closed-form; a kind with only a
  // closed form (transformer) runs on it by default, and refuses a simulating engine by name.
  app::EngineChoice choice = asked;
  if (!choice.caps.simulates && !w.impl->has_closed_form())
    throw UsageError("--engine " + choice.label + ": the " + w.kind +
                     " workload runs schedules, and the closed form evaluates none; use fluid or simgrid (the "
                     "transformer workload has a closed form)");
  if (choice.caps.simulates && !w.impl->builds_schedules()) {
    if (choice.label != "analytic")
      throw UsageError("--engine " + choice.label + ": the " + w.kind +
                       " workload evaluates on the closed form only; use --engine closed-form (or leave --engine out)");
    choice = app::choose_engine("closed-form", app::Analytic::ClosedForm);
  }
  if (!w.placement.packed() && !choice.caps.simulates)
    throw UsageError("--placement " + a.placement + ": the closed form (--engine " + choice.label +
                     ") sees no routes, so where the nodes are does not change it: " +
                     (w.impl->builds_schedules() ? std::string("add --engine fluid (or simgrid)")
                                                 : "the " + w.kind + " workload evaluates on the closed form only: drop --placement"));
  const std::vector<int> gpus = a.gpus.empty() ? w.gpus : parse_gpus(a.gpus);
  // A count that cannot run: a usage error when it came from --gpus, else a configuration error
  // at the workload's own list (exit 3, its file and pointer; the user passed no --gpus).
  auto cannot_run = [&](std::size_t i, const std::string& why) {
    if (a.gpus.empty()) throw ConfigError(job ? job->file : sc.file, "/workload/gpus/" + std::to_string(i), why);
    throw UsageError("--gpus " + std::to_string(gpus[i]) + ": " + why);
  };
  const int per_node = static_cast<int>(sc.cluster.node.gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string why = w.impl->check(w, gpus[i], sc.cluster.gpus(), per_node);
    if (!why.empty()) cannot_run(i, why);
  }
  // The GPU's rates for the workload's precision: a model error (exit 3) before any step runs.
  const auto& gpu = sc.cluster.node.gpus.front().gpu;
  const train::GpuRates rates = train::rates_of(gpu, w.precision);
  const app::StepSession session(
      sc, ctx.catalog(), choice,
      a.collectives == "estimate" ? train::CollectiveCosts::Method::Estimate : train::CollectiveCosts::Method::Simulate,
      a.collectives == "emit", threads);
  const train::StepEnv& env = session.env();
  std::vector<train::StepResult> rows;
  std::vector<double> wall;
  // Progress on a terminal: a step with large simulated collectives can take minutes.
  progress::Meter meter(show_progress && !a.quiet && ::isatty(STDERR_FILENO) != 0, "simulating", std::cerr);
  // Every count's distinct collectives at once (with parallel runs); an error here comes back in
  // the loop below, with its GPU count. A count's wall time (--timing) is its step's simulation and
  // its share of the collectives' (prepare_steps: the rows add up to the whole).
  std::vector<double> collectives_s(gpus.size(), 0.0);
  try {
    if (env.costs.parallel())
      meter.set_label("simulating the collectives of " + std::to_string(gpus.size()) + " GPU count" +
                      (gpus.size() == 1 ? "" : "s"));
    collectives_s = train::prepare_steps(w, env, gpus, a.full);
  } catch (const ValueError&) {
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    meter.set_label("simulating " + std::to_string(gpus[i]) + " GPUs (" + std::to_string(i + 1) + "/" +
                    std::to_string(gpus.size()) + ")");
    const auto t0 = std::chrono::steady_clock::now();
    try {
      rows.push_back(train::simulate_step(w, env, gpus[i], a.full));
    } catch (const ValueError& e) {
      // The model's own errors (rates, backend) surfaced above; what is left is a group of this
      // GPU count that a collective cannot run on (hfreduce over part of a node).
      cannot_run(i, e.what());
    }
    wall.push_back(collectives_s[i] + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  train::set_efficiencies(rows);
  if (!a.trace.empty()) {
    const int tg = a.trace_gpus > 0 ? a.trace_gpus : gpus.front();
    train::StepTrace tr;
    try {
      (void)train::simulate_step(w, env, tg, a.full, &tr);
    } catch (const ValueError& e) {
      throw UsageError("--trace-gpus " + std::to_string(tg) + ": " + e.what());
    }
    write_output("--trace", a.trace, [&](std::ostream& os) { report::write_chrome_trace(os, tr); });
  }
  TrainRun out{std::move(job), std::move(w), job_from, std::move(rows), std::move(wall), rates, choice};
  return out;
}

// One step's record, in SI base units: the JSON rows and the CSV columns are the same.
Record train_record(const train::StepResult& r) {
  return {{"gpus", static_cast<long long>(r.gpus)},
          {"layout", r.layout},
          {"step_s", r.step_s},
          {"efficiency", r.efficiency},
          {"compute_s", r.compute_s},
          {"exposed_comm_s", r.exposed_comm_s},
          {"bubble_s", r.bubble_s},
          {"samples_per_s", r.samples_per_s},
          {"tokens_per_s", r.tokens_per_s},
          {"model_flops", r.model_flops},
          {"flops_per_gpu", r.tflops_per_gpu * 1e12},
          {"mfu", r.mfu},
          {"of_gemm", r.of_gemm},
          {"memory_bytes", r.memory_bytes},
          {"fits", r.fits},
          {"ops", static_cast<long long>(r.ops)},
          {"simulated_gpus", static_cast<long long>(r.simulated_gpus)}};
}

// `ffsim sweep`: the records of one point, as the CSV has them (scenario and backend first), without
// wall-clock columns.
app::EngineChoice sweep_check_train(const TrainArgs& a) {
  if (a.json || a.csv || a.timing || !a.trace.empty() || a.trace_gpus > 0)
    throw UsageError(
        std::string(a.json             ? "--json"
                    : a.csv            ? "--csv"
                    : a.timing         ? "--timing"
                    : !a.trace.empty() ? "--trace"
                                       : "--trace-gpus") +
        ": not an option of a swept train (the sweep writes its own --csv and --json files, and no wall-clock "
        "times: they are not the same twice); drop it");
  const app::EngineChoice choice = app::choose_simulating_engine(a.engine, app::Analytic::Fluid, "train");
  if (a.collectives != "simulate" && a.collectives != "estimate" && a.collectives != "emit")
    throw UsageError("--collectives: expected simulate, estimate or emit, got \"" + a.collectives + "\"");
  if (!a.backend.empty()) {
    const auto b = train::backend_names();
    if (std::find(b.begin(), b.end(), a.backend) == b.end())
      throw UsageError("--backend: unknown backend \"" + a.backend + "\"" + did_you_mean(a.backend, b) +
                       "; valid: " + join(b));
  }
  if (a.threads > 0 && (!choice.caps.parallel_safe || a.collectives != "simulate"))
    throw UsageError(
        "--threads: simulates a step's distinct collectives side by side, with the fluid engine and --collectives "
        "simulate: drop --threads");
  if (!a.gpus.empty()) (void)parse_gpus(a.gpus);
  return choice;
}

std::vector<Record> sweep_train(Context& ctx, const TrainArgs& a, const config::Document& doc, int threads) {
  const app::EngineChoice choice = sweep_check_train(a);
  const plan::ScenarioSpec sc = plan::parse_scenario(doc, ctx.catalog());
  const TrainRun run = compute_train(ctx, a, sc, choice, a.threads > 0 ? a.threads : threads, false);
  std::vector<Record> recs;
  for (const auto& r : run.rows) {
    Record rec = train_record(r);
    rec.insert(rec.begin(), Record::value_type("backend", run.w.backend));
    rec.insert(rec.begin(), Record::value_type("scenario", sc.name));
    recs.push_back(std::move(rec));
  }
  return recs;
}

int run_train(Context& ctx, const TrainArgs& a) {
  if (a.trace_gpus > 0 && a.trace.empty())
    throw UsageError(
        "--trace-gpus: sets the GPU count of the --trace step; without --trace there is none (add --trace FILE)");
  // The closed form only for a workload kind that has one (checked once the workload is read).
  const app::EngineChoice choice = app::choose_engine(a.engine, app::Analytic::Fluid);
  if (a.collectives != "simulate" && a.collectives != "estimate" && a.collectives != "emit")
    throw UsageError("--collectives: expected simulate, estimate or emit, got \"" + a.collectives + "\"");
  if (!a.trace.empty() && !choice.caps.simulates)
    throw UsageError("--trace: the closed form evaluates no schedule, so there is no timeline; use fluid or simgrid");
  if (!a.trace.empty()) check_output_path("--trace", a.trace, {a.scenario, a.workload, ctx.calibration});
  if (a.threads > 0 && (!choice.caps.parallel_safe || !choice.caps.simulates || a.collectives != "simulate"))
    throw UsageError(
        "--threads: simulates a step's distinct collectives side by side, with --engine analytic (the default) "
        "and --collectives simulate (the default); " +
        (!choice.caps.simulates        ? "the closed form simulates no collective"
         : !choice.caps.parallel_safe  ? "the SimGrid engine runs one simulation at a time"
         : a.collectives == "estimate" ? std::string("--collectives estimate simulates no collective")
                                       : std::string("--collectives emit simulates them inside the step")) +
        ": drop --threads");
  ctx.use_scenarios({a.scenario});  // the cluster simulated (--workload's cluster is not)
  const plan::ScenarioSpec sc = plan::load_scenario(a.scenario, ctx.catalog());
  const TrainRun run = compute_train(ctx, a, sc, choice, a.threads > 0 ? a.threads : hardware_threads(), true);
  const auto& job = run.job;
  const train::WorkloadSpec& w = run.w;
  const std::string& job_from = run.job_from;
  const auto& rows = run.rows;
  const auto& wall = run.wall;
  const train::GpuRates& rates = run.rates;
  std::vector<std::string> algs;
  for (auto r : {train::Role::GradAllReduce, train::Role::GradReduceScatter, train::Role::ParamAllGather,
                 train::Role::ExpertAllToAll})
    algs.push_back(std::string(train::role_name(r)) + " " + w.algorithm(r).algorithm);
  const std::string scaling = w.scaling == "weak" ? "weak scaling, " + std::to_string(w.batch) + " samples per data-parallel rank"
                                                  : "strong scaling, " + std::to_string(w.batch) + " samples per step";
  // One record per GPU count, in SI base units: the JSON rows and the CSV columns are the same
  // (the CSV adds the run's scenario and backend to each row).
  std::vector<Record> recs;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    Record rec = train_record(r);
    if (a.timing) rec.emplace_back("wall_s", wall[i]);
    if (a.csv) {
      rec.insert(rec.begin(), Record::value_type("backend", w.backend));
      rec.insert(rec.begin(), Record::value_type("scenario", sc.name));
    }
    recs.push_back(std::move(rec));
  }
  if (a.csv) {
    write_records_csv(std::cout, recs);
    return kOk;
  }
  if (a.json) {
    report::JsonWriter j(std::cout);
    begin_json(j, "train");
    j.field("scenario", sc.name);
    j.field("workload_from", job_from);
    j.field("model", w.model.name);
    j.field("workload", w.kind);
    j.field("summary", w.impl->summary());
    j.field("scaling", w.scaling);
    j.field("batch", w.batch);
    j.field("seq", w.seq);
    j.field("precision", w.precision);
    j.field("backend", w.backend);
    if (!w.placement.packed()) j.field("placement", w.placement.name());
    j.field("engine", run.engine.label);
    j.field("collectives", run.engine.caps.simulates ? a.collectives : std::string("estimate"));
    j.field("gpu_peak_flops", rates.peak.si());
    j.field("gpu_gemm_flops", rates.gemm.si());
    j.field("gpu_gemm_measured", rates.gemm_measured);
    j.key("rows");
    write_records_json(j, recs);
    // Staggered pipelines past the edge at which their transfers collide (docs/commands/train.md).
    if (std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.stagger.crossed(); })) {
      j.key("stagger_collisions");
      j.begin_array();
      for (const auto& r : rows)
        if (r.stagger.crossed()) {
          j.begin_object();
          j.field("gpus", r.gpus);
          j.field("pipelines_per_nic", r.stagger.pipelines);
          j.field("transfer_s", r.stagger.transfer_s);
          j.field("shortest_middle_forward_s", r.stagger.shortest_forward_s);
          j.end_object();
        }
      j.end_array();
    }
    if (ctx.calibration_use()) {  // what --calibration applied and skipped (calib_report.hpp)
      j.key("calibration");
      write_calibration(j, ctx);
    }
    j.end_object();
    return kOk;
  }
  std::cout << "ffsim train " << sc.name << (job ? " (the workload of " + job_from + ")" : std::string()) << ": "
            << w.model.name << ", " << w.impl->summary() << "\n  " << scaling
            << (w.model.architecture == "transformer" ? " of " + std::to_string(w.seq) + " tokens" : std::string())
            << ", " << w.precision << "; backend " << w.backend << " (" << join(algs) << "); "
            << (w.placement.packed() ? std::string() : "placement " + w.placement.name() + "; ") << "engine "
            << run.engine.label << ", collectives "
            << (run.engine.caps.simulates ? a.collectives : std::string("estimate")) << "\n";
  std::vector<std::string> header{"GPUs", "layout", "step", "compute", "bubble", "exposed comm", "samples/s",
                                  "efficiency", "TFLOPS/GPU", "MFU", "of GEMM", "memory/GPU"};
  if (a.timing) header.push_back("simulated in");
  report::Table t(header);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    std::vector<std::string> row{std::to_string(r.gpus), r.layout, fmt_time(Seconds(r.step_s)),
                                 fmt_time(Seconds(r.compute_s)), fmt_time(Seconds(r.bubble_s)),
                                 fmt_time(Seconds(r.exposed_comm_s)), fmt_g(r.samples_per_s, 4), pct(r.efficiency),
                                 fmt_f(r.tflops_per_gpu, 1), pct(r.mfu), pct(r.of_gemm),
                                 fmt_bytes_si(Bytes(r.memory_bytes)) + (r.fits ? "" : " (exceeds)")};
    if (a.timing) row.push_back(fmt_time(Seconds(wall[i])));
    t.add(row);
  }
  t.print(std::cout, "  ");
  std::cout << "  efficiency: samples/s per GPU against " << rows.front().gpus << " GPUs (" << w.scaling
            << " scaling); MFU against the " << w.precision << " peak " << fmt_flop_rate(rates.peak) << ", of GEMM against "
            << fmt_flop_rate(rates.gemm) << (rates.gemm_measured ? " (measured GEMM)" : " (peak: no measured GEMM)") << "\n";
  std::cout << "  breakdown on the busiest GPU: bubble = idle time with free communication; exposed comm = what "
               "communication adds on top\n";
  for (const auto& r : rows)
    if (r.stagger.crossed())
      std::cout
          << "  stagger at " << r.gpus << " GPUs: " << r.stagger.pipelines
          << " pipelines share a NIC; a middle stage's forward (" << fmt_time(Seconds(r.stagger.shortest_forward_s))
          << ") is under " << r.stagger.pipelines << " transfers ("
          << fmt_time(Seconds(r.stagger.pipelines * r.stagger.transfer_s))
          << "),\n    so their transfers collide and exposed comm grows (docs/commands/train.md, \"When staggered "
             "pipelines collide\")\n";
  if (!a.trace.empty()) std::cout << "  trace: " << a.trace << "\n";
  print_calibration(std::cout, ctx);
  return kOk;
}

}  // namespace

void setup_train(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("train", "Simulate training steps (DDP, FSDP, pipeline, MoE) and their scaling");
  auto a = std::make_shared<TrainArgs>();
  ctx.expects(sub->add_option("scenario", a->scenario,
                              "Scenario JSON file: the cluster, and the \"workload\" unless --workload names one")
                  ->required()
                  ->check(input_file()),
              "a scenario file");
  ctx.expects(sub->add_option("--workload", a->workload,
                              "Run the \"workload\" of this scenario (e.g. scenarios/train-vgg16-ddp.json) on the first "
                              "scenario's cluster instead of its own")
                  ->check(input_file()),
              "a scenario file with a \"workload\" section");
  ctx.expects(sub->add_option("--gpus", a->gpus, "Comma-separated GPU counts (default: the workload's)"),
              "a comma-separated list of positive GPU counts");
  ctx.expects(sub->add_option("--placement", a->placement,
                              "Where the job's nodes are: packed (the first nodes: the default), spread, cross-zone[:SHARE], "
                              "random[:SEED] (as in `collective --placement`); simulating engines only"),
              "packed, spread, cross-zone[:SHARE] or random[:SEED]");
  ctx.expects(sub->add_option("--backend", a->backend,
                              "Gradient reduction backend: " + join(train::backend_names()) + " (default: the scenario's)"),
              "one of " + join(train::backend_names()));
  ctx.expects(sub->add_option("--engine", a->engine,
                              "fluid (analytic, the default, is its former name here), fluid-full, fluid-eager or "
                              "simgrid: the engine of steps and collectives; closed-form: the workload's closed form "
                              "(the transformer kind's only engine, and its default)"),
              "closed-form, fluid, fluid-full, fluid-eager, simgrid or analytic");
  ctx.expects(sub->add_option("--threads", a->threads,
                              "Simulate a step's distinct collectives on this many threads at once (fluid engine; "
                              "default: the machine's hardware threads; the results do not depend on it)")
                  ->check(int_in(1, 4096)),
              "an integer in [1, 4096]");
  ctx.expects(sub->add_option("--collectives", a->collectives,
                              "simulate (default: each distinct collective run on the engine, then a timed op), estimate "
                              "(closed forms) or emit (each collective's whole schedule inside the step; small cases)"),
              "simulate, estimate or emit");
  ctx.expects(sub->add_option("--trace", a->trace, "Write a Chrome/Perfetto trace of one step to this file"), "a file name");
  ctx.expects(sub->add_option("--trace-gpus", a->trace_gpus, "GPU count of the traced step (default: the first; needs --trace)")
                  ->check(int_in(1, 1 << 24)),
              "an integer in [1, 16777216]");
  sub->add_flag(
      "--quiet", a->quiet,
      "No progress line on stderr (shown only where stderr is a terminal, for runs longer than half a second)");
  sub->add_flag("--full", a->full, "Simulate every GPU (no symmetry shortcut; slow at scale)");
  sub->add_flag("--timing", a->timing,
                "Add each GPU count's wall time: its step's simulation and its share of the simulated collectives' "
                "(those it was the first to need; the rows add up to the whole)");
  auto* json = sub->add_flag("--json", a->json, "Machine-readable output");
  json->excludes(sub->add_flag("--csv", a->csv, "CSV of the rows (one per GPU count), SI units"));
  sub->callback([&ctx, a] {
    ctx.action = [&ctx, a] { return run_train(ctx, *a); };
    ctx.sweep = std::make_shared<SweepHook>();
    ctx.sweep->rows = [a](Context& c, const config::Document& doc, int threads) {
      return sweep_train(c, *a, doc, threads);
    };
    ctx.sweep->check = [a] { (void)sweep_check_train(*a); };
    ctx.sweep->columns = [] {
      std::vector<std::string> keys{"scenario", "backend"};
      for (const auto& kv : train_record(train::StepResult{})) keys.push_back(kv.first);
      return keys;
    };
  });
}

}  // namespace ffsim::cli
