// `ffsim calibrate <measured.json...> --node <model> -o <file>`: fit the simulator's parameters to
// measured runs and write a calibration file (catalog kind "calibration").
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>

#include "app/compute_calibration.hpp"
#include "app/engines.hpp"
#include "app/kinds.hpp"
#include "calib/calibration_file.hpp"
#include "calib/gemm_fit.hpp"
#include "calib/kineto.hpp"
#include "calib/nccl_tests.hpp"
#include "calib/scope.hpp"
#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/compute_report.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "config/calibration_reader.hpp"
#include "config/gemm_reader.hpp"
#include "config/kineto_reader.hpp"
#include "config/measurement_reader.hpp"
#include "config/nccl_tests_reader.hpp"
#include "config/throughput_reader.hpp"
#include "config/train_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"
#include "core/version.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"
#include "train/compute.hpp"

namespace ffsim::cli {

namespace {

struct CalibrateArgs {
  std::vector<std::string> files;
  std::string node;
  std::string out;
  std::string name;
  std::string command;
  bool json = false;
  std::string kineto;  ///< --kineto: a torch.profiler trace
  std::string gemm;    ///< --gemm: a CSV of measured GEMM rates
  std::string gpu;     ///< --gpu: the GPU model the GEMM model runs on
  std::string throughput;  ///< --throughput: a CSV of measured training throughputs
  int threads = 0;         ///< --threads: the fits' simulations at once (0: the machine's hardware threads)
};

// 17 significant digits: the value read back is the fitted one to the last bit but the ns scaling
// (ffsim validate --compute refits and compares).
std::string seconds_fact(double s) { return fmt_g(s * 1e9, 17) + "ns"; }

// The calibrated shaped compute model (a compute_model entry extending "default"; read by
// config::parse_compute_model): the GEMM fit's parameters, the throughput fit's multipliers, the GPU
// models and precisions of the rows it used, and the fit's record (files, errors).
void write_shaped_model(std::ostream& os, const CalibrateArgs& a, const std::string& name, const calib::GemmFit& gemm,
                        const app::ThroughputCalibration& thr) {
  std::set<std::string> gpus, families, form_factors;
  for (std::size_t i = 0; i < thr.csv.rows.size(); ++i) {
    const auto& r = thr.csv.rows[i];
    if (!r.excluded.empty() || !thr.cases[i].modelled) continue;
    gpus.insert(r.gpu);
    families.insert(train::gemm_family(r.precision));
    form_factors.insert(thr.cases[i].form_factor);
  }
  const std::string gemm_src = "fitted by `ffsim calibrate --gemm " + a.gemm + " --gpu " + a.gpu + "` (" +
                               std::to_string(gemm.all.points) + " GEMM rates; MAPE " + fmt_f(100 * gemm.all.mape, 1) +
                               "%); scope: cuBLAS on the sm80 SM of " + a.gpu +
                               ", [I] applied to every GPU model listed in \"gpus\" (the same SM), each by the "
                               "ceiling of its form factor";
  const std::string thr_src = "fitted by `ffsim calibrate --throughput " + a.throughput +
                              "` (weighted least squares of the "
                              "relative step-time error on " +
                              std::to_string(thr.fit.all.points) +
                              " training throughputs of one GPU or per GPU of one node; in-fit MAPE " +
                              fmt_f(100 * thr.fit.all.mape, 1) + "%)";
  report::JsonWriter w(os);
  w.begin_object();
  w.field("kind", "compute_model");
  w.field("name", name);
  w.field("extends", "default");
  w.field("description",
          "The shaped compute model calibrated on measured training throughputs of one GPU or one node (" +
              a.throughput + ") and GEMM rates (" + a.gemm +
              "): every product timed from its shape, memory-bound work by "
              "roofline, each kind times a fitted multiplier; for the GPU models and precisions listed "
              "under shaped");
  w.field("command", a.command);
  w.field("ffsim_version", version());
  w.key("shaped");
  w.begin_object();
  const auto fact = [&](const std::string& key, const auto& value, const std::string& source) {
    w.key(key);
    w.begin_object();
    w.field("value", value);
    w.field("source", source);
    w.end_object();
  };
  w.key("gpus");
  w.begin_object();
  w.key("value");
  w.begin_array();
  for (const auto& g : gpus) w.value(g);
  w.end_array();
  w.field("source", "the GPU models of the rows " + a.throughput + " fitted");
  w.end_object();
  w.key("gemm");
  w.begin_object();
  w.key("ceiling");
  w.begin_object();
  for (const auto& ff : form_factors) {
    const auto m = gemm.values.ceiling.find(ff);
    if (m == gemm.values.ceiling.end()) continue;
    w.key(ff);
    w.begin_object();
    for (const auto& f : families) {
      const auto it = m->second.find(f);
      if (it == m->second.end()) continue;
      const auto& c = it->second;
      const auto& held = gemm.values.at_bound;
      const bool at_one = std::find(held.begin(), held.end(), "ceiling " + ff + " " + f) != held.end();
      fact(f, c.value,
           c.derived.empty() ? gemm_src + "; the " + std::to_string(c.rows) + " " + ff + " " + f + " rows" +
                                   (at_one ? ", held at 1 (its free fit was above the peak)" : "")
                             : gemm_src + "; no " + ff + " " + f + " rows: derived as " + c.derived);
    }
    w.end_object();
  }
  w.end_object();
  fact("wave_overhead", seconds_fact(gemm.values.wave_overhead_s), gemm_src);
  fact("launch", seconds_fact(gemm.values.launch_s), gemm_src);
  fact("split_k_min", app::kSplitKMin,
       "[I] app::kSplitKMin: two of the 128-deep k-blocks of CUTLASS's sm80 tensor-op kernels; not fitted");
  w.end_object();
  w.key("multipliers");
  w.begin_object();
  fact("conv", thr.fit.values.conv, thr_src);
  fact("gemm", thr.fit.values.linear, thr_src);
  fact("memory", thr.fit.values.memory, thr_src);
  w.end_object();
  w.key("fit");  // a record for people: the files and the errors (leave one dataset out)
  w.begin_object();
  w.key("measurements");
  w.begin_array();
  w.begin_object();
  w.field("file", a.throughput);
  w.field("rows", thr.csv.rows.size());
  w.field("used", thr.fit.all.points);
  w.end_object();
  w.begin_object();
  w.field("file", a.gemm);
  w.field("gpu", a.gpu);
  w.field("used", gemm.all.points);
  w.end_object();
  w.end_array();
  write_throughput_errors_json(w, thr.fit);
  w.end_object();
  w.end_object();
  w.end_object();
  os << '\n';
}

// --kineto TRACE and/or --gemm CSV --gpu MODEL and/or --throughput CSV: the compute model's inputs
// and fits (issue 29), printed; with --throughput and -o, the calibrated shaped compute model is
// written too (write_shaped_model).
int run_calibrate_compute(Context& ctx, const CalibrateArgs& a) {
  if (!a.out.empty() && a.throughput.empty())
    throw UsageError(
        "-o: " + std::string(a.kineto.empty() ? "--gemm" : "--kineto") +
        " alone writes no file; -o writes the shaped compute model of --throughput CSV --gemm CSV --gpu MODEL "
        "(or, with measured hfreduce-bench files and --node, a node calibration)");
  if (!a.files.empty() || !a.node.empty())
    throw UsageError(
        std::string(a.kineto.empty() ? "--gemm" : "--kineto") +
        ": reads a profiler trace or GEMM measurements, not hfreduce-bench files: give the measured files, --node "
        "and -o in a command of their own");
  if (!a.gemm.empty() && a.gpu.empty())
    throw UsageError(
        "--gemm: expected --gpu MODEL too (the GPU model whose SMs and peaks the GEMM model uses, e.g. "
        "a100_sxm4_40gb)");
  if (a.gemm.empty() && !a.gpu.empty()) throw UsageError("--gpu: used only with --gemm CSV (the GEMM model's fit)");
  if (a.threads != 0)
    throw UsageError("--threads: used by the fits of hfreduce-bench measurements (simulated points), not by " +
                     std::string(!a.kineto.empty() ? "--kineto"
                                 : !a.gemm.empty() ? "--gemm"
                                                   : "--throughput"));
  if (!a.throughput.empty() && a.gemm.empty())
    throw UsageError(
        "--throughput: expected --gemm CSV --gpu MODEL too (the shaped compute model times every product with the "
        "GEMM model fitted there, e.g. --gemm ../shared/reference/compute/gemm_a100.csv --gpu a100_sxm4_40gb)");
  std::optional<calib::GemmCsv> csv;
  std::optional<calib::GemmFit> fit;
  if (!a.gemm.empty()) {
    const calib::GemmGpu gpu = config::gemm_gpu(ctx.published_catalog(), a.gpu);
    csv = config::load_gemm_csv(a.gemm);
    fit = calib::fit_gemm(*csv, gpu, calib::default_gemm_tiles());
  }
  std::optional<calib::KinetoTrace> trace;
  if (!a.kineto.empty()) trace = config::load_kineto(a.kineto);
  std::string name = a.name;
  if (!a.out.empty()) {
    check_output_path("-o", a.out, {a.throughput, a.gemm, a.kineto});
    if (name.empty()) name = std::filesystem::path(a.out).stem().string();
    if (!config::is_snake_case(name))
      throw UsageError("--name: expected a snake_case name ([a-z][a-z0-9_]*) for the compute model, got \"" + name +
                       "\"" +
                       (a.name.empty() ? " (from -o " + a.out + "'s file name; give --name NAME)" : std::string()));
    if (const auto* e = ctx.published_catalog().find(config::kComputeModel, name)) {
      std::error_code ec;
      if (!std::filesystem::equivalent(e->file, a.out, ec))
        throw UsageError(
            "--name: the catalog has a compute_model \"" + name + "\" already (" + e->file +
            "); names are unique across the catalog: give --name another name, or -o that file to replace it");
    }
  }
  std::optional<app::ThroughputCalibration> thr;
  if (!a.throughput.empty())
    thr = app::calibrate_throughput(ctx.published_catalog(), config::load_throughput_csv(a.throughput), fit->values);
  if (thr && !a.out.empty()) {
    if (thr->fit.all.points == 0)
      throw UsageError("--throughput: " + a.throughput + " has no row the fit can use; nothing to write");
    std::ostringstream text;
    write_shaped_model(text, a, name, *fit, *thr);
    // What is written must be what the catalog reads: checked on the text before it is written.
    const config::Document doc = config::Document::parse(text.str(), a.out, /*require_sources=*/true);
    (void)config::parse_compute_model(ctx.published_catalog().model_ref(config::kComputeModel, doc.root()));
    write_output("-o", a.out, [&](std::ostream& os) { os << text.str(); });
  }
  if (a.json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "calibrate");
    w.key("kineto");
    if (trace) {
      w.begin_object();
      write_kineto_json(w, *trace, fit ? &*fit : nullptr);
      w.end_object();
    } else {
      w.null();
    }
    w.key("gemm");
    if (fit) {
      w.begin_object();
      write_gemm_fit_json(w, *csv, *fit);
      w.end_object();
    } else {
      w.null();
    }
    w.key("throughput");
    if (thr) {
      w.begin_object();
      write_throughput_fit_json(w, *thr);
      w.end_object();
    } else {
      w.null();
    }
    w.end_object();
    std::cout << '\n';
    return kOk;
  }
  if (fit) print_gemm_fit(std::cout, *csv, *fit);
  if (fit && trace) std::cout << "\n";
  if (trace) print_kineto(std::cout, *trace, fit ? &*fit : nullptr);
  if (thr) {
    std::cout << "\n";
    print_throughput_fit(std::cout, *thr);
  }
  if (thr && !a.out.empty())
    std::cout << "\nWrote compute model \"" << name << "\" to " << a.out
              << "; a workload uses it with \"compute_model\": \"" << name << "\"\n";
  return kOk;
}

void write_calibration(std::ostream& os, const CalibrateArgs& a, const calib::BenchModel& m,
                       const std::vector<calib::MeasurementFile>& files, const std::vector<calib::Sample>& samples,
                       const calib::Calibration& c, const std::vector<calib::Override>& overrides) {
  report::JsonWriter w(os);
  w.begin_object();
  w.field("kind", calib::kCalibration);
  w.field("name", a.name);
  w.field("description", "The simulator's parameters for node model " + m.node.name + ", fitted by ffsim calibrate to " +
                             std::to_string(files.size()) + " measurement file" + (files.size() == 1 ? "" : "s"));
  w.field("node", m.node.name);
  w.field("command", a.command);
  w.field("ffsim_version", version());
  w.key("measurements");
  w.begin_array();
  for (const auto& f : files) {
    w.begin_object();
    w.field("file", f.file);
    w.field("machine", f.machine.name);
    w.field("date", f.date);
    w.field("points", f.points.size());
    w.end_object();
  }
  w.end_array();
  w.key("regimes");
  w.begin_object();
  w.key("last_level_cache");
  if (m.llc > 0) w.value(fmt_g(m.llc / 1048576.0, 7) + "MiB");
  else w.null();
  w.field("rule", calib_regime_rule(m));
  w.end_object();
  w.key("left_out");  // points no fit uses, and why
  w.begin_array();
  for (const auto& smp : samples) {
    const std::string why = calib::not_simulated(smp.point).empty() ? smp.outlier : calib::not_simulated(smp.point);
    if (why.empty()) continue;
    w.begin_object();
    w.field("file", smp.file);
    w.field("pointer", smp.point.pointer);
    w.field("stage", smp.point.stage);
    w.field("reason", why);
    w.end_object();
  }
  w.end_array();
  // Points no fit uses but the simulator rebuilds (e.g. the DRAM regime's pipelines, whole
  // allreduces): what the calibration predicts for them.
  w.key("predictions");
  w.begin_array();
  {
    std::set<std::pair<std::string, std::string>> used;
    for (const auto& f : c.fits)
      for (const auto& p : f.points) used.insert({p.file, p.pointer});
    const auto fluid_engine = app::make_engine("fluid");
    eval::Engine& fluid = *fluid_engine;
    for (const auto& smp : samples) {
      if (!calib::not_simulated(smp.point).empty() || !smp.outlier.empty() || used.count({smp.file, smp.point.pointer})) continue;
      const double t = calib::simulate(m, calib::params_for(c, smp.point, smp.regime), smp.point, fluid);
      w.begin_object();
      w.field("file", smp.file);
      w.field("pointer", smp.point.pointer);
      w.field("stage", smp.point.stage);
      w.field("regime", calib::regime_name(smp.regime));
      w.field("bytes", smp.point.bytes);
      w.field("measured_s", smp.point.time_median);
      w.field("model_s", t);
      w.field("residual", (t - smp.point.time_median) / smp.point.time_median);
      w.end_object();
    }
  }
  w.end_array();
  w.key("fits");
  w.begin_array();
  for (const auto& f : c.fits) {
    w.begin_object();
    w.field("name", f.name);
    w.field("stages", f.stages);
    w.field("group", f.group);
    w.field("regime", f.levels ? "levels" : calib::regime_name(f.regime));
    w.field("method", f.method);
    w.field("rms_relative_residual", f.rms);
    w.field("max_relative_residual", f.max_abs);
    w.key("values");
    w.begin_array();
    for (const auto& v : f.values) {
      w.begin_object();
      w.field("name", v.name);
      w.key("value");
      if (std::isnan(v.value)) w.null();
      else if (v.number) w.value(v.value);
      else w.value(calib::unit_string(v.value, v.bandwidth));
      w.key("value_si");
      if (std::isnan(v.value)) w.null();
      else w.value(v.value);
      w.field("status", v.status);
      w.field("applied", v.applied);
      w.end_object();
    }
    w.end_array();
    w.key("points");
    w.begin_array();
    for (const auto& p : f.points) {
      w.begin_object();
      w.field("file", p.file);
      w.field("pointer", p.pointer);
      w.field("bytes", p.bytes);
      w.field("measured_s", p.measured);
      w.field("model_s", p.model);
      w.field("residual", p.residual());
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("overrides");
  w.begin_array();
  for (const auto& o : overrides) {
    w.begin_object();
    w.field("kind", o.kind);
    w.field("name", o.name);
    w.field("pointer", o.pointer);
    w.field("value", o.value);
    w.field("source", o.source);
    w.field("parameter", o.param);
    w.field("scope", o.scope);
    w.field("scope_reason", o.scope_reason);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  os << '\n';
}

// nccl-tests all_reduce_perf logs of a cluster: NCCL's ring fitted per log (calib/nccl_tests.hpp).
int run_calibrate_nccl(Context& ctx, CalibrateArgs& a, const calib::BenchModel& m) {
  std::vector<calib::NcclTestsLog> logs;
  const int gpus = static_cast<int>(m.node.gpus.size());
  for (const auto& f : a.files) {
    logs.push_back(config::load_nccl_tests(f));
    const auto& l = logs.back();
    for (std::size_t h = 0; h < l.hosts.size(); ++h)
      if (l.ranks_per_host[h] > gpus)
        throw ConfigError(f, "", "host " + l.hosts[h] + " runs " + std::to_string(l.ranks_per_host[h]) + " ranks, but node model " +
                                     m.node.name + " has " + std::to_string(gpus) + " GPUs: calibrate with the node model of that cluster");
  }
  if (a.name.empty()) a.name = m.node.name + "_nccl";
  if (!config::is_snake_case(a.name)) throw UsageError("--name: expected a snake_case name ([a-z][a-z0-9_]*), got \"" + a.name + "\"");
  std::vector<calib::NcclRingFit> fits;
  for (const auto& l : logs) fits.push_back(calib::fit_nccl_ring(l));
  auto group = [](const calib::NcclTestsLog& l) {
    return std::to_string(l.ranks) + (l.ranks == 1 ? " rank on " : " ranks on ") + std::to_string(l.hosts.size()) +
           (l.hosts.size() == 1 ? " node" : " nodes");
  };
  const std::string not_applied =
      "recorded, not applied: the simulator derives NCCL's rates from the node and fabric models, and no fact of them is "
      "this cluster-wide figure; compare it with ffsim collective --algo nccl_ring on a scenario of this cluster";
  // Written to a string first: the file must be what `ffsim check` accepts, checked on the text
  // before it is written (-o may be a device or a pipe, which cannot be read back).
  std::ostringstream text;
  {
    std::ostream& os = text;
    report::JsonWriter w(os);
    w.begin_object();
    w.field("kind", calib::kCalibration);
    w.field("name", a.name);
    w.field("description", "NCCL's ring allreduce on a cluster of node model " + m.node.name + ", fitted by ffsim calibrate to " +
                               std::to_string(logs.size()) + " nccl-tests all_reduce_perf log" + (logs.size() == 1 ? "" : "s"));
    w.field("node", m.node.name);
    w.field("command", a.command);
    w.field("ffsim_version", version());
    w.key("measurements");
    w.begin_array();
    for (const auto& l : logs) {
      w.begin_object();
      w.field("file", l.file);
      w.field("machine", join(l.hosts, "+"));
      w.field("date", "");  // nccl-tests prints none
      w.field("points", 2 * l.rows.size());
      w.end_object();
    }
    w.end_array();
    w.key("regimes");
    w.begin_object();
    w.key("last_level_cache");
    w.null();
    w.field("rule", "nccl-tests logs: no cache regime (the fit is of the whole cluster's allreduce)");
    w.end_object();
    w.key("left_out");
    w.begin_array();
    w.end_array();
    w.key("predictions");
    w.begin_array();
    w.end_array();
    w.key("fits");
    w.begin_array();
    for (std::size_t i = 0; i < logs.size(); ++i) {
      const auto& l = logs[i];
      const auto& f = fits[i];
      w.begin_object();
      w.field("name", "nccl ring allreduce");
      w.field("stages", "allreduce");
      w.field("group", group(l));
      w.field("regime", "none");
      w.field("method", "linear least squares of time = 2(n-1) x step latency + 2(n-1)/n x bytes / bus bandwidth (NCCL's ring; "
                        "relative residuals), out-of-place and in-place times");
      w.field("rms_relative_residual", f.rms);
      w.field("max_relative_residual", f.max_abs);
      w.key("values");
      w.begin_array();
      for (int k = 0; k < 2; ++k) {
        const bool bw = k == 0;
        const double v = bw ? f.bus_bandwidth : f.step_latency;
        w.begin_object();
        w.field("name", bw ? "nccl_bus_bandwidth" : "nccl_step_latency");
        w.field("value", calib::unit_string(v, bw));
        w.field("value_si", v);
        w.field("status", (bw ? f.bandwidth_status : f.latency_status) + "; scope machine (this cluster); " + not_applied);
        w.field("applied", false);
        w.end_object();
      }
      w.end_array();
      w.key("points");
      w.begin_array();
      for (const auto& r : l.rows)
        for (int k = 0; k < 2; ++k) {
          const double model = calib::nccl_ring_time(l.ranks, r.bytes, f.bus_bandwidth, f.step_latency);
          w.begin_object();
          w.field("file", l.file);
          w.field("pointer", "line " + std::to_string(r.line) + (k == 0 ? " out-of-place" : " in-place"));
          w.field("bytes", r.bytes);
          w.field("measured_s", r.time_s[k]);
          w.field("model_s", model);
          w.field("residual", (model - r.time_s[k]) / r.time_s[k]);
          w.end_object();
        }
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.key("overrides");
    w.begin_array();
    w.end_array();
    w.end_object();
    os << '\n';
  }
  {
    config::Catalog copy = ctx.published_catalog();
    config::apply_calibration(copy, config::parse_calibration(config::Document::parse(text.str(), a.out, false)));
  }
  write_output("-o", a.out, [&](std::ostream& os) { os << text.str(); });
  std::cout << "ffsim calibrate: node model " << m.node.name << ", " << logs.size() << " nccl-tests all_reduce_perf log"
            << (logs.size() == 1 ? "" : "s") << " (NCCL's ring: time = 2(n-1) x step latency + 2(n-1)/n x bytes / bus bandwidth)\n\n";
  report::Table t({"log", "ranks", "hosts", "device", "sizes", "bus bandwidth", "step latency", "RMS", "max", "log's avg busbw"});
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto& l = logs[i];
    const auto& f = fits[i];
    auto mark = [](const std::string& status) { return status == "fitted" ? std::string() : " (" + status.substr(0, status.find(':')) + ")"; };
    t.add({l.file, std::to_string(l.ranks), std::to_string(l.hosts.size()) + " (" + join(l.hosts) + ")",
           l.devices.empty() ? "-" : l.devices.front(),
           std::to_string(l.rows.size()) + " (" + fmt_bytes(Bytes(l.rows.front().bytes)) + " to " + fmt_bytes(Bytes(l.rows.back().bytes)) + ")",
           calib_value(f.bus_bandwidth, true) + mark(f.bandwidth_status), calib_value(f.step_latency, false) + mark(f.latency_status),
           fmt_f(100 * f.rms, 1) + "%", fmt_f(100 * f.max_abs, 1) + "%",
           l.avg_busbw_Bps > 0 ? calib_value(l.avg_busbw_Bps, true) : "-"});
  }
  t.print(std::cout, "  ");
  std::cout << "\nWhat these points cannot pin:\n"
               "  - which hop binds: the ring's bus bandwidth is its slowest link's (NVLink, PCIe or the NIC), one figure per\n"
               "    rank and node count; intra- and inter-node rates come apart only with logs of one node and of several\n"
               "  - NCCL's algorithm and protocol per size (ring or tree; LL, LL128 or Simple) are not in the log: the fit\n"
               "    takes the ring with one latency per step, and small sizes, where NCCL switches, show in the residuals\n"
               "  - the node model's facts: the values are recorded in " << a.out << " (scope machine: this cluster), no fact\n"
               "    is overridden, and --calibration " << a.out << " changes nothing\n";
  return kOk;
}

int run_calibrate(Context& ctx, CalibrateArgs a) {
  if (!a.kineto.empty() || !a.gemm.empty() || !a.gpu.empty() || !a.throughput.empty())
    return run_calibrate_compute(ctx, a);
  if (a.files.empty()) throw UsageError("measured is required (or --kineto TRACE, or --gemm CSV --gpu MODEL)");
  if (a.node.empty()) throw UsageError("--node is required");
  if (a.out.empty()) throw UsageError("-o,--out is required");
  const config::Catalog& cat = ctx.published_catalog();
  if (!cat.find(app::node_kind(), a.node)) {
    const auto valid = cat.names(app::node_kind());
    throw UsageError("--node: unknown node model \"" + a.node + "\"" + did_you_mean(a.node, valid) + "; valid: " + join(valid));
  }
  if (!a.name.empty() && !config::is_snake_case(a.name))
    throw UsageError("--name: expected a snake_case name ([a-z][a-z0-9_]*), got \"" + a.name + "\"");
  for (std::size_t i = 0; i < a.files.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (std::filesystem::equivalent(a.files[i], a.files[j], ec))
        throw UsageError("measured: " + a.files[i] + " is given twice (also as " + a.files[j] +
                         "); each run counts once in the fit: give each file once");
    }
  {
    std::vector<std::string> inputs = a.files;
    inputs.push_back(ctx.calibration);
    check_output_path("-o", a.out, inputs);
  }
  const calib::BenchModel m = config::make_bench_model(cat, a.node);
  {  // hfreduce-bench JSON or nccl-tests logs: one kind per calibration
    std::size_t logs = 0;
    for (const auto& f : a.files) logs += config::is_nccl_tests_log(config::Document::read_file(f)) ? 1 : 0;
    if (logs > 0 && logs < a.files.size())
      throw UsageError("measured: " + std::to_string(logs) + " of the " + std::to_string(a.files.size()) +
                       " files are nccl-tests logs and the others not: calibrate a cluster's nccl-tests logs and hfreduce-bench "
                       "measurements separately");
    if (logs > 0) {
      const int rc = run_calibrate_nccl(ctx, a, m);
      ctx.calibration_not_applied("calibrate fits from the node model's published values; a calibration file's values are "
                                  "not applied");
      print_calibration(std::cout, ctx);
      return rc;
    }
  }
  std::vector<calib::MeasurementFile> files;
  for (const auto& f : a.files) files.push_back(config::load_measurement(f));
  const auto samples = calib::samples_of(m, files);
  std::vector<calib::Sample> usable;
  std::size_t outliers = 0;
  for (const auto& s : samples) {
    outliers += s.outlier.empty() ? 0 : 1;
    if (calib::not_simulated(s.point).empty() && s.outlier.empty()) usable.push_back(s);
  }
  const calib::Calibration c = calib::calibrate(m, usable, *app::make_engine("fluid"), fit_threads(a.threads));
  if (a.name.empty()) a.name = m.node.name;
  if (!config::is_snake_case(a.name)) throw UsageError("--name: expected a snake_case name ([a-z][a-z0-9_]*), got \"" + a.name + "\"");
  const auto overrides = calib::node_overrides(m, c, a.out);
  // The file must be what `ffsim check` accepts and what --calibration applies: checked on the
  // text before it is written (-o may be a device or a pipe, which cannot be read back).
  std::ostringstream text;
  write_calibration(text, a, m, files, samples, c, overrides);
  config::Catalog copy = cat;
  config::apply_calibration(copy, config::parse_calibration(config::Document::parse(text.str(), a.out, false)));
  write_output("-o", a.out, [&](std::ostream& os) { os << text.str(); });
  if (a.json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "calibrate");
    w.field("out", a.out);
    w.field("name", a.name);
    w.field("node", m.node.name);
    w.field("files", files.size());
    w.field("points_fitted", usable.size());
    w.field("outliers", outliers);
    w.field("regime_rule", calib_regime_rule(m));
    w.key("parameters");
    std::vector<Record> params;
    const calib::ParamSet pub = calib::published(m), fit = calib::node_params(c);
    for (int j = 0; j < calib::kParams; ++j) {
      const auto p = static_cast<calib::Param>(j);
      auto num = [](double v) { return std::isnan(v) ? Cell(nullptr) : Cell(v); };
      params.push_back({{"parameter", std::string(calib::param_name(p))},
                        {"unit", std::string(calib::is_bandwidth(p) ? "B/s" : "s")},
                        {"published", num(calib::at(pub, p))},
                        {"calibrated", num(calib::at(fit, p))}});
    }
    write_records_json(w, params);
    w.key("overrides");
    std::vector<Record> ov;
    for (const auto& o : overrides)
      ov.push_back({{"kind", o.kind}, {"name", o.name}, {"pointer", o.pointer}, {"value", o.value}});
    write_records_json(w, ov);
    w.end_object();
    return kOk;
  }

  std::cout << "ffsim calibrate: node model " << m.node.name << ", " << usable.size() << " points of " << files.size()
            << " file" << (files.size() == 1 ? "" : "s") << " fitted (" << outliers
            << " non-monotone outliers and the points the simulator does not rebuild left out; ffsim validate lists them)\n";
  std::cout << "  regimes: " << calib_regime_rule(m) << "\n\n";
  print_fits(std::cout, c);
  std::cout << "\nThe node model's values (DRAM regime; --calibration " << a.out << " applies them):\n";
  report::Table t({"parameter", "published", "calibrated"});
  const calib::ParamSet pub = calib::published(m), fit = calib::node_params(c);
  for (int j = 0; j < calib::kParams; ++j) {
    const auto p = static_cast<calib::Param>(j);
    auto show = [&](double v) { return std::isnan(v) ? std::string("-") : calib_value(v, calib::is_bandwidth(p)); };
    bool overridden = false;
    for (const auto& o : overrides) overridden = overridden || o.value == calib::unit_string(calib::at(fit, p), calib::is_bandwidth(p));
    t.add({calib::param_name(p), show(calib::at(pub, p)), overridden ? show(calib::at(fit, p)) : "(kept)"});
  }
  t.print(std::cout, "  ");
  std::cout << "  " << overrides.size() << " facts overridden; `ffsim --calibration " << a.out
            << " models --sources` shows each with its fit\n";
  ctx.calibration_not_applied("calibrate fits from the node model's published values; a calibration file's values are not "
                              "applied");
  print_calibration(std::cout, ctx);
  return kOk;
}

}  // namespace

void setup_calibrate(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("calibrate",
                                 "Fit the simulator's parameters to measured runs (hfreduce-bench JSON), read a "
                                 "profiler trace (--kineto) or fit the GEMM model (--gemm)");
  auto a = std::make_shared<CalibrateArgs>();
  ctx.expects(sub->add_option("measured", a->files, "Measurement files written by hfreduce-bench")->check(input_file()),
              "a measurement file");
  ctx.expects(sub->add_option("--node", a->node, "Node model of the measured machine (e.g. epyc_zen5_2c_vm)"),
              "a node model name");
  ctx.expects(sub->add_option("-o,--out", a->out, "Calibration file to write (e.g. models/calibrated/<name>.json)"),
              "a file name");
  ctx.expects(sub->add_option("--name", a->name, "Name of the calibration (default: the node model's)"),
              "a snake_case name ([a-z][a-z0-9_]*)");
  ctx.expects(sub->add_option("--kineto", a->kineto,
                              "A torch.profiler Chrome trace (JSON or gzipped JSON): GPU kernel time by "
                              "class and step, and the shaped GEMMs' rates")
                  ->check(input_file()),
              "a trace file (.json or .json.gz)");
  ctx.expects(sub->add_option("--gemm", a->gemm,
                              "A CSV of measured GEMM rates (source,gpu,dtype,M,N,K,tflops,...,kind): fit the "
                              "GEMM shape model")
                  ->check(input_file()),
              "a CSV file");
  ctx.expects(sub->add_option("--gpu", a->gpu, "GPU model of the GEMM model (with --gemm; e.g. a100_sxm4_40gb)"),
              "a GPU model name");
  ctx.expects(
      sub->add_option("--throughput", a->throughput,
                      "CSV of measured training throughputs (e.g. models/measured/a100-public-throughputs.csv): "
                      "fit the shaped compute model's multipliers (with --gemm and --gpu)")
          ->check(input_file()),
      "a CSV file");
  add_fit_threads_option(sub, ctx, a->threads);
  sub->add_flag("--json", a->json, "Machine-readable report of the fit on stdout (the calibration file is written as without it)");
  sub->callback([&ctx, a] {
    a->command = "ffsim calibrate";
    for (const auto& f : a->files) a->command += " " + f;
    if (!a->throughput.empty())
      a->command += " --throughput " + a->throughput + " --gemm " + a->gemm + " --gpu " + a->gpu;
    else
      a->command += " --node " + a->node;
    a->command += " -o " + a->out + (a->name.empty() ? "" : " --name " + a->name);
    ctx.action = [&ctx, a] { return run_calibrate(ctx, *a); };
  });
}

}  // namespace ffsim::cli
