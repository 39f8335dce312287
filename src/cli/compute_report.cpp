// SPDX-License-Identifier: Apache-2.0
#include "cli/compute_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/format.hpp"
#include "core/spell.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

namespace {

using calib::KernelClass;
using calib::kKernelClasses;

std::string ms(double us) { return fmt_f(us / 1000.0, 3) + " ms"; }
std::string pct(double part, double whole) { return whole > 0 ? fmt_f(100.0 * part / whole, 1) + "%" : "-"; }
std::string cls(int c) { return std::string(calib::kernel_class_name(static_cast<KernelClass>(c))); }

// The model's time of a shaped GEMM (every call), or NaN with the reason.
double predicted_s(const calib::KinetoGemm& g, const calib::GemmFit& fit, std::string* why) {
  const std::string p = calib::gemm_precision(g);
  if (p.empty()) {
    *why = "precision unknown (kernel " + g.kernel.substr(0, 40) + ")";
    return NAN;
  }
  calib::GemmRow r;
  r.precision = p;
  r.shape = {g.batch, g.m, g.n, g.k};
  const double t = calib::gemm_model_time(r, fit.gpu, fit.values);
  if (std::isnan(t)) {
    *why = "no " + fit.gpu.form_factor + " " + p + " ceiling in the fit (" + fit.file + " has no such rows)";
    return NAN;
  }
  return t * static_cast<double>(g.calls);
}

}  // namespace

void print_kineto(std::ostream& os, const calib::KinetoTrace& t, const calib::GemmFit* fit) {
  const auto& s = t.sums;
  os << "ffsim calibrate --kineto " << t.file << ": "
     << (t.device_name.empty() ? "GPU (no deviceProperties)" : t.device_name) << ", device " << t.device
     << (t.sms > 0 ? ", " + std::to_string(t.sms) + " SMs" : "") << "\n";
  const double window = t.gpu_last_us - t.gpu_first_us;
  os << "  " << s.total_count() << " GPU events (" << (s.total_count() - s.count[static_cast<int>(KernelClass::Memcpy)])
     << " kernels, " << s.count[static_cast<int>(KernelClass::Memcpy)] << " memcpy/memset; " << t.zero_duration
     << " of duration 0), " << ms(s.total_us()) << " of GPU time summed over streams\n";
  os << "  GPU timeline: " << ms(window) << " from its first event to its last; busy " << ms(t.busy_us) << " ("
     << pct(t.busy_us, window) << ", the union of the events' intervals), idle " << ms(window - t.busy_us) << "\n\n";

  double step_span = 0;
  for (const auto& st : t.steps) step_span += st.dur_us;
  calib::ClassSums in_steps;
  for (const auto& st : t.steps)
    for (int c = 0; c < kKernelClasses; ++c)
      in_steps.time_us[c] += st.sums.time_us[c], in_steps.count[c] += st.sums.count[c];
  os << "Kernel time by class (first matching rule of the name table; docs/calibrate-compute.md):\n";
  report::Table ct({"class", "events", "time", "share of GPU time", "share of steps"});
  for (int c = 0; c < kKernelClasses; ++c)
    ct.add({cls(c), std::to_string(s.count[c]), ms(s.time_us[c]), pct(s.time_us[c], s.total_us()),
            t.steps.empty() ? "-" : pct(in_steps.time_us[c], step_span)});
  ct.rule();
  ct.add({"total", std::to_string(s.total_count()), ms(s.total_us()), pct(s.total_us(), s.total_us()),
          t.steps.empty() ? "-" : pct(in_steps.total_us(), step_span)});
  ct.print(os, "  ");
  os << "  (share of steps: the class's time launched inside the ProfilerStep spans over the spans' summed length; "
        "streams\n"
        "   overlap, so the shares can sum past 100%)\n\n";

  if (t.steps.empty()) {
    os << "No ProfilerStep#N spans: the trace has no steps (torch.profiler marks them when the loop calls "
          "prof.step()).\n";
  } else {
    os << "Steps (" << t.steps.size() << "; a GPU event counts in the step whose span holds its CPU launch";
    if (t.launch_by_gpu_time) os << ", " << t.launch_by_gpu_time << " without a launch event by their GPU start";
    os << "):\n";
    std::vector<std::string> head{"step", "span", "GPU busy", "GPU idle"};
    for (int c = 0; c < kKernelClasses; ++c) head.push_back(cls(c));
    head.push_back("events");
    report::Table st(head);
    for (const auto& x : t.steps) {
      const double w = x.gpu_last_us - x.gpu_first_us;
      std::vector<std::string> row{x.name, ms(x.dur_us), ms(x.busy_us), ms(std::max(0.0, w - x.busy_us))};
      for (int c = 0; c < kKernelClasses; ++c) row.push_back(fmt_f(x.sums.time_us[c] / 1000.0, 3));
      row.push_back(std::to_string(x.sums.total_count()));
      st.add(row);
    }
    st.rule();
    std::vector<std::string> out{"outside steps", "-", "-", "-"};
    for (int c = 0; c < kKernelClasses; ++c) out.push_back(fmt_f(t.outside.time_us[c] / 1000.0, 3));
    out.push_back(std::to_string(t.outside.total_count()));
    st.add(out);
    st.print(os, "  ");
    os << "  (class columns in ms; GPU busy: the union of the step's events' intervals; idle: the gaps between its "
          "first\n"
          "   event's start and its last event's end)\n";
  }
  os << "\n";
  if (t.gemms.empty()) {
    os << "No shaped GEMMs: no GEMM kernel was launched by an aten::mm/addmm/bmm/baddbmm/matmul/linear op with its "
          "Input Dims\n"
          "(profile with record_shapes=True)";
    if (t.gemm_kernels_unshaped)
      os << "; " << t.gemm_kernels_unshaped << " GEMM kernels, " << ms(t.gemm_us_unshaped) << ", unshaped";
    os << "\n";
    return;
  }
  os << "Shaped GEMMs (the innermost CPU op around each GEMM kernel's launch; FLOPs 2 x batch x M x N x K per call):\n";
  std::vector<std::string> head{"op", "input dims", "batch",       "M",       "N",
                                "K",  "calls",      "kernel time", "TFLOP/s", "precision"};
  if (fit) head.insert(head.end(), {"model", "error"});
  report::Table gt(head);
  double shaped_us = 0, model_us = 0, measured_pred_us = 0;
  std::vector<std::string> notes;
  for (const auto& g : t.gemms) {
    shaped_us += g.kernel_us;
    const std::string p = calib::gemm_precision(g);
    std::vector<std::string> row{g.op,
                                 g.dims,
                                 std::to_string(g.batch),
                                 std::to_string(g.m),
                                 std::to_string(g.n),
                                 std::to_string(g.k),
                                 std::to_string(g.calls),
                                 ms(g.kernel_us),
                                 fmt_f(g.tflops(), 2),
                                 p.empty() ? "?" : p};
    if (fit) {
      std::string why;
      const double m = predicted_s(g, *fit, &why);
      if (std::isnan(m)) {
        row.insert(row.end(), {"-", "-"});
        if (std::find(notes.begin(), notes.end(), why) == notes.end()) notes.push_back(why);
      } else {
        model_us += m * 1e6;
        measured_pred_us += g.kernel_us;
        row.insert(row.end(), {ms(m * 1e6), fmt_f(100.0 * (m * 1e6 - g.kernel_us) / g.kernel_us, 1) + "%"});
      }
    }
    gt.add(row);
  }
  gt.print(os, "  ");
  os << "  " << t.gemms.size() << " shapes, " << ms(shaped_us) << " of "
     << ms(s.time_us[static_cast<int>(KernelClass::Gemm)]) << " of GEMM kernel time; " << t.gemm_kernels_unshaped
     << " GEMM kernels (" << ms(t.gemm_us_unshaped) << ") launched by ops without a GEMM shape\n";
  if (fit) {
    if (measured_pred_us > 0)
      os << "  model (fit of " << fit->file << ", GPU model " << fit->gpu.name << "): " << ms(model_us) << " for the "
         << ms(measured_pred_us) << " measured, " << fmt_f(100.0 * (model_us - measured_pred_us) / measured_pred_us, 1)
         << "%\n";
    for (const auto& n : notes) os << "  no prediction: " << n << "\n";
  }
}

void write_kineto_json(report::JsonWriter& w, const calib::KinetoTrace& t, const calib::GemmFit* fit) {
  auto sums = [&](const calib::ClassSums& s) {
    w.begin_object();
    for (int c = 0; c < kKernelClasses; ++c) {
      w.key(cls(c));
      w.begin_object();
      w.field("events", s.count[c]);
      w.field("time_s", s.time_us[c] * 1e-6);
      w.end_object();
    }
    w.field("total_events", s.total_count());
    w.field("total_time_s", s.total_us() * 1e-6);
    w.end_object();
  };
  w.field("file", t.file);
  w.field("device_name", t.device_name);
  w.field("device", t.device);
  w.field("sms", t.sms);
  w.field("zero_duration_events", t.zero_duration);
  w.field("gpu_window_s", (t.gpu_last_us - t.gpu_first_us) * 1e-6);
  w.field("gpu_busy_s", t.busy_us * 1e-6);
  w.key("classes");
  sums(t.sums);
  w.key("steps");
  w.begin_array();
  for (const auto& x : t.steps) {
    w.begin_object();
    w.field("name", x.name);
    w.field("start_s", x.start_us * 1e-6);  // the trace's clock (Kineto: microseconds since an epoch)
    w.field("span_s", x.dur_us * 1e-6);
    w.field("gpu_busy_s", x.busy_us * 1e-6);
    w.field("gpu_idle_s", std::max(0.0, x.gpu_last_us - x.gpu_first_us - x.busy_us) * 1e-6);
    w.key("classes");
    sums(x.sums);
    w.end_object();
  }
  w.end_array();
  w.field("steps_attribution",
          "launch: a GPU event counts in the step whose span holds its CPU launch (its GPU start without one)");
  w.field("events_by_gpu_start", t.launch_by_gpu_time);
  w.key("outside_steps");
  sums(t.outside);
  w.key("gemms");
  w.begin_array();
  for (const auto& g : t.gemms) {
    w.begin_object();
    w.field("op", g.op);
    w.field("input_dims", g.dims);
    w.field("input_types", g.types);
    w.field("batch", g.batch);
    w.field("m", g.m);
    w.field("n", g.n);
    w.field("k", g.k);
    w.field("calls", g.calls);
    w.field("kernels", g.kernels);
    w.field("kernel", g.kernel);
    w.field("kernel_time_s", g.kernel_us * 1e-6);
    w.field("flops", g.flops());
    w.field("achieved_flops_per_s", g.tflops() * 1e12);
    w.field("precision", calib::gemm_precision(g));
    if (fit) {
      std::string why;
      const double m = predicted_s(g, *fit, &why);
      w.key("model_s");
      if (std::isnan(m))
        w.null();
      else
        w.value(m);
      w.key("model_error");
      if (std::isnan(m))
        w.null();
      else
        w.value((m * 1e6 - g.kernel_us) / g.kernel_us);
      w.field("model_note", why);
    }
    w.end_object();
  }
  w.end_array();
  w.field("gemm_kernels_unshaped", t.gemm_kernels_unshaped);
  w.field("gemm_time_unshaped_s", t.gemm_us_unshaped * 1e-6);
}

void print_gemm_fit(std::ostream& os, const calib::GemmCsv& csv, const calib::GemmFit& fit) {
  std::size_t excluded = 0;
  for (const auto& r : csv.rows) excluded += r.excluded.empty() ? 0 : 1;
  os << "ffsim calibrate --gemm " << csv.file << ": " << csv.rows.size() << " GEMMs (" << excluded
     << " excluded), GPU model " << fit.gpu.name << " (" << fit.gpu.sms << " SMs";
  for (const auto& [p, v] : fit.gpu.peak) os << ", " << p << " " << fmt_g(v / 1e12, 4) << " TFLOPS";
  os << ")\n";
  os << "  model: time = waves x (2 x tile_m x tile_n x K x SMs / (ceiling x peak) + wave overhead) + launch,\n"
        "         waves = ceil(batch x ceil(M / tile_m) x ceil(N / tile_n) / SMs)\n\n";
  os << "Fitted values (weighted least squares of the relative time error, on " << fit.all.points << " rows of "
     << fit.file << "):\n";
  report::Table v({"parameter", "value", "note"});
  v.add({"tile", std::to_string(fit.values.tile.m) + "x" + std::to_string(fit.values.tile.n),
         "[I] chosen: the smallest mean error of the tiles tried (below)"});
  auto bound = [&](const std::string& n) {
    return std::find(fit.values.at_bound.begin(), fit.values.at_bound.end(), n) != fit.values.at_bound.end();
  };
  for (const auto& [ff, m] : fit.values.ceiling)
    for (const auto& [p, c] : m)
      v.add({"ceiling " + ff + " " + p, std::isnan(c.value) ? "-" : fmt_f(100 * c.value, 1) + "%",
             "of the " + p + " peak, a full wave; " +
                 (!c.derived.empty() ? "no rows: derived, " + c.derived
                  : bound("ceiling " + ff + " " + p)
                      ? std::to_string(c.rows) + " rows, held at 100% (its free fit was above: faster than the peak)"
                      : std::to_string(c.rows) + " rows")});
  v.add({"wave overhead", fmt_f(fit.values.wave_overhead_s * 1e6, 2) + " us",
         bound("wave_overhead") ? "held at 0 (its free fit was negative)" : "per wave"});
  v.add({"launch", fmt_f(fit.values.launch_s * 1e6, 2) + " us",
         bound("launch") ? "held at 0 (its free fit was negative)" : "per GEMM"});
  v.print(os, "  ");
  os << "\nError per dataset (relative error of the time; held out: fitted on the other datasets only):\n";
  report::Table d({"dataset", "rows", "excluded", "in fit MAPE", "in fit max", "held-out MAPE", "held-out max",
                   "read-off uncertainty"});
  for (const auto& x : fit.datasets) {
    const bool ho = x.held_out_note.empty();
    d.add({x.dataset, std::to_string(x.rows), std::to_string(x.excluded),
           x.in_fit.points ? fmt_f(100 * x.in_fit.mape, 1) + "%" : "-",
           x.in_fit.points ? fmt_f(100 * x.in_fit.max_abs, 1) + "%" : "-",
           ho ? fmt_f(100 * x.held_out.mape, 1) + "%" : "- (" + x.held_out_note + ")",
           ho ? fmt_f(100 * x.held_out.max_abs, 1) + "%" : "-",
           x.median_uncertainty > 0 ? "median " + fmt_f(100 * x.median_uncertainty, 1) + "%" : "-"});
  }
  d.rule();
  d.add({"all", std::to_string(csv.rows.size()), std::to_string(excluded), fmt_f(100 * fit.all.mape, 1) + "%",
         fmt_f(100 * fit.all.max_abs, 1) + "%", "", "", ""});
  d.print(os, "  ");
  for (const auto& r : csv.rows)
    if (!r.excluded.empty())
      os << "  excluded: " << csv.file << " line " << r.line << " (" << r.dataset << "): " << r.excluded << "\n";
  os << "\nTiles tried (mean error of the fit on every row):\n";
  report::Table tt({"tile", "MAPE", "max"});
  for (const auto& x : fit.tiles)
    tt.add({std::to_string(x.tile.m) + "x" + std::to_string(x.tile.n), fmt_f(100 * x.errors.mape, 2) + "%",
            fmt_f(100 * x.errors.max_abs, 1) + "%"});
  tt.print(os, "  ");
  os << "\nRows (measured against the model):\n";
  report::Table rt(
      {"line", "dataset", "form factor", "precision", "M", "N", "K", "waves", "measured", "model", "error"});
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    const auto& r = csv.rows[i];
    const long long waves = train::gemm_waves(train::gemm_tiles(r.shape, fit.values.tile), fit.gpu.sms);
    const double m = fit.model_s[i];
    const bool use = r.excluded.empty() && !std::isnan(m);
    rt.add({std::to_string(r.line), r.dataset,
            r.form_factor.empty() ? calib::row_form_factor(r, fit.gpu) + " (--gpu's)" : r.form_factor, r.precision,
            std::to_string(r.shape.m), std::to_string(r.shape.n), std::to_string(r.shape.k), std::to_string(waves),
            fmt_g(r.tflops, 4) + " TFLOPS" + (r.uncertainty_tflops > 0 ? " +-" + fmt_g(r.uncertainty_tflops, 2) : ""),
            use ? fmt_g(r.shape.flops() / m / 1e12, 4) + " TFLOPS" : "-",
            use ? fmt_f(100 * (m - r.time_s()) / r.time_s(), 1) + "%" : (r.excluded.empty() ? "-" : "excluded")});
  }
  rt.print(os, "  ");
}

void write_gemm_datasets_json(report::JsonWriter& w, const calib::GemmFit& fit) {
  w.key("datasets");
  w.begin_array();
  for (const auto& x : fit.datasets) {
    w.begin_object();
    w.field("dataset", x.dataset);
    w.field("rows", x.rows);
    w.field("excluded", x.excluded);
    w.field("in_fit_mape", x.in_fit.mape);
    w.field("in_fit_max_abs_error", x.in_fit.max_abs);
    w.key("held_out_mape");
    if (x.held_out_note.empty())
      w.value(x.held_out.mape);
    else
      w.null();
    w.key("held_out_max_abs_error");
    if (x.held_out_note.empty())
      w.value(x.held_out.max_abs);
    else
      w.null();
    w.field("held_out_note", x.held_out_note);
    w.field("median_uncertainty", x.median_uncertainty);
    w.end_object();
  }
  w.end_array();
}

void write_gemm_fit_json(report::JsonWriter& w, const calib::GemmCsv& csv, const calib::GemmFit& fit) {
  w.field("file", fit.file);
  w.field("gpu", fit.gpu.name);
  w.field("sms", fit.gpu.sms);
  w.field("sms_source", fit.gpu.sms_source);
  w.key("values");
  w.begin_object();
  w.field("tile_m", fit.values.tile.m);
  w.field("tile_n", fit.values.tile.n);
  w.key("ceiling");
  w.begin_object();
  for (const auto& [ff, m] : fit.values.ceiling) {
    w.key(ff);
    w.begin_object();
    for (const auto& [p, c] : m) {
      w.key(p);
      w.begin_object();
      w.key("value");
      if (std::isnan(c.value))
        w.null();
      else
        w.value(c.value);
      w.field("rows", c.rows);
      w.field("derived", c.derived);
      w.end_object();
    }
    w.end_object();
  }
  w.end_object();
  w.field("wave_overhead_s", fit.values.wave_overhead_s);
  w.field("launch_s", fit.values.launch_s);
  w.key("at_bound");
  w.begin_array();
  for (const auto& b : fit.values.at_bound) w.value(b);
  w.end_array();
  w.end_object();
  w.field("mape", fit.all.mape);
  w.field("max_abs_error", fit.all.max_abs);
  w.field("points", fit.all.points);
  write_gemm_datasets_json(w, fit);
  w.key("tiles");
  w.begin_array();
  for (const auto& x : fit.tiles) {
    w.begin_object();
    w.field("tile_m", x.tile.m);
    w.field("tile_n", x.tile.n);
    w.field("mape", x.errors.mape);
    w.field("max_abs_error", x.errors.max_abs);
    w.end_object();
  }
  w.end_array();
  w.key("rows");
  w.begin_array();
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    const auto& r = csv.rows[i];
    w.begin_object();
    w.field("line", r.line);
    w.field("dataset", r.dataset);
    w.field("form_factor", calib::row_form_factor(r, fit.gpu));
    w.field("form_factor_stated", !r.form_factor.empty());
    w.field("precision", r.precision);
    w.field("m", r.shape.m);
    w.field("n", r.shape.n);
    w.field("k", r.shape.k);
    w.field("measured_flops_per_s", r.tflops * 1e12);
    w.field("uncertainty_flops_per_s", r.uncertainty_tflops * 1e12);
    w.field("excluded", r.excluded);
    w.key("model_s");
    if (!r.excluded.empty() || std::isnan(fit.model_s[i]))
      w.null();
    else
      w.value(fit.model_s[i]);
    w.field("measured_s", r.time_s());
    w.end_object();
  }
  w.end_array();
}

}  // namespace ffsim::cli

namespace ffsim::cli {

namespace {

std::string pct(double v) { return fmt_f(100 * v, 1) + "%"; }

std::string mult(double v) { return fmt_g(v, 4); }

}  // namespace

void print_throughput_fit(std::ostream& os, const app::ThroughputCalibration& t) {
  const auto& csv = t.csv;
  const auto& fit = t.fit;
  std::size_t excluded = 0;
  for (const auto& r : csv.rows) excluded += r.excluded.empty() ? 0 : 1;
  os << "ffsim calibrate --throughput " << csv.file << ": " << csv.rows.size() << " measured throughputs (" << excluded
     << " excluded)\n";
  os << "  model: step = conv x convolutions + gemm x (linear + attention products) + memory x memory-bound work\n"
        "         + optimizer; every product timed from its shape by the GEMM model (--gemm), split-K from "
     << app::kSplitKMin << " terms ([I]); memory-bound at the HBM datasheet bandwidth\n\n";
  os << "Fitted multipliers (weighted least squares of the relative step-time error, on " << fit.all.points
     << " rows):\n";
  report::Table v({"multiplier", "value", "of"});
  v.add({"conv", mult(fit.values.conv), "the GEMM model's time of the implicit GEMMs of convolutions"});
  v.add({"gemm", mult(fit.values.linear), "the GEMM model's time of linear and attention products"});
  v.add({"memory", mult(fit.values.memory),
         "the memory-bound traffic (also on attention scores) at the full HBM bandwidth"});
  v.print(os, "  ");
  for (const auto& f : fit.fixed) os << "  " << f << "\n";
  os << "\nError per dataset (relative error of the step time; held out: fitted on the other datasets only):\n";
  report::Table d({"dataset", "rows", "excluded", "in fit MAPE", "in fit max", "held-out MAPE", "held-out max",
                   "held-out conv, gemm, memory"});
  for (const auto& x : fit.datasets) {
    const bool any = x.in_fit.points > 0;
    std::string hv =
        mult(x.held_out_values.conv) + ", " + mult(x.held_out_values.linear) + ", " + mult(x.held_out_values.memory);
    for (const auto& f : x.held_out_fixed) hv += "; " + f;
    d.add({x.dataset, std::to_string(x.rows), std::to_string(x.excluded), any ? pct(x.in_fit.mape) : "-",
           any ? pct(x.in_fit.max_abs) : "-", any ? pct(x.held_out.mape) : "-", any ? pct(x.held_out.max_abs) : "-",
           any ? hv : "-"});
  }
  d.rule();
  d.add({"all", std::to_string(csv.rows.size()), std::to_string(excluded), pct(fit.all.mape), pct(fit.all.max_abs), "",
         "", ""});
  d.print(os, "  ");
  os << "\nWithin each dataset, leaving one network out (fitted on the dataset's other networks only):\n";
  report::Table nt({"dataset", "networks", "rows", "MAPE", "max", "held"});
  for (const auto& x : fit.datasets) {
    if (x.network_out.points == 0) {
      nt.add({x.dataset, std::to_string(x.networks), "-", "-", "-", x.networks < 2 ? "one network" : "-"});
      continue;
    }
    nt.add({x.dataset, std::to_string(x.networks), std::to_string(x.network_out.points), pct(x.network_out.mape),
            pct(x.network_out.max_abs), x.network_out_fixed.empty() ? "-" : join(x.network_out_fixed, "; ")});
  }
  nt.print(os, "  ");
  os << "\nRows (step time of the measured batch; error = model / measured - 1; shares of the model's step):\n";
  report::Table rt({"line", "dataset", "model", "gpu", "prec", "batch", "seq", "measured", "model", "error", "conv",
                    "gemm", "memory", "optimizer"});
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    const auto& r = csv.rows[i];
    const auto& c = t.cases[i];
    if (!c.modelled) continue;
    const double m = fit.model_s[i], meas = r.step_s();
    const auto share = [&](double s) { return fmt_f(100 * s / m, 0) + "%"; };
    rt.add({std::to_string(r.line), r.dataset, r.model, r.gpu, r.precision, fmt_g(r.batch, 6),
            r.seq > 0 ? fmt_g(r.seq, 6) : "-", fmt_g(meas * 1e3, 4) + " ms", fmt_g(m * 1e3, 4) + " ms",
            pct(m / meas - 1) + (r.excluded.empty() ? "" : " (excluded)"), share(c.times.conv_s * fit.values.conv),
            share((c.times.linear_s + c.times.attention_s) * fit.values.linear),
            share(c.times.memory_s * fit.values.memory + c.times.score_memory_s * fit.values.score_memory),
            share(c.times.optimizer_s)});
  }
  rt.print(os, "  ");
  std::map<std::string, int> reasons;
  for (std::size_t i = 0; i < csv.rows.size(); ++i)
    if (!csv.rows[i].excluded.empty() && !t.cases[i].modelled) ++reasons[csv.rows[i].excluded];
  if (!reasons.empty()) {
    os << "\nNot modelled (rows left out, by reason):\n";
    for (const auto& [why, n] : reasons) os << "  " << n << " row" << (n == 1 ? "" : "s") << ": " << why << "\n";
  }
}

void write_throughput_errors_json(report::JsonWriter& w, const calib::ThroughputFit& fit) {
  w.key("held");
  w.begin_array();
  for (const auto& f : fit.fixed) w.value(f);
  w.end_array();
  w.key("all");
  w.begin_object();
  w.field("rows", fit.all.points);
  w.field("mape", fit.all.mape);
  w.field("max_abs", fit.all.max_abs);
  w.end_object();
  w.key("datasets");
  w.begin_array();
  for (const auto& d : fit.datasets) {
    w.begin_object();
    w.field("dataset", d.dataset);
    w.field("rows", d.rows);
    w.field("excluded", d.excluded);
    w.field("in_fit_mape", d.in_fit.mape);
    w.field("in_fit_max_abs", d.in_fit.max_abs);
    w.field("held_out_mape", d.held_out.mape);
    w.field("held_out_max_abs", d.held_out.max_abs);
    w.field("networks", d.networks);
    w.field("network_out_points", d.network_out.points);
    w.field("network_out_mape", d.network_out.mape);
    w.field("network_out_max_abs", d.network_out.max_abs);
    w.end_object();
  }
  w.end_array();
}

void write_throughput_fit_json(report::JsonWriter& w, const app::ThroughputCalibration& t) {
  const auto& fit = t.fit;
  w.field("file", t.csv.file);
  w.field("split_k_min", app::kSplitKMin);
  w.key("multipliers");
  w.begin_object();
  w.field("conv", fit.values.conv);
  w.field("gemm", fit.values.linear);
  w.field("memory", fit.values.memory);
  w.end_object();
  write_throughput_errors_json(w, fit);
  w.key("rows");
  w.begin_array();
  for (std::size_t i = 0; i < t.csv.rows.size(); ++i) {
    const auto& r = t.csv.rows[i];
    const auto& c = t.cases[i];
    w.begin_object();
    w.field("line", r.line);
    w.field("dataset", r.dataset);
    w.field("model", r.model);
    w.field("gpu", r.gpu);
    w.field("precision", r.precision);
    w.field("batch", r.batch);
    w.field("measured_step_s", r.throughput > 0 ? r.step_s() : 0.0);
    w.key("model_step_s");
    if (c.modelled)
      w.value(fit.model_s[i]);
    else
      w.null();
    w.field("excluded", r.excluded);
    w.end_object();
  }
  w.end_array();
}

}  // namespace ffsim::cli
