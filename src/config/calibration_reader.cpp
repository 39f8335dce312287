// Calibration files: parsing, checking, applying their overrides to the catalog; the machine of a
// node model for the fits.
// SPDX-License-Identifier: Apache-2.0
#include "config/calibration_reader.hpp"

#include <string_view>
#include <utility>

#include "config/coll_reader.hpp"
#include "config/hw_reader.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"
#include "core/unit_parse.hpp"

namespace ffsim::config {

// The catalog kinds calib's overrides name are this layer's.
static_assert(std::string_view(calib::kOverrideNode) == kNode);
static_assert(std::string_view(calib::kOverrideGpu) == kGpu);
static_assert(std::string_view(calib::kOverrideCpu) == kCpu);
static_assert(std::string_view(calib::kOverrideNic) == kNic);

namespace {

// A fitted value: a bandwidth or a time with its unit, not negative.
void check_value(const Reader& v) {
  if (!v.is_string())
    v.fail("expected a bandwidth or a time with unit (e.g. \"33.1GB/s\" or \"9.4us\"), got " + v.describe());
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
  if (!(v >= min))
    c.fail("expected a number >= " + std::to_string(static_cast<long long>(min)) + ", got " + c.describe());
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

calib::CalibrationFile parse_calibration(const Document& doc) {
  const Reader r = doc.root();
  if (!r.is_object()) r.fail("expected a calibration object, got " + r.describe());
  calib::CalibrationFile c;
  c.file = doc.file();
  const Reader kind = r.child("kind", "\"calibration\"");
  if (kind.as_string() != calib::kCalibration) kind.fail("expected \"calibration\", got \"" + kind.as_string() + "\"");
  const Reader name = r.child("name", "a snake_case name");
  c.name = name.as_string();
  if (!is_snake_case(c.name)) name.fail("expected a snake_case name ([a-z][a-z0-9_]*), got \"" + c.name + "\"");
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
    calib::Override ov;
    ov.at = o.pointer();
    ov.kind = o.string("kind");
    ov.name = o.string("name");
    const Reader ptr = o.child("pointer", "a JSON Pointer to the fact");
    ov.pointer = ptr.as_string();
    if (ov.pointer.empty() || ov.pointer[0] != '/')
      ptr.fail("expected a JSON Pointer (e.g. \"/sockets/0/dram_bandwidth\"), got \"" + ov.pointer + "\"");
    check_value(o.child("value"));
    ov.value = o.string("value");
    ov.source = o.string("source");
    ov.param = o.string("parameter");
    ov.scope = o.choice("scope", {"library", "machine"});
    ov.scope_reason = o.string("scope_reason");
    if (ov.scope_reason.empty())
      o.fail_at("scope_reason",
                "expected why the value has scope \"" + ov.scope + "\" (what makes it a fact of the measured " +
                    "machine, or a cost of the library that transfers to other machines), got an empty string");
    o.finish();
    c.overrides.push_back(ov);
  }
  r.finish();
  return c;
}

calib::CalibrationFile load_calibration(const std::string& path) {
  return parse_calibration(Document::load(path, false));
}

void apply_calibration(Catalog& cat, const calib::CalibrationFile& c) {
  if (!cat.find(kNode, c.node)) {
    const auto valid = cat.names(kNode);
    throw ConfigError(
        c.file, "/node",
        "unknown node model \"" + c.node + "\"" + did_you_mean(c.node, valid) + "; valid: " + join(valid));
  }
  bool library = false;
  for (const calib::Override& o : c.overrides) {
    try {
      cat.set_fact(o.kind, o.name, o.pointer, "\"" + o.value + "\"", o.source);
    } catch (const ValueError& e) {
      throw ConfigError(c.file, o.at, e.what());
    }
    library = library || o.kind == "collective_library";
  }
  // The calibrated models must still be valid models (a fitted duplex cap above twice the port's rate is not).
  try {
    (void)parse_node(*cat.find(kNode, c.node), cat);
    if (library) (void)load_library_params(cat);
  } catch (const ConfigError& e) {
    // Name the override that broke the model when there is one (its fact, in its model's file).
    for (const calib::Override& o : c.overrides) {
      const CatalogEntry* target = cat.find(o.kind, o.name);
      if (target && target->file == e.file() && e.pointer().rfind(o.pointer, 0) == 0)
        throw ConfigError(c.file, o.at + "/value",
                          "\"" + o.value + "\" makes " + o.kind + " model " + o.name + " invalid: " + e.message() +
                              " (at " + e.file() + ":" + e.pointer() + ")");
    }
    throw ConfigError(c.file, "/overrides", "the calibrated models are not valid: " + std::string(e.what()));
  }
}

void check_calibration_entry(const CatalogEntry& e, const Catalog& cat) {
  const calib::CalibrationFile c = parse_calibration(e.document);
  Catalog copy = cat;
  apply_calibration(copy, c);
}

calib::BenchModel make_bench_model(const Catalog& cat, const std::string& node_name) {
  const CatalogEntry* e = cat.find(kNode, node_name);
  if (!e) {
    const auto valid = cat.names(kNode);
    throw ValueError("unknown node model \"" + node_name + "\"" + did_you_mean(node_name, valid) +
                     "; valid: " + join(valid));
  }
  hw::NodeSpec node = parse_node(*e, cat);
  return calib::make_bench_model(std::move(node), load_library_params(cat));
}

}  // namespace ffsim::config
