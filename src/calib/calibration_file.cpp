// Calibration files: parsing, checking, applying to the catalog.
// SPDX-License-Identifier: Apache-2.0
#include "calib/calibration_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "coll/collective.hpp"
#include "config/coll_reader.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"
#include "core/unit_parse.hpp"
#include "config/hw_reader.hpp"

namespace ffsim::calib {

using config::Reader;

namespace {

// A fitted value: a bandwidth or a time with its unit, not negative.
void check_value(const Reader& v) {
  if (!v.is_string()) v.fail("expected a bandwidth or a time with unit (e.g. \"33.1GB/s\" or \"9.4us\"), got " + v.describe());
  const std::string text = v.as_string();
  double si = 0;
  bool ok = false;
  for (Dimension d : {Dimension::Bandwidth, Dimension::Time}) {
    try {
      si = parse_quantity_si(text, d);
      ok = true;
      break;
    } catch (const ValueError&) {
    }
  }
  if (!ok) v.fail("expected a bandwidth or a time with unit (e.g. \"33.1GB/s\" or \"9.4us\"), got \"" + text + "\"");
  if (si < 0) v.fail("expected a non-negative value, got \"" + text + "\"");
}

double number_at_least(const Reader& r, std::string_view key, double min) {
  const Reader c = r.child(key, "a number");
  const double v = c.as_number();
  if (!(v >= min)) c.fail("expected a number >= " + std::to_string(static_cast<long long>(min)) + ", got " + c.describe());
  return v;
}

void parse_fit(const Reader& f) {
  (void)f.string("name");
  (void)f.string("stages");
  (void)f.string("group");
  // none: a fit of a cluster's nccl-tests log; levels: a fit of the memory model, over every level
  (void)f.choice("regime", {"cache", "dram", "levels", "none"});
  (void)f.string("method");
  (void)number_at_least(f, "rms_relative_residual", 0);
  (void)number_at_least(f, "max_relative_residual", 0);
  for (const Reader& v : f.child("values", "an array of fitted values").elements("values")) {
    (void)v.string("name");
    if (const Reader x = v.child("value"); x.is_number()) {  // a dimensionless value (a thread gain, a sharpness)
      if (!(x.as_number() >= 0)) x.fail("expected a non-negative value, got " + x.describe());
    } else if (!x.is_null()) {
      check_value(x);
    }
    (void)v.child("value_si", "the value in SI units (a number, or null)");
    (void)v.string("status");
    (void)v.boolean("applied");
    v.finish();
  }
  for (const Reader& p : f.child("points", "an array of the points used").elements("points")) {
    (void)p.string("file");
    (void)p.string("pointer");
    (void)number_at_least(p, "bytes", 0);
    const Reader m = p.child("measured_s", "a time in seconds");
    if (!(m.as_number() > 0)) m.fail("expected a positive time in seconds, got " + m.describe());
    (void)number_at_least(p, "model_s", 0);
    (void)p.child("residual", "(model - measured) / measured").as_number();
    p.finish();
  }
  f.finish();
}

}  // namespace

std::string unit_string(double si, bool bandwidth) {
  char buf[64];
  if (bandwidth) std::snprintf(buf, sizeof buf, "%.7gGB/s", si / 1e9);
  else std::snprintf(buf, sizeof buf, "%.7gus", si * 1e6);
  return buf;
}

std::pair<std::string, std::string> scope_of(Param p) {
  // Machine: each is a fact of the machine the points ran on. None of today's parameters is a cost
  // of the library alone (docs/calibration.md, "Scope: what transfers to other machines").
  switch (p) {
    case Param::DramBandwidth:
      return {"machine", "the DRAM rate of the measured socket (on a VM, its share of the host's)"};
    case Param::DeviceLink:
      return {"machine", "the rate of the measured machine's device copies (on the host backend: one copy thread's memcpy on "
                         "its cores)"};
    case Param::DeviceLatency:
      return {"machine", "the fixed time of a device copy on the measured machine (on the host backend: handing the copy to a "
                         "stream's thread, the operating system's scheduling on its cores)"};
    case Param::Duplex:
      return {"machine", "the measured machine's cap on both copy directions at once"};
    case Param::ReducePerCore:
      return {"machine", "the per-core sum rate of the measured CPU (its SIMD width, clock and caches)"};
    case Param::ChunkOverhead:
      return {"machine", "hfreduce's time per chunk as the measured machine runs it: where the copy threads, the reducer and "
                         "the ranks outnumber the cores (8-16 threads on 2 on the CI VMs) it is mostly the scheduler's hand-off "
                         "between threads, not the library's own code, and a node with a core per stream does not pay it"};
    case Param::NicBandwidth:
    case Param::NicLatency:
      return {"machine", "the measured transport between ranks (on the CI VMs: Open MPI's shared memory within one machine)"};
  }
  return {"machine", "a fact of the measured machine"};
}

std::vector<Override> node_overrides(const BenchModel& m, const Calibration& c, const std::string& file) {
  const hw::NodeSpec& n = m.node;
  const ParamSet v = node_params(c);
  // The fit a node value came from: the DRAM regime's, else the cache regime's, of the right group.
  auto source_fit = [&](Param p) -> const Fit* {
    // Values the memory model gives: its copies' fit (DRAM), the node group's reduce fit.
    if ((p == Param::DramBandwidth || (p == Param::DeviceLink && c.emulated_devices)) && c.memory.kinds.count("copy memcpy"))
      for (const Fit& f : c.fits)
        if (f.levels && f.stages == "copy") return &f;
    if (p == Param::ReducePerCore && c.memory.kinds.count("reduce " + c.node_reduce_group))
      for (const Fit& f : c.fits)
        if (f.levels && f.stages == "reduce" && (f.group == c.node_reduce_group || f.group.empty())) return &f;
    const std::string want_group = p == Param::ReducePerCore ? c.node_reduce_group
                                   : (p == Param::NicBandwidth || p == Param::NicLatency)
                                       ? std::to_string(c.node_ranks) + (c.node_ranks == 1 ? " rank" : " ranks")
                                       : "";
    for (Regime r : {Regime::Dram, Regime::Cache})
      for (const Fit& f : c.fits)
        if (f.regime == r && f.group == want_group)
          for (const FittedValue& fv : f.values)
            if (fv.applied && fv.name == param_name(p) && fv.value == at(v, p)) return &f;
    return nullptr;
  };
  auto status_of = [&](const Fit& f, Param p) {
    if (f.levels)
      return p == Param::DeviceLink
                 ? std::string("from the memory model: one copy thread's memcpy from DRAM, memcpy dram_rate / 2 (payload: half its traffic)")
             : p == Param::DramBandwidth
                 ? std::string("from the memory model: DRAM as all ") + std::to_string(c.cores) +
                       " cores' memcpy reaches it, min(cores x memcpy dram_rate (with the thread gain), dram_shared_bandwidth)"
                 : "from the memory model: one core's DRAM rate of " + c.node_reduce_group + " x k / (k + 1), k = " +
                       std::to_string(c.node_reduce_k) + " (traffic to input bytes)";
    for (const FittedValue& fv : f.values)
      if (fv.name == param_name(p)) return fv.status;
    return std::string();
  };
  std::vector<Override> out;
  auto add = [&](Param p, const std::string& kind, const std::string& name, const std::string& pointer) {
    const Fit* f = source_fit(p);
    if (!f || std::isnan(at(v, p))) return;
    std::vector<std::string> files;
    for (const FitPoint& pt : f->points)
      if (std::find(files.begin(), files.end(), pt.file) == files.end()) files.push_back(pt.file);
    char rms[32];
    std::snprintf(rms, sizeof rms, "%.1f%%", 100 * f->rms);
    const std::string status = status_of(*f, p);
    // The fit is named by its JSON pointer in this file too: its points list every measured point used.
    const std::string fit_ptr = "/fits/" + std::to_string(f - c.fits.data());
    const std::string source = file + " " + fit_ptr + ": " + f->name + (f->group.empty() ? "" : " (" + f->group + ")") + ", fitted to " +
                               std::to_string(f->points.size()) + " " + f->stages + (f->points.size() == 1 ? " point (" : " points (") +
                               (f->levels ? std::string("every memory level") : std::string(regime_name(f->regime)) + " regime") +
                               ") of " + join(files) + "; relative RMS residual " + rms +
                               (status == "fitted" ? "" : "; " + status);
    const auto [scope, why] = scope_of(p);
    out.push_back(Override{kind, name, pointer, unit_string(at(v, p), is_bandwidth(p)), source, param_name(p), scope, why, ""});
  };
  for (std::size_t i = 0; i < n.sockets.size(); ++i)
    add(Param::DramBandwidth, config::kNode, n.name, "/sockets/" + std::to_string(i) + "/dram_bandwidth");
  std::vector<std::string> done;
  auto once = [&](const std::string& key) {
    if (std::find(done.begin(), done.end(), key) != done.end()) return false;
    done.push_back(key);
    return true;
  };
  for (const auto& g : n.gpus)
    if (once("gpu " + g.gpu.name)) add(Param::DeviceLink, config::kGpu, g.gpu.name, "/pcie_bandwidth");
  if (!n.gpus.empty()) add(Param::DeviceLatency, config::kNode, n.name, "/pcie_latency");
  for (std::size_t i = 0; i < n.ports.size(); ++i)
    for (const auto& g : n.gpus)
      if (g.port == n.ports[i].name && once("port " + n.ports[i].name))
        add(Param::Duplex, config::kNode, n.name, "/ports/" + std::to_string(i) + "/duplex_bandwidth");
  for (const auto& s : n.sockets)
    if (once("cpu " + s.cpu.name)) add(Param::ReducePerCore, config::kCpu, s.cpu.name, "/reduce_bandwidth_per_core");
  add(Param::ChunkOverhead, "collective_library", "hfreduce", "/chunk_overhead");
  for (const auto& x : n.nics)
    if (once("nic " + x.nic.name)) {
      add(Param::NicBandwidth, config::kNic, x.nic.name, "/port_bandwidth");
      add(Param::NicBandwidth, config::kNic, x.nic.name, "/effective_bandwidth");
      add(Param::NicLatency, config::kNic, x.nic.name, "/latency");
    }
  return out;
}

CalibrationFile parse_calibration(const config::Document& doc) {
  const Reader r = doc.root();
  if (!r.is_object()) r.fail("expected a calibration object, got " + r.describe());
  CalibrationFile c;
  c.file = doc.file();
  const Reader kind = r.child("kind", "\"calibration\"");
  if (kind.as_string() != kCalibration) kind.fail("expected \"calibration\", got \"" + kind.as_string() + "\"");
  const Reader name = r.child("name", "a snake_case name");
  c.name = name.as_string();
  if (!config::is_snake_case(c.name)) name.fail("expected a snake_case name ([a-z][a-z0-9_]*), got \"" + c.name + "\"");
  c.node = r.string("node");
  r.allow({"description", "command", "ffsim_version"});
  for (const Reader& m : r.child("measurements", "an array of the measurement files fitted").elements("measurements")) {
    c.measurements.push_back(m.string("file"));
    c.machines.push_back(m.string("machine"));
    (void)m.string("date");
    (void)m.integer("points", 0, 1 << 30);
    m.finish();
  }
  if (c.measurements.empty()) r.fail_at("measurements", "expected at least one measurement file");
  const Reader reg = r.child("regimes", "the cache/DRAM split: last_level_cache and rule");
  if (!reg.child("last_level_cache").is_null()) (void)reg.child("last_level_cache").as_quantity_si(Dimension::Size);
  (void)reg.string("rule");
  reg.finish();
  for (const Reader& x : r.child("left_out", "an array of the points no fit uses").elements("left_out")) {
    (void)x.string("file");
    (void)x.string("pointer");
    (void)x.string("stage");
    (void)x.string("reason");
    x.finish();
  }
  for (const Reader& x : r.child("predictions", "an array of the points predicted by no fit").elements("predictions")) {
    (void)x.string("file");
    (void)x.string("pointer");
    (void)x.string("stage");
    (void)x.choice("regime", {"cache", "dram"});
    (void)number_at_least(x, "bytes", 0);
    const Reader ms = x.child("measured_s", "a time in seconds");
    if (!(ms.as_number() > 0)) ms.fail("expected a positive time in seconds, got " + ms.describe());
    (void)number_at_least(x, "model_s", 0);
    (void)x.child("residual", "(model - measured) / measured").as_number();
    x.finish();
  }
  for (const Reader& f : r.child("fits", "an array of fits").elements("fits")) parse_fit(f);
  for (const Reader& o : r.child("overrides", "an array of overridden facts").elements("overrides")) {
    Override ov;
    ov.at = o.pointer();
    ov.kind = o.string("kind");
    ov.name = o.string("name");
    const Reader ptr = o.child("pointer", "a JSON Pointer to the fact");
    ov.pointer = ptr.as_string();
    if (ov.pointer.empty() || ov.pointer[0] != '/') ptr.fail("expected a JSON Pointer (e.g. \"/sockets/0/dram_bandwidth\"), got \"" + ov.pointer + "\"");
    check_value(o.child("value"));
    ov.value = o.string("value");
    ov.source = o.string("source");
    ov.param = o.string("parameter");
    ov.scope = o.choice("scope", {"library", "machine"});
    ov.scope_reason = o.string("scope_reason");
    if (ov.scope_reason.empty())
      o.fail_at("scope_reason", "expected why the value has scope \"" + ov.scope + "\" (what makes it a fact of the measured " +
                                    "machine, or a cost of the library that transfers to other machines), got an empty string");
    o.finish();
    c.overrides.push_back(ov);
  }
  r.finish();
  return c;
}

CalibrationFile load_calibration(const std::string& path) {
  return parse_calibration(config::Document::load(path, false));
}

void apply_calibration(config::Catalog& cat, const CalibrationFile& c) {
  if (!cat.find(config::kNode, c.node)) {
    const auto valid = cat.names(config::kNode);
    throw ConfigError(c.file, "/node", "unknown node model \"" + c.node + "\"" + did_you_mean(c.node, valid) + "; valid: " + join(valid));
  }
  bool library = false;
  for (const Override& o : c.overrides) {
    try {
      cat.set_fact(o.kind, o.name, o.pointer, "\"" + o.value + "\"", o.source);
    } catch (const ValueError& e) {
      throw ConfigError(c.file, o.at, e.what());
    }
    library = library || o.kind == "collective_library";
  }
  // The calibrated models must still be valid models (a fitted duplex cap above twice the port's rate is not).
  try {
    (void)config::parse_node(*cat.find(config::kNode, c.node), cat);
    if (library) (void)config::load_library_params(cat);
  } catch (const ConfigError& e) {
    // Name the override that broke the model when there is one (its fact, in its model's file).
    for (const Override& o : c.overrides) {
      const config::CatalogEntry* target = cat.find(o.kind, o.name);
      if (target && target->file == e.file() && e.pointer().rfind(o.pointer, 0) == 0)
        throw ConfigError(c.file, o.at + "/value", "\"" + o.value + "\" makes " + o.kind + " model " + o.name +
                                                       " invalid: " + e.message() + " (at " + e.file() + ":" + e.pointer() + ")");
    }
    throw ConfigError(c.file, "/overrides", "the calibrated models are not valid: " + std::string(e.what()));
  }
}

void check_calibration_entry(const config::CatalogEntry& e, const config::Catalog& cat) {
  const CalibrationFile c = parse_calibration(e.document);
  config::Catalog copy = cat;
  apply_calibration(copy, c);
}

}  // namespace ffsim::calib
