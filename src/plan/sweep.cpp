// Sweeps of one numeric knob of a scenario.
// SPDX-License-Identifier: Apache-2.0
#include "plan/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"

namespace ffsim::plan {

namespace {

constexpr std::size_t kMaxValues = 100000;  // a guard against a step that is far too small

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> r;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      r.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  r.push_back(cur);
  return r;
}

double number(const std::string& text, const std::string& knob) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw UsageError("--sweep " + knob + ": expected a number, got \"" + text + "\"");
  return v;
}

// A JSON string literal (keys of the patch come from the command line).
std::string quote(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    r += c;
  }
  return r + "\"";
}

std::string json_number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9e15) return std::to_string(static_cast<long long>(v));
  std::ostringstream ss;
  ss.precision(17);
  ss << v;
  return ss.str();
}

// A nested JSON object that sets `path` to `leaf`: {"a": {"b": leaf}}.
struct PatchNode {
  std::string leaf;  // JSON text; empty for an inner object
  std::vector<std::pair<std::string, PatchNode>> kids;
  PatchNode& at(const std::string& k) {
    for (auto& [key, n] : kids)
      if (key == k) return n;
    kids.emplace_back(k, PatchNode{});
    return kids.back().second;
  }
  [[nodiscard]] std::string text() const {
    if (!leaf.empty()) return leaf;
    std::string r = "{";
    for (std::size_t i = 0; i < kids.size(); ++i) r += (i ? ", " : "") + quote(kids[i].first) + ": " + kids[i].second.text();
    return r + "}";
  }
};

std::string dotted(const std::vector<std::string>& path) { return join(path, "."); }

}  // namespace

std::string Knob::pointer() const {
  std::string p;
  for (const auto& k : path) p += "/" + config::pointer_escape(k);
  return p;
}

Knob parse_knob(const std::string& text, const config::Document& doc) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("--sweep expects KNOB=START:STOP:STEP or KNOB=V1,V2,... (e.g. gpus=2000:32000:2000), got \"" + text +
                     "\"");
  Knob k;
  k.name = text.substr(0, eq);
  const std::string spec = text.substr(eq + 1);
  // Values.
  if (spec.find(':') != std::string::npos) {
    const auto parts = split(spec, ':');
    if (parts.size() != 3)
      throw UsageError("--sweep " + k.name + ": expected START:STOP:STEP, got \"" + spec + "\"");
    const double start = number(parts[0], k.name), stop = number(parts[1], k.name), step = number(parts[2], k.name);
    if (!(step > 0)) throw UsageError("--sweep " + k.name + ": the step must be positive, got " + parts[2]);
    if (stop < start) throw UsageError("--sweep " + k.name + ": STOP (" + parts[1] + ") is below START (" + parts[0] + ")");
    // n values start + i * step (no accumulated rounding); stop is included when a value hits it.
    const double span = (stop - start) / step;
    if (span >= static_cast<double>(kMaxValues))
      throw UsageError("--sweep " + k.name + ": more than " + fmt_int(static_cast<long long>(kMaxValues)) + " values");
    const auto n = static_cast<std::size_t>(std::floor(span + 1e-9)) + 1;
    for (std::size_t i = 0; i < n; ++i) k.values.push_back(start + static_cast<double>(i) * step);
  } else {
    for (const auto& v : split(spec, ',')) {
      const double x = number(v, k.name);
      if (std::find(k.values.begin(), k.values.end(), x) != k.values.end())
        throw UsageError("--sweep " + k.name + ": " + v + " appears twice in \"" + spec + "\" (its rows would repeat); give each value once");
      k.values.push_back(x);
    }
    if (k.values.size() > kMaxValues)
      throw UsageError("--sweep " + k.name + ": more than " + fmt_int(static_cast<long long>(kMaxValues)) + " values");
  }
  // Path.
  const config::Reader root = doc.root();
  if (k.name == "gpus" || k.name == "nodes") {
    k.path = {"cluster", k.name};
    k.clear = {{"cluster", k.name == "gpus" ? "nodes" : "gpus"}};
  } else if (k.name == "storage") {
    k.path = {"cluster", "storage", "count"};
  } else if (k.name.find('.') != std::string::npos) {
    k.path = split(k.name, '.');
    for (const auto& p : k.path)
      if (p.empty()) throw UsageError("--sweep: empty key in the knob path \"" + k.name + "\"");
    // cluster.gpus and cluster.nodes are the gpus and nodes knobs: the other key goes.
    if (k.path == std::vector<std::string>{"cluster", "gpus"}) k.clear = {{"cluster", "nodes"}};
    if (k.path == std::vector<std::string>{"cluster", "nodes"}) k.clear = {{"cluster", "gpus"}};
  } else {
    for (const char* section : {"fabric", "cluster"}) {
      const auto sec = root.is_object() ? root.optional_child(section) : std::nullopt;
      if (sec && sec->is_object() && sec->has(k.name)) {
        k.path = {section, k.name};
        break;
      }
    }
    if (k.path.empty())
      throw UsageError("unknown knob \"" + k.name + "\": use gpus, nodes, storage, a key of the scenario's fabric or " +
                       "cluster section, or a dotted path such as fabric.oversubscription");
  }
  // The object that holds the knob must exist (a misspelt section would otherwise be created).
  config::Reader at = root;
  for (std::size_t i = 0; i + 1 < k.path.size(); ++i) {
    std::vector<std::string> here = at.is_object() ? at.keys() : std::vector<std::string>{};
    const auto next = at.is_object() ? at.optional_child(k.path[i]) : std::nullopt;
    if (!next || !next->is_object())
      throw UsageError("--sweep " + k.name + ": the scenario has no object \"" +
                       dotted({k.path.begin(), k.path.begin() + static_cast<std::ptrdiff_t>(i) + 1}) + "\"" +
                       did_you_mean(k.path[i], here));
    at = *next;
  }
  return k;
}

config::Document patch(const config::Document& doc, const Knob& k, double value) {
  PatchNode root;
  PatchNode* n = &root;
  for (const auto& key : k.path) n = &n->at(key);
  n->leaf = json_number(value);
  for (const auto& c : k.clear) {
    PatchNode* m = &root;
    for (const auto& key : c) m = &m->at(key);
    m->leaf = "null";
  }
  return config::Document::parse(root.text(), doc.file(), false).merged_over(doc);
}

std::vector<SweepRow> sweep(const config::Document& doc, const config::Catalog& cat, const Knob& k,
                            const PlanOptions& opt) {
  std::vector<SweepRow> rows;
  const std::string knob_pointer = k.pointer();
  std::optional<std::size_t> last_fit;  // index of the previous row that fits
  for (double v : k.values) {
    SweepRow row;
    row.value = v;
    std::optional<ScenarioSpec> s;
    try {
      s = parse_scenario(patch(doc, k, v), cat, /*check_fit=*/false);
    } catch (const ConfigError& e) {
      // The scenario itself parsed (the caller checked): the patch is what it rejects.
      const bool at_knob = e.pointer() == knob_pointer || e.pointer().rfind(knob_pointer + "/", 0) == 0;
      // Not a value the key takes at all (0 or -16 GPUs, 2.5 nodes, beyond the maximum): the
      // reader's type and range errors, which all say "expected ...".
      if (at_knob && e.message().rfind("expected ", 0) == 0)
        throw UsageError("--sweep " + k.name + ": " + fmt_g(v, 10) + " is not a value " + k.pointer() + " takes: " + e.message());
      // The knob does not apply to this scenario (a key its fabric does not have, a section it lacks).
      if (!at_knob)
        throw UsageError("--sweep " + k.name + "=" + fmt_g(v, 10) + " does not apply to " + e.file() + ": it is rejected at " +
                         (e.pointer().empty() ? std::string("the document") : e.pointer()) + ": " + e.message());
      // A value the key takes that this design cannot (a GPU count that is not a multiple of the
      // node's): mark the row.
      row.note = "invalid: " + e.message();
      rows.push_back(std::move(row));
      continue;
    }
    row.gpus = s->cluster.gpus();
    try {
      const topo::Fabric f = build_fabric(*s);
      row.plan = plan_design(*s, f, opt);
      row.fits = true;
    } catch (const ValueError& e) {
      row.note = std::string("does not fit: ") + e.what();
    }
    if (row.fits && last_fit) {
      const auto& a = rows[*last_fit].plan->counts;
      const auto& b = row.plan->counts;
      std::vector<std::string> changes;
      if (b.layers != a.layers) changes.push_back(std::to_string(b.layers) + " layers");
      if (b.zones != a.zones) changes.push_back(std::to_string(b.zones) + " zones");
      if (b.planes != a.planes) changes.push_back(std::to_string(b.planes) + " planes");
      if (!changes.empty()) row.note = "now " + join(changes, ", ");
    }
    rows.push_back(std::move(row));
    if (rows.back().fits) last_fit = rows.size() - 1;
  }
  return rows;
}

}  // namespace ffsim::plan
