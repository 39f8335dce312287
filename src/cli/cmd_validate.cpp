// `ffsim validate <measured.json...> --calibration <file> [--holdout 0.3] [--json]`: refit the
// calibration on the training points and re-simulate every held-out measured configuration on the
// analytic and the SimGrid engines; print measured vs predicted and the MAPE per stage.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <system_error>

#include <CLI/CLI.hpp>

#include "app/engines.hpp"
#include "calib/calibration_file.hpp"
#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "cli/validate_compute.hpp"
#include "config/calibration_reader.hpp"
#include "config/measurement_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ValidateArgs {
  std::vector<std::string> files;
  std::string calibration;
  double holdout = 0.3;
  std::string engine = "both";
  bool json = false;
  bool csv = false;
  bool all = false;
  std::string compute;  ///< --compute: a shaped compute model to validate instead of measured files
  /// --train: fit on every point of these files (another run of the machine) and predict every point
  /// of `files`, instead of holding out a share of `files`.
  std::vector<std::string> train;
  int threads = 0;      ///< --threads: the fits' simulations at once (0: the machine's hardware threads)
  /// --folds: cross-validation, every point predicted once by a fit to the other folds (0: the holdout split)
  int folds = 0;
  CLI::Option* holdout_opt = nullptr;
  CLI::Option* engine_opt = nullptr;
};

struct Row {
  const calib::Sample* s = nullptr;
  bool held = false;
  int fold = -1;        // --folds: the fold the point is predicted in (-1: in every fit)
  std::string skipped;  // why it is not simulated
  double analytic = kNaN, simgrid = kNaN;
  [[nodiscard]] double err(double v) const { return std::fabs(v - s->point.time_median) / s->point.time_median; }
};

std::string configuration(const calib::Point& p) {
  auto thr = [](int t) { return std::to_string(t) + (t == 1 ? " thread" : " threads"); };
  if (p.stage == "copy") return p.variant + ", " + thr(p.threads);
  if (p.stage == "reduce") return p.variant + " " + p.dtype + " " + p.store + ", k=" + std::to_string(p.k) + ", " + thr(p.threads);
  if (p.stage == "d2h" || p.stage == "h2d" || p.stage == "bidir") return p.backend + ", " + std::to_string(p.devices) + " device";
  if (p.stage == "pipeline")
    return p.backend + ", " + std::to_string(p.devices) + " dev, " + fmt_bytes(Bytes(p.chunk_bytes)) + " chunks";
  const std::string place = p.placement == "in_place"       ? ", in place"
                            : p.placement == "out_of_place" ? ", out of place"
                                                            : "";
  if (p.stage == "internode")
    return std::to_string(p.ranks) + " ranks, " + fmt_bytes(Bytes(p.chunk_bytes)) + " slices" + place;
  if (p.stage == "allreduce")
    return std::to_string(p.ranks) + " ranks x " + std::to_string(p.devices) + " dev, " +
           fmt_bytes(Bytes(p.chunk_bytes)) + " chunks" + place;
  return std::to_string(p.ranks) + " ranks" + place;
}

// Mean of |error| over rows that pass `want` and have a value for `engine` (NaN if none).
struct Mape {
  double sum = 0;
  int n = 0;
  void add(double e) {
    if (!std::isnan(e)) {
      sum += e;
      ++n;
    }
  }
  [[nodiscard]] double value() const { return n ? sum / n : kNaN; }
};

std::string pct(double v) { return std::isnan(v) ? "-" : fmt_f(100 * v, 1) + "%"; }

int run_validate(Context& ctx, ValidateArgs a) {
  if (!a.compute.empty()) {
    std::vector<std::string> other;
    if (!a.files.empty()) other.push_back("measurement files (" + a.files.front() + ")");
    if (!a.calibration.empty() || !ctx.calibration.empty()) other.push_back("--calibration");
    if (a.holdout_opt && a.holdout_opt->count()) other.push_back("--holdout");
    if (a.engine_opt && a.engine_opt->count()) other.push_back("--engine");
    if (a.csv) other.push_back("--csv");
    if (a.all) other.push_back("--all");
    if (a.threads != 0) other.push_back("--threads");
    if (!a.train.empty()) other.push_back("--train");
    if (a.folds != 0) other.push_back("--folds");
    if (!other.empty())
      throw UsageError(
          "--compute validates a compute model against the measurements its file names (leaving one "
          "dataset out); it does not take " +
          join(other) + ": give those in a validate command of their own");
    return run_validate_compute(ctx, a.compute, a.json);
  }
  if (a.files.empty())
    throw UsageError(
        "validate: expected hfreduce-bench measurement files (with --calibration), or --compute MODEL (a "
        "calibrated shaped compute model, e.g. a100_shaped)");
  if (!a.calibration.empty() && !ctx.calibration.empty() && a.calibration != ctx.calibration)
    throw UsageError("--calibration is given twice (" + ctx.calibration + " before validate, " + a.calibration +
                     " after it); give it once");
  if (a.calibration.empty()) a.calibration = ctx.calibration;
  if (a.calibration.empty()) throw UsageError("validate needs --calibration <file> (written by ffsim calibrate)");
  ctx.calibration = a.calibration;  // validate reads only the published catalog: this changes no model
  if (!(a.holdout >= 0 && a.holdout < 1)) throw UsageError("--holdout: expected a number in [0, 1), got " + fmt_g(a.holdout));
  // "both": the fluid engine and SimGrid side by side; otherwise the one engine named.
  std::optional<app::EngineChoice> choice;
  if (a.engine != "both") choice = app::choose_simulating_engine(a.engine, app::Analytic::Fluid, "validate");
  const calib::CalibrationFile cf = config::load_calibration(a.calibration);
  ctx.calibration_not_applied("validate refits every value on the training points; the file names the node model and the "
                              "machines it was fitted to");
  const config::Catalog& cat = ctx.published_catalog();
  {
    config::Catalog copy = cat;  // the calibration must still apply to the catalog it calibrates
    config::apply_calibration(copy, cf);
  }
  const calib::BenchModel m = config::make_bench_model(cat, cf.node);
  std::vector<std::string> machines;  // distinct, in order
  for (const auto& x : cf.machines) {
    const std::string quoted = "\"" + x + "\"";
    if (std::find(machines.begin(), machines.end(), quoted) == machines.end()) machines.push_back(quoted);
  }
  const bool cross = !a.train.empty();
  if (cross && a.holdout_opt && a.holdout_opt->count())
    throw UsageError(
        "--holdout and --train: with --train every point of the measured files is predicted from a fit to "
        "the --train files; give one of them");
  const int folds = a.folds;
  if (folds != 0 && cross)
    throw UsageError(
        "--folds and --train: with --train every point of the measured files is predicted from a fit to the "
        "--train files, with --folds from fits to the measured files' other folds; give one of them");
  if (folds != 0 && a.holdout_opt && a.holdout_opt->count())
    throw UsageError(
        "--folds and --holdout: --folds holds out every point once (one fold at a time), --holdout a share of "
        "them once; give one of them");
  auto load = [&](const std::vector<std::string>& names) {
    std::vector<calib::MeasurementFile> out;
    for (const auto& f : names) {
      out.push_back(config::load_measurement(f));
      const auto& mf = out.back();
      if (std::find(cf.machines.begin(), cf.machines.end(), mf.machine.name) == cf.machines.end())
        throw ConfigError(mf.file, "/machine/name",
                          "expected a run of " + join(machines, " or ") + " (the machine calibration " + cf.name +
                              " was fitted to), got \"" + mf.machine.name + "\"");
    }
    return out;
  };
  auto same_file = [](const std::string& x, const std::string& y) {
    std::error_code ex, ey;  // both exist (input_file()); an unreadable path compares as given
    const auto cx = std::filesystem::weakly_canonical(x, ex), cy = std::filesystem::weakly_canonical(y, ey);
    return ex || ey ? x == y : cx == cy;
  };
  for (const auto& t : a.train)
    for (const auto& f : a.files)
      if (same_file(t, f))
        throw UsageError("--train " + t +
                         " is also a measured file to predict: a file is either fitted or predicted, "
                         "not both (a point fitted on itself says nothing of another run)");
  const std::vector<calib::MeasurementFile> files = load(a.files);
  // The points to predict, and, with --train, the other run's points to fit on: each set its own
  // series (samples_of merges the runs of one configuration across the files it is given).
  const auto samples = calib::samples_of(m, files);
  const auto train_samples = cross ? calib::samples_of(m, load(a.train)) : std::vector<calib::Sample>{};
  const std::vector<int> fold = folds != 0 ? calib::fold_of(samples, folds) : std::vector<int>(samples.size(), -1);
  std::vector<bool> held = cross ? std::vector<bool>(samples.size(), true) : calib::holdout_mask(samples, a.holdout);
  if (folds != 0)
    for (std::size_t i = 0; i < samples.size(); ++i) held[i] = fold[i] >= 0;
  // training: the points a fit may take (with --folds, every fold's; each fit leaves its own fold out).
  std::vector<calib::Sample> training;
  std::vector<int> training_fold;
  std::vector<Row> rows;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    Row r;
    r.s = &samples[i];
    r.fold = fold[i];
    r.held = cross || folds != 0 || a.holdout > 0 ? held[i] : true;  // no holdout: every point is evaluated (in-sample)
    r.skipped = calib::not_simulated(samples[i].point);
    if (!cross && r.skipped.empty() && (folds != 0 || !held[i]) && samples[i].outlier.empty()) {
      training.push_back(samples[i]);
      training_fold.push_back(fold[i]);
    }
    rows.push_back(r);
  }
  for (const auto& t : train_samples)
    if (calib::not_simulated(t.point).empty() && t.outlier.empty()) training.push_back(t);
  // With --train, the stages the measured files have and the --train files do not: their values
  // stay the catalog's published ones (and what the fitted stages give them), which the output says.
  std::vector<std::string> untrained;
  if (cross)
    for (const Row& r : rows) {
      const std::string& st = r.s->point.stage;
      if (!r.skipped.empty() || std::find(untrained.begin(), untrained.end(), st) != untrained.end()) continue;
      if (std::none_of(training.begin(), training.end(), [&](const calib::Sample& t) { return t.point.stage == st; }))
        untrained.push_back(st);
    }
  const auto reference = app::make_engine("fluid");  // the engine of the fits
  // One fit, or with --folds one per fold on the other folds' points (a point in no fold is in all).
  std::vector<calib::Calibration> fits;
  for (int f = 0; f < std::max(1, folds); ++f) {
    std::vector<calib::Sample> part;
    for (std::size_t i = 0; i < training.size(); ++i)
      if (folds == 0 || training_fold[i] != f) part.push_back(training[i]);
    fits.push_back(calib::calibrate(m, part, *reference, fit_threads(a.threads)));
  }
  const calib::Calibration& c = fits.front();
  // Rows by stage (in the order of the pipeline's parts), then configuration, then size.
  const std::vector<std::string> order{"copy", "reduce", "d2h", "h2d", "bidir", "pipeline", "internode", "allreduce", "mpi_allreduce"};
  auto rank_of = [&](const std::string& st) { return std::find(order.begin(), order.end(), st) - order.begin(); };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& x, const Row& y) {
    const auto rx = rank_of(x.s->point.stage), ry = rank_of(y.s->point.stage);
    if (rx != ry) return rx < ry;
    const std::string kx = calib::series_key(*x.s), ky = calib::series_key(*y.s);
    if (kx != ky) return kx < ky;
    return x.s->point.bytes < y.s->point.bytes;
  });
  const bool run_analytic = !choice || choice->engine == "fluid", run_simgrid = !choice || choice->engine == "simgrid";
  const auto fluid_engine = choice && choice->engine == "fluid" ? choice->make() : app::make_engine("fluid");
  const auto simgrid = app::make_engine("simgrid");
  eval::Engine& fluid = *fluid_engine;
  for (Row& r : rows) {
    if (!r.skipped.empty()) continue;
    const auto p = calib::params_for(fits[static_cast<std::size_t>(std::max(0, r.fold))], r.s->point, r.s->regime);
    if (run_analytic || !r.held) r.analytic = calib::simulate(m, p, r.s->point, fluid);
    if (run_simgrid && r.held) r.simgrid = calib::simulate(m, p, r.s->point, *simgrid);
  }

  // MAPE per stage over the evaluated (held-out) points, per engine, and per regime (analytic).
  std::vector<std::string> stages;  // in row order
  for (const Row& r : rows)
    if (std::find(stages.begin(), stages.end(), r.s->point.stage) == stages.end()) stages.push_back(r.s->point.stage);
  struct StageMape {
    Mape analytic, simgrid, cache, dram, outliers;
    Mape spread;  // run-to-run spread of the points measured in several runs (any point of the stage)
    int skipped = 0;
    bool gpu_only = true;  // every evaluated point ran on real GPUs (the CUDA backend)
    bool any = false;      // the stage has evaluated points
  };
  // The error a stage's model is held to: the machine's own noise, at least 10%; on real GPUs 3% for
  // single copies and 5% for the pipeline (issue 27's acceptance). Per stage only: the aggregate rows have none.
  auto target_of = [](const std::string& stage, const StageMape& sm) {
    const bool gpu = sm.any && sm.gpu_only;
    if (gpu && (stage == "d2h" || stage == "h2d" || stage == "bidir")) return 0.03;
    if (gpu && stage == "pipeline") return 0.05;
    return std::max(0.10, sm.spread.n > 0 ? sm.spread.value() : 0.0);
  };
  std::map<std::string, StageMape> by_stage;
  StageMape host_mpi, all;
  for (const Row& r : rows) {
    if (!r.held) continue;
    const auto& pt = r.s->point;
    auto add = [&](StageMape& sm) {
      sm.any = true;
      sm.gpu_only = sm.gpu_only && pt.backend == "cuda";
      if (r.s->runs > 1) sm.spread.add(r.s->run_spread);
      if (!r.skipped.empty()) {
        ++sm.skipped;
        return;
      }
      if (!r.s->outlier.empty()) {  // reported apart: the headline MAPE is over the points the rule keeps
        sm.outliers.add(std::isnan(r.analytic) ? kNaN : r.err(r.analytic));
        return;
      }
      sm.analytic.add(std::isnan(r.analytic) ? kNaN : r.err(r.analytic));
      sm.simgrid.add(std::isnan(r.simgrid) ? kNaN : r.err(r.simgrid));
      (r.s->regime == calib::Regime::Cache ? sm.cache : sm.dram).add(std::isnan(r.analytic) ? kNaN : r.err(r.analytic));
    };
    add(by_stage[pt.stage]);
    add(all);
    if (pt.backend == "host" || pt.backend == "mpi") add(host_mpi);
  }
  const std::string evaluated = cross           ? "predicted (fitted on the --train files only)"
                                : folds != 0    ? "held-out (" + std::to_string(folds) + " folds)"
                                : a.holdout > 0 ? "held-out"
                                                : "in-sample (no holdout)";

  if (a.json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "validate");
    w.key("calibration");
    write_calibration(w, ctx);
    w.field("node", m.node.name);
    if (cross || folds != 0) {
      w.key("holdout");
      w.null();
    } else {
      w.field("holdout", a.holdout);
    }
    w.key("folds");
    if (folds != 0)
      w.value(folds);
    else
      w.null();
    w.key("train_files");
    w.begin_array();
    for (const auto& t : a.train) w.value(t);
    w.end_array();
    w.field("evaluated", evaluated);
    w.field("training_points", training.size());
    w.key("untrained_stages");
    w.begin_array();
    for (const auto& st : untrained) w.value(st);
    w.end_array();
    w.field("regime_rule", calib_regime_rule(m));
    auto num = [&](double v) {
      if (std::isnan(v)) w.null();
      else w.value(v);
    };
    w.key("mape");
    w.begin_object();
    auto mape_obj = [&](const std::string& key, const StageMape& sm, bool stage) {
      w.key(key);
      w.begin_object();
      if (stage) {
        const double target = target_of(key, sm);
        w.field("target", target);
        w.key("target_met");
        if (std::isnan(sm.analytic.value()))
          w.null();
        else
          w.value(sm.analytic.value() <= target);
      }
      w.field("points", sm.analytic.n > 0 ? sm.analytic.n : sm.simgrid.n);
      w.key("analytic");
      num(sm.analytic.value());
      w.key("simgrid");
      num(sm.simgrid.value());
      w.key("cache_analytic");
      num(sm.cache.value());
      w.key("dram_analytic");
      num(sm.dram.value());
      w.field("not_simulated", sm.skipped);
      w.field("outliers", sm.outliers.n);
      w.key("outliers_analytic");
      num(sm.outliers.value());
      w.field("repeated_points", sm.spread.n);
      w.key("run_spread");
      num(sm.spread.value());
      w.end_object();
    };
    for (const auto& st : stages) mape_obj(st, by_stage[st], true);
    mape_obj("host_and_mpi", host_mpi, false);
    mape_obj("all", all, false);
    w.end_object();
    w.key("points");
    w.begin_array();
    for (const Row& r : rows) {
      const auto& p = r.s->point;
      w.begin_object();
      w.field("file", r.s->file);
      w.field("pointer", p.pointer);
      w.field("stage", p.stage);
      w.field("configuration", configuration(p));
      w.field("bytes", p.bytes);
      w.field("regime", calib::regime_name(r.s->regime));
      w.field("held_out", r.held);
      w.field("measured_s", p.time_median);
      w.field("runs", r.s->runs);
      w.field("run_spread", r.s->run_spread);
      w.key("analytic_s");
      num(r.analytic);
      w.key("simgrid_s");
      num(r.simgrid);
      w.key("error_analytic");
      num(std::isnan(r.analytic) ? kNaN : (r.analytic - p.time_median) / p.time_median);
      w.key("error_simgrid");
      num(std::isnan(r.simgrid) ? kNaN : (r.simgrid - p.time_median) / p.time_median);
      if (!r.skipped.empty()) w.field("not_simulated", r.skipped);
      if (!r.s->outlier.empty()) w.field("outlier", r.s->outlier);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    std::cout << '\n';
    return kOk;
  }

  if (a.csv) {
    // One line per measured point, training and held-out (held_out says which), with the keys of
    // the JSON's points; SI units; empty cells where a point has no value (not simulated, no outlier).
    std::vector<Record> recs;
    auto num = [](double v) -> Cell { return std::isnan(v) ? Cell{nullptr} : Cell{v}; };
    for (const Row& r : rows) {
      const auto& p = r.s->point;
      recs.push_back({{"file", r.s->file},
                      {"pointer", p.pointer},
                      {"stage", p.stage},
                      {"configuration", configuration(p)},
                      {"bytes", p.bytes},
                      {"regime", std::string(calib::regime_name(r.s->regime))},
                      {"held_out", r.held},
                      {"measured_s", p.time_median},
                      {"runs", static_cast<long long>(r.s->runs)},
                      {"run_spread", r.s->run_spread},
                      {"analytic_s", num(r.analytic)},
                      {"simgrid_s", num(r.simgrid)},
                      {"error_analytic", num(std::isnan(r.analytic) ? kNaN : (r.analytic - p.time_median) / p.time_median)},
                      {"error_simgrid", num(std::isnan(r.simgrid) ? kNaN : (r.simgrid - p.time_median) / p.time_median)},
                      {"not_simulated", r.skipped.empty() ? Cell{nullptr} : Cell{r.skipped}},
                      {"outlier", r.s->outlier.empty() ? Cell{nullptr} : Cell{r.s->outlier}}});
    }
    write_records_csv(std::cout, recs);
    return kOk;
  }

  std::size_t n_eval = 0;
  for (const Row& r : rows) n_eval += r.held ? 1 : 0;
  if (cross)
    std::cout << "ffsim validate: calibration " << cf.name << " (node model " << m.node.name << "), fitted on "
              << training.size() << " points of " << a.train.size() << " --train file"
              << (a.train.size() == 1 ? "" : "s") << ", " << n_eval << " points of the measured files predicted\n";
  else if (folds != 0)
    std::cout << "ffsim validate: calibration " << cf.name << " (node model " << m.node.name << "), " << samples.size()
              << " points; refitted " << folds << " times, each on the " << training.size()
              << " fitting points less one fold's, " << n_eval << " " << evaluated << "\n";
  else
    std::cout << "ffsim validate: calibration " << cf.name << " (node model " << m.node.name << "), " << samples.size()
              << " points; refitted on " << training.size() << ", " << n_eval << " " << evaluated << "\n";
  std::cout << "  regimes: " << calib_regime_rule(m) << "\n";
  print_calibration(std::cout, ctx);
  if (!untrained.empty())
    std::cout << "  no point of " << join(untrained)
              << " in the --train files: " << (untrained.size() == 1 ? "that stage is" : "those stages are")
              << " predicted with the catalog's published values where no fitted stage gives them\n";
  if (folds != 0) {
    std::cout << "\nThe fit leaving fold 1 out (of " << folds
              << "; each point below is predicted by the fit that left its fold out):\n";
  } else {
    std::cout << (cross ? "\nFitted on the --train files:\n" : "\nRefit on the training points:\n");
  }
  print_fits(std::cout, c);
  std::cout << "\n"
            << (cross           ? "Every point of the measured files"
                : folds != 0    ? "Every point, held out in its fold"
                : a.holdout > 0 ? "Held-out points"
                                : "Every point")
            << " (error = (predicted - measured) / measured):\n";
  report::Table t({"stage", "configuration", "size", "regime", "measured", "analytic", "error", "simgrid", "error"});
  std::string last;
  for (const Row& r : rows) {
    if (!r.held && !a.all) continue;
    const auto& p = r.s->point;
    if (!last.empty() && p.stage != last) t.rule();
    last = p.stage;
    const std::string size = fmt_bytes(Bytes(p.bytes)) + (r.held ? "" : " (train)") + (r.s->outlier.empty() ? "" : " *");
    if (!r.skipped.empty()) {
      t.add({p.stage, configuration(p), size, calib::regime_name(r.s->regime), fmt_time(Seconds(p.time_median)), "-", "-", "-",
             "not simulated"});
      continue;
    }
    auto cell = [](double v) { return std::isnan(v) ? std::string("-") : fmt_time(Seconds(v)); };
    auto err = [&](double v) {
      return std::isnan(v) ? std::string("-") : (v >= p.time_median ? "+" : "-") + fmt_f(100 * r.err(v), 1) + "%";
    };
    t.add({p.stage, configuration(p), size, calib::regime_name(r.s->regime), fmt_time(Seconds(p.time_median)), cell(r.analytic),
           err(r.analytic), cell(r.simgrid), err(r.simgrid)});
  }
  t.print(std::cout, "  ");
  for (const Row& r : rows)
    if (r.held && !r.skipped.empty()) {
      std::cout << "  not simulated: " << r.s->point.stage << ": " << r.skipped << "\n";
      break;
    }
  for (const Row& r : rows)
    if ((r.held || a.all) && !r.s->outlier.empty())
      std::cout << "  * outlier (not fitted, not in the MAPE): " << r.s->file << ":" << r.s->point.pointer << ": "
                << r.s->outlier << "\n";
  std::cout << "\nMAPE per stage over the " << evaluated << " points:\n";
  report::Table mt({"stage", "points", "analytic", "simgrid", "cache regime", "DRAM regime", "outliers",
                    "not simulated", "run-to-run", "target"});
  auto with_n = [](const Mape& x) { return x.n ? pct(x.value()) + " (" + std::to_string(x.n) + ")" : std::string("-"); };
  auto mrow = [&](const std::string& name, const StageMape& sm, bool stage) {
    std::string target = "-";
    if (stage) {
      const double bar = target_of(name, sm);
      target = pct(bar) + (sm.analytic.n > 0 && sm.analytic.value() <= bar ? " met" : "");
    }
    mt.add({name, std::to_string(std::max(sm.analytic.n, sm.simgrid.n)), pct(sm.analytic.value()),
            pct(sm.simgrid.value()), with_n(sm.cache), with_n(sm.dram), with_n(sm.outliers), std::to_string(sm.skipped),
            with_n(sm.spread), target});
  };
  for (const auto& st : stages) mrow(st, by_stage[st], true);
  mt.rule();
  mrow("host backend + MPI", host_mpi, false);
  mrow("all", all, false);
  mt.print(std::cout, "  ");
  std::cout << "  (regime columns: analytic engine; MAPE = mean of |predicted - measured| / measured)\n";
  if (all.spread.n > 0)
    std::cout << "  (run-to-run: points measured in several files or rounds are the median of their runs; the column\n"
                 "   is the mean of |run - mean| / mean over those points: the machine's own noise, which no model's\n"
                 "   MAPE against single runs can be expected to beat)\n";
  std::cout << "  (target: the error a stage's model is held to, its run-to-run spread but at least 10%; on real GPUs\n"
               "   3% for single copies and 5% for the pipeline; \"met\" where the analytic MAPE is within it)\n";
  return kOk;
}

}  // namespace

void setup_validate(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand(
      "validate", "Refit a calibration on training points and re-simulate the held-out measured runs (error per stage)");
  auto a = std::make_shared<ValidateArgs>();
  ctx.expects(sub->add_option("measured", a->files, "Measurement files written by hfreduce-bench (not with --compute)")
                  ->check(input_file()),
              "a measurement file");
  ctx.expects(
      sub->add_option("--compute", a->compute,
                      "A calibrated shaped compute model (catalog name or .json file): refit it on the measurements "
                      "its file names, check its values come back, and print each dataset's error in the fit and "
                      "held out"),
      "a compute model name or file");
  ctx.expects(sub->add_option("--calibration", a->calibration, "Calibration file (ffsim calibrate); default: the global --calibration")
                  ->check(input_file()),
              "a calibration file");
  const CLI::Validator holdout(
      [](std::string& v) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || end != v.c_str() + v.size() || std::isnan(x)) return "expected a number in [0, 1), got \"" + v + "\"";
        if (!(x >= 0 && x < 1)) return "expected a number in [0, 1), got " + v;
        return "";
      },
      "FLOAT in [0, 1)");
  ctx.expects(a->holdout_opt =
                  sub->add_option(
                         "--holdout", a->holdout,
                         "Fraction of each series' points held out, spread over its sizes (default 0.3; 0: every point "
                         "in-sample)")
                      ->check(holdout),
              "a number in [0, 1)");
  ctx.expects(sub->add_option("--folds", a->folds,
                              "Cross-validation instead of --holdout: each series' points dealt to K folds in size "
                              "order, each fold predicted by a fit to the others (K fits; every point held out once)")
                  ->check(CLI::Range(2, 100)),
              "a whole number of folds from 2 to 100");
  ctx.expects(a->engine_opt = sub->add_option(
                  "--engine", a->engine,
                  "fluid (analytic is its former name here), simgrid or both (default) for the held-out points"),
              "fluid, simgrid, both or analytic");
  auto* json = sub->add_flag("--json", a->json, "Machine-readable output: points and mape per stage");
  json->excludes(sub->add_flag(
      "--csv", a->csv, "CSV of every point (training and held-out; with --train, every predicted one), SI units"));
  sub->add_flag("--all", a->all, "List the training points too");
  ctx.expects(sub->add_option("--train", a->train,
                              "Fit on every point of these measurement files (another run of the machine, another "
                              "day) and predict every point of the measured files: does one run's calibration "
                              "predict another's? (instead of --holdout)")
                  ->check(input_file()),
              "a measurement file");
  add_fit_threads_option(sub, ctx, a->threads);

  sub->callback([&ctx, a] { ctx.action = [&ctx, a] { return run_validate(ctx, *a); }; });
}

}  // namespace ffsim::cli
