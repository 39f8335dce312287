// SPDX-License-Identifier: Apache-2.0
#include "cli/validate_compute.hpp"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#include "app/compute_calibration.hpp"
#include "calib/gemm_fit.hpp"
#include "cli/app.hpp"
#include "cli/compute_report.hpp"
#include "cli/output.hpp"
#include "config/gemm_reader.hpp"
#include "config/throughput_reader.hpp"
#include "config/train_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"
#include "train/compute.hpp"

namespace ffsim::cli {

namespace {

// Values are written with 17 significant digits (seconds in ns) and the fit is deterministic: a
// refit on the same files gives the same values but for the last bit of the ns scaling. The
// tolerance absorbs that and a compiler's different rounding, nothing a refit could change.
constexpr double kSameValue = 1e-12;

struct Difference {
  std::string pointer;
  double file = 0, refit = 0;
};

double relative(double a, double b) {
  if (a == b) return 0;
  if (std::isnan(a) || std::isnan(b)) return INFINITY;
  return std::fabs(a - b) / std::max(std::fabs(a), std::fabs(b));
}

std::string pct(double v) { return std::isnan(v) ? "-" : fmt_f(100 * v, 1) + "%"; }

// A measurement file the compute model names, relative to the directory the calibration ran in.
std::string measured_file(const config::Reader& m, const std::string& what) {
  const config::Reader f = m.child("file", "the " + what + " file the model was fitted on");
  const std::string path = f.as_string();
  if (!std::filesystem::is_regular_file(path))
    f.fail("expected the " + what + " file the model was fitted on; found \"" + path +
           "\", which is not a file here (paths are relative to the directory `ffsim calibrate` ran in: run "
           "validate there)");
  return path;
}

}  // namespace

int run_validate_compute(Context& ctx, const std::string& model, bool json) {
  const config::Catalog& cat = ctx.published_catalog();
  std::optional<config::CatalogEntry> entry;
  const bool is_file = model.size() > 5 && model.compare(model.size() - 5, 5, ".json") == 0;
  if (is_file) {
    if (!std::filesystem::is_regular_file(model)) throw UsageError("--compute: no such file \"" + model + "\"");
    const config::Document doc = config::Document::parse(config::Document::read_file(model), model, true);
    entry = cat.model_ref(config::kComputeModel, doc.root());
  } else if (const auto* e = cat.find(config::kComputeModel, model)) {
    entry = *e;
  } else {
    std::vector<std::string> shaped;
    for (const auto* x : cat.of_kind(config::kComputeModel))
      if (x->document.root().has("shaped")) shaped.push_back(x->name);
    throw UsageError("--compute: unknown compute model \"" + model + "\"" + did_you_mean(model, shaped) +
                     "; calibrated shaped models: " + (shaped.empty() ? std::string("none") : join(shaped)) +
                     " (or give a .json file)");
  }
  const train::ComputeModel spec = config::parse_compute_model(*entry);
  if (!spec.shaped)
    throw UsageError("--compute: compute model \"" + spec.name + "\" (" + entry->file +
                     ") is not a calibrated shaped model (it has no \"shaped\" block): only those name the "
                     "measurements they were fitted on; write one with ffsim calibrate --throughput ... -o");
  const train::ShapedCalibration& sc = *spec.shaped;

  // The measurements its fit record names: a throughput CSV, and a GEMM CSV with the --gpu model.
  const config::Reader root = entry->document.root();
  const config::Reader meas =
      root.child("shaped").child("fit", "the fit's record (the measurements)").child("measurements");
  std::string thr_file, gemm_file, gpu_name;
  for (const config::Reader& m : meas.elements("measurement files")) {
    if (m.has("gpu")) {
      gemm_file = measured_file(m, "GEMM rates");
      gpu_name = m.child("gpu").as_string();
    } else {
      thr_file = measured_file(m, "training throughputs");
    }
  }
  if (thr_file.empty() || gemm_file.empty())
    meas.fail("expected two measurement files, the training throughputs and the GEMM rates (with \"gpu\"); found " +
              std::string(thr_file.empty() ? "no throughput file" : "no GEMM file"));

  const calib::GemmCsv gcsv = config::load_gemm_csv(gemm_file);
  const calib::GemmFit gfit = calib::fit_gemm(gcsv, config::gemm_gpu(cat, gpu_name), calib::default_gemm_tiles());
  const app::ThroughputCalibration thr =
      app::calibrate_throughput(cat, config::load_throughput_csv(thr_file), gfit.values);

  // Reproduction: every value of the file against the refit.
  std::vector<Difference> diffs;
  double largest = 0;
  int compared = 0;
  auto compare = [&](const std::string& pointer, double file, double refit) {
    ++compared;
    const double d = relative(file, refit);
    largest = std::max(largest, d);
    if (d > kSameValue) diffs.push_back({pointer, file, refit});
  };
  for (const auto& [ff, m] : sc.gemm)
    for (const auto& [fam, p] : m)
      compare("/shaped/gemm/ceiling/" + ff + "/" + fam, p.ceiling, gfit.values.ceiling_of(ff, fam));
  if (!sc.gemm.empty() && !sc.gemm.begin()->second.empty()) {
    const train::GemmParams& p = sc.gemm.begin()->second.begin()->second;
    compare("/shaped/gemm/wave_overhead", p.wave_overhead_s, gfit.values.wave_overhead_s);
    compare("/shaped/gemm/launch", p.launch_s, gfit.values.launch_s);
  }
  compare("/shaped/multipliers/conv", sc.multipliers.conv, thr.fit.values.conv);
  compare("/shaped/multipliers/gemm", sc.multipliers.linear, thr.fit.values.linear);
  compare("/shaped/multipliers/memory", sc.multipliers.memory, thr.fit.values.memory);
  if (!diffs.empty()) {
    const Difference& d = diffs.front();
    std::string command;
    if (root.has("command")) command = root.child("command").as_string();
    throw ConfigError(entry->file, d.pointer + "/value",
                      "expected " + fmt_g(d.refit, 17) + " (what the measurements the file names give: " + gemm_file +
                          " with --gpu " + gpu_name + ", " + thr_file + "), found " + fmt_g(d.file, 17) +
                          (diffs.size() > 1 ? " (and " + std::to_string(diffs.size() - 1) + " more values)" : "") +
                          ": the file is stale; write it again" +
                          (command.empty() ? " with ffsim calibrate --throughput ... -o" : " with: " + command));
  }

  if (json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "validate");
    w.field("compute_model", spec.name);
    w.field("file", entry->file);
    w.field("reproduced", true);
    w.field("values_compared", compared);
    w.field("largest_relative_difference", largest);
    w.key("gemm");
    w.begin_object();
    w.field("file", gemm_file);
    w.field("gpu", gpu_name);
    w.field("points", gfit.all.points);
    w.field("mape", gfit.all.mape);
    w.field("max_abs_error", gfit.all.max_abs);
    write_gemm_datasets_json(w, gfit);
    w.end_object();
    w.key("throughput");
    w.begin_object();
    w.field("file", thr_file);
    write_throughput_errors_json(w, thr.fit);
    w.end_object();
    w.end_object();
    std::cout << '\n';
    return kOk;
  }

  std::cout << "ffsim validate --compute " << spec.name << " (" << entry->file
            << "): the shaped compute model against the measurements it names\n";
  std::cout << "  reproduced: refitted on " << gemm_file << " (--gpu " << gpu_name << ") and " << thr_file
            << ", the file's " << compared << " values come back (largest relative difference " << fmt_g(largest, 3)
            << ")\n";
  std::cout << "\nGEMM rates (" << gfit.all.points
            << " rows; error of the time; held out: refitted without the dataset):\n";
  report::Table g({"dataset", "rows", "excluded", "in fit MAPE", "in fit max", "held-out MAPE", "held-out max"});
  for (const auto& d : gfit.datasets) {
    const bool ho = d.held_out_note.empty();
    g.add({d.dataset, std::to_string(d.rows), std::to_string(d.excluded), d.in_fit.points ? pct(d.in_fit.mape) : "-",
           d.in_fit.points ? pct(d.in_fit.max_abs) : "-", ho ? pct(d.held_out.mape) : "- (" + d.held_out_note + ")",
           ho ? pct(d.held_out.max_abs) : "-"});
  }
  g.rule();
  g.add({"all", std::to_string(gcsv.rows.size()), "", pct(gfit.all.mape), pct(gfit.all.max_abs), "", ""});
  g.print(std::cout, "  ");
  std::cout << "\nTraining throughputs (" << thr.fit.all.points
            << " rows; error of the step time; held out: refitted without the dataset; network out: within the "
               "dataset, each network predicted by a fit on its others):\n";
  report::Table t({"dataset", "rows", "used", "in fit MAPE", "in fit max", "held-out MAPE", "held-out max",
                   "network out MAPE", "network out max"});
  for (const auto& d : thr.fit.datasets) {
    const int used = d.rows - d.excluded;
    t.add({d.dataset, std::to_string(d.rows), std::to_string(used), used ? pct(d.in_fit.mape) : "-",
           used ? pct(d.in_fit.max_abs) : "-", d.held_out.points ? pct(d.held_out.mape) : "-",
           d.held_out.points ? pct(d.held_out.max_abs) : "-", d.network_out.points ? pct(d.network_out.mape) : "-",
           d.network_out.points ? pct(d.network_out.max_abs) : "-"});
  }
  t.rule();
  t.add({"all", std::to_string(thr.csv.rows.size()), std::to_string(thr.fit.all.points), pct(thr.fit.all.mape),
         pct(thr.fit.all.max_abs), "", "", "", ""});
  t.print(std::cout, "  ");
  std::cout
      << "  (MAPE = mean of |model - measured| / measured; the rows left out and why: ffsim calibrate --throughput "
      << thr_file << " --gemm " << gemm_file << " --gpu " << gpu_name << ")\n";
  return kOk;
}

}  // namespace ffsim::cli
