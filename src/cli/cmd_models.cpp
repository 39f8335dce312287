// `ffsim models`: list the hardware catalog with its key facts (and, with --sources, where each came from).
// SPDX-License-Identifier: Apache-2.0
#include <iostream>

#include <CLI/CLI.hpp>

#include "calib/calibration_file.hpp"
#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "config/train_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"
#include "config/hw_reader.hpp"
#include "plan/prices.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"
#include "train/compute.hpp"
#include "train/nn_model.hpp"

namespace ffsim::cli {

namespace {

std::string gemm(const hw::GpuSpec& g, const std::string& p) {
  auto it = g.compute.find(p);
  return it == g.compute.end() ? "-" : fmt_flop_rate(it->second.gemm());
}

// --json and --csv: every entry (of --kind) with its kind, name, file and what it overrides; the
// per-kind facts are the catalog's own JSON files (and with --sources, each fact's source).
int models_data(Context& ctx, const std::string& only, bool sources, bool csv) {
  const config::Catalog& cat = ctx.catalog();
  std::vector<Record> entries, facts;
  for (const auto& kind : ctx.kind_names()) {
    if (!only.empty() && only != kind) continue;
    for (const auto* e : cat.of_kind(kind)) {
      entries.push_back({{"kind", kind},
                         {"name", e->name},
                         {"file", e->file},
                         {"overrides", e->overrides.empty() ? Cell(nullptr) : Cell(e->overrides)},
                         {"description", e->description}});
      if (!sources) continue;
      ctx.kinds.get(kind).factory(*e, cat);  // reading the entry records its sources
      for (const auto& s : e->document.sources())
        facts.push_back({{"kind", kind}, {"name", e->name}, {"file", e->file}, {"pointer", s.pointer}, {"source", s.source}});
    }
  }
  if (csv) {
    write_records_csv(std::cout, sources ? facts : entries);
    return kOk;
  }
  report::JsonWriter w(std::cout);
  begin_json(w, "models");
  w.field("models_from", ctx.models_origin());
  w.key("folders");
  w.begin_array();
  for (const auto& d : ctx.models_folders()) w.value(d);
  w.end_array();
  w.field("calibration", ctx.calibration);
  w.key("entries");
  write_records_json(w, entries);
  if (sources) {
    w.key("sources");
    write_records_json(w, facts);
  }
  w.end_object();
  return kOk;
}

int run_models(Context& ctx, const std::string& only, bool sources) {
  const config::Catalog& cat = ctx.catalog();
  auto want = [&](const char* k) { return only.empty() || only == k; };
  bool first = true;
  auto section = [&](const std::string& title) {
    std::cout << (first ? "" : "\n") << title << '\n';
    first = false;
  };
  if (want(config::kGpu)) {
    section("GPUs");
    report::Table t({"name", "form", "memory", "HBM", "TF32 GEMM", "FP16 GEMM", "host link", "NVLink", "TDP"});
    for (const auto* e : cat.of_kind(config::kGpu)) {
      const auto g = config::parse_gpu(*e);
      t.add({g.name, g.form_factor, fmt_bytes_si(g.memory), fmt_bandwidth(g.memory_bandwidth), gemm(g, "tf32"),
             gemm(g, "fp16"),
             (g.emulated() ? "copy thread "
                           : "PCIe " + std::to_string(g.pcie_generation) + ".0 x" + std::to_string(g.pcie_lanes) + " ") +
                 fmt_bandwidth(g.pcie_bandwidth),
             g.nvlink_bandwidth.si() > 0 ? fmt_bandwidth(g.nvlink_bandwidth) : "-", fmt_power(g.tdp)});
    }
    t.print(std::cout, "  ");
  }
  if (want(config::kCpu)) {
    section("CPUs");
    report::Table t({"name", "cores", "SIMD", "channels", "DRAM (theor.)", "PCIe lanes", "TDP"});
    for (const auto* e : cat.of_kind(config::kCpu)) {
      const auto c = config::parse_cpu(*e);
      t.add({c.name, std::to_string(c.cores), c.simd, std::to_string(c.memory_channels),
             fmt_bandwidth(c.memory_bandwidth), std::to_string(c.pcie_lanes), c.tdp ? fmt_power(*c.tdp) : "-"});
    }
    t.print(std::cout, "  ");
  }
  if (want(config::kNic)) {
    section("NICs");
    report::Table t({"name", "ports", "line rate", "effective", "latency", "power"});
    for (const auto* e : cat.of_kind(config::kNic)) {
      const auto n = config::parse_nic(*e);
      t.add({n.name, std::to_string(n.ports), fmt_bandwidth(n.port_bandwidth), fmt_bandwidth(n.effective_bandwidth),
             fmt_time(n.latency), fmt_power(n.power)});
    }
    t.print(std::cout, "  ");
  }
  if (want(config::kSwitch)) {
    section("Switches");
    report::Table t({"name", "ports", "port rate", "latency", "power"});
    for (const auto* e : cat.of_kind(config::kSwitch)) {
      const auto s = config::parse_switch(*e);
      t.add({s.name, std::to_string(s.ports), fmt_bandwidth(s.port_bandwidth), fmt_time(s.latency), fmt_power(s.power)});
    }
    t.print(std::cout, "  ");
  }
  if (want(config::kNode)) {
    section("Nodes");
    report::Table t({"name", "role", "sockets", "GPUs", "NICs", "PCIe ports", "NVLink", "DRAM BW", "price", "power"});
    for (const auto* e : cat.of_kind(config::kNode)) {
      const auto n = config::parse_node(*e, cat);
      BytesPerSecond dram(0);
      for (const auto& s : n.sockets) dram += s.dram_bandwidth;
      std::string gpus = n.gpus.empty() ? "-" : std::to_string(n.gpus.size()) + "x " + n.gpus[0].gpu.name;
      t.add({n.name, n.role, std::to_string(n.sockets.size()) + "x " + n.sockets[0].cpu.name, gpus,
             std::to_string(n.nics.size()), std::to_string(n.ports.size()), n.nvlink.kind, fmt_bandwidth(dram),
             n.price ? fmt_g(*n.price, 4) : "-", n.power ? fmt_power(*n.power) : "-"});
    }
    t.print(std::cout, "  ");
  }
  if (want(plan::kPriceBook)) {
    section("Price books");
    report::Table t({"name", "unit", "nodes", "switches", "chassis", "cables", "optic"});
    for (const auto* e : cat.of_kind(plan::kPriceBook)) {
      const auto b = plan::parse_price_book(*e, cat);
      auto items = [](const std::map<std::string, double>& m) {
        std::string r;
        for (const auto& [k, v] : m) r += (r.empty() ? "" : " ") + k + "=" + fmt_g(v, 4);
        return r.empty() ? std::string("-") : r;
      };
      t.add({b.name, b.unit, b.nodes_from_catalog && b.nodes.empty() ? "node models' prices" : items(b.nodes),
             items(b.switches), items(b.chassis), items(b.cables), b.optic ? fmt_g(*b.optic, 4) : "-"});
    }
    t.print(std::cout, "  ");
  }
  if (want(config::kNnModel)) {
    section("Neural networks (parameters and FLOPs derived from the architecture; published counts for comparison)");
    report::Table t({"name", "architecture", "layers", "parameters", "activated", "published", "fwd FLOPs/sample",
                     "sample"});
    for (const auto* e : cat.of_kind(config::kNnModel)) {
      const auto m = config::parse_nn_model(*e);
      const bool tf = m.architecture == "transformer";
      const int seq = tf ? m.transformer.max_sequence : 1;
      const auto l = train::layer_costs(m, seq, true);
      double active = 0;
      for (const auto& x : l) active += x.active_params;
      std::string what = tf ? std::to_string(m.transformer.layers) + " x " + std::to_string(m.transformer.hidden) : std::to_string(l.size());
      if (tf && m.transformer.moe)
        what += ", " + std::to_string(m.transformer.moe->routed_experts) + " experts top-" +
                std::to_string(m.transformer.moe->top_k);
      t.add({m.name, m.architecture, what, fmt_g(train::total_params(l), 4), fmt_g(active, 4),
             m.published_parameters ? fmt_g(*m.published_parameters, 4) : "-", fmt_g(train::forward_flops(l), 4),
             tf ? std::to_string(seq) + " tokens" : "1 image"});
    }
    t.print(std::cout, "  ");
  }
  if (want(config::kComputeModel)) {
    section("Compute models (kernel efficiencies against the GPU's GEMM rate and memory bandwidth)");
    report::Table t({"name", "GEMM", "conv", "attention", "memory", "backward x (GEMM, attention, memory)"});
    for (const auto* e : cat.of_kind(config::kComputeModel)) {
      const auto c = config::parse_compute_model(*e);
      t.add({c.name, fmt_g(c.gemm_efficiency, 3), fmt_g(c.conv_efficiency, 3), fmt_g(c.attention_efficiency, 3),
             fmt_g(c.memory_efficiency, 3),
             fmt_g(c.backward_gemm, 3) + ", " + fmt_g(c.backward_attention, 3) + ", " + fmt_g(c.backward_memory, 3)});
    }
    t.print(std::cout, "  ");
  }
  if (want(calib::kCalibration)) {
    section("Calibrations (ffsim calibrate; apply one with --calibration FILE)");
    report::Table t({"name", "node model", "measurement files", "facts overridden", "file"});
    for (const auto* e : cat.of_kind(calib::kCalibration)) {
      const auto c = calib::parse_calibration(e->document);
      t.add({c.name, c.node, std::to_string(c.measurements.size()), std::to_string(c.overrides.size()), e->file});
    }
    t.print(std::cout, "  ");
  }
  if (!ctx.calibration.empty()) {
    std::cout << "\nWith --calibration " << ctx.calibration << ": the applied facts are the calibrated ones"
              << (sources ? " (their sources name the file)" : " (--sources lists them)") << "\n";
    print_calibration(std::cout, ctx);
  }
  if (sources) {
    section("Models folders (from " + ctx.models_origin() + "; a later folder overrides an earlier one by model name)");
    const auto& dirs = ctx.models_folders();
    for (std::size_t i = 0; i < dirs.size(); ++i) std::cout << "  " << i + 1 << ". " << dirs[i] << "\n";
    bool any = false;
    for (const auto& kind : ctx.kind_names())
      for (const auto* e : cat.of_kind(kind))
        if (!e->overrides.empty()) {
          if (!any) std::cout << "  overridden:\n";
          any = true;
          std::cout << "    " << kind << " " << e->name << ": " << e->file << " replaces " << e->overrides << "\n";
        }
    section("Sources");
    report::Table t({"file", "fact", "source"});
    for (const auto& kind : ctx.kind_names()) {
      if (!only.empty() && only != kind) continue;
      for (const auto* e : cat.of_kind(kind)) {
        ctx.kinds.get(kind).factory(*e, cat);  // reading the entry records its sources
        for (const auto& s : e->document.sources()) t.add({e->file, s.pointer, s.source});
      }
    }
    t.print(std::cout, "  ");
  }
  return kOk;
}

}  // namespace

void setup_models(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("models", "List the hardware catalog with key facts");
  auto kind = std::make_shared<std::string>();
  auto sources = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto csv = std::make_shared<bool>(false);
  ctx.expects(sub->add_option("--kind", *kind,
                              "Only this kind (gpu, cpu, nic, switch, node, price_book, nn_model, compute_model, calibration, ...)"),
              "a model kind (" + join(ctx.kind_names()) + ")");
  sub->add_flag("--sources", *sources, "Also list every fact with its source");
  auto* j = sub->add_flag("--json", *json, "Machine-readable output: the folders read, every entry (and with --sources every fact's source)");
  j->excludes(sub->add_flag("--csv", *csv, "CSV of the entries (with --sources: of every fact's source)"));
  sub->callback([&ctx, kind, sources, json, csv] {
    ctx.action = [&ctx, kind, sources, json, csv] {
      if (!kind->empty() && !ctx.kinds.find(*kind)) throw UsageError("--kind: " + ctx.kinds.unknown_message(*kind));
      if (*json || *csv) return models_data(ctx, *kind, *sources, *csv);
      return run_models(ctx, *kind, *sources);
    };
  });
}

}  // namespace ffsim::cli
