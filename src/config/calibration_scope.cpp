// Where a calibration holds: the node models a machine-scoped value holds for, and applying the
// values that hold for a command's scenarios to the catalog.
// SPDX-License-Identifier: Apache-2.0
#include "config/calibration_scope.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "config/calibration_reader.hpp"
#include "config/hw_reader.hpp"
#include "config/scenario_doc.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::config {

namespace {

std::string extends_of(const CatalogEntry& e) {
  const Reader r = e.document.root();
  return r.is_object() && r.has("extends") && r.child("extends").is_string() ? r.child("extends").as_string() : "";
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The names a node document references at `array`/*/`key` ("sockets", "cpu"), strings only.
void refs(const Reader& node, const char* array, const char* key, std::set<std::string>& out) {
  if (!node.is_object() || !node.has(array) || !node.child(array).is_array()) return;
  const Reader a = node.child(array);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Reader x = a.at(i);
    if (x.is_object() && x.has(key) && x.child(key).is_string()) out.insert(x.child(key).as_string());
  }
}

// True if only node models of `family` use the entry (kind, name): the node models themselves, and
// CPU, GPU and NIC models no other node model references. Other kinds (collective libraries, ...)
// belong to every scenario.
bool owned_by(const Catalog& cat, const std::vector<std::string>& family, const std::string& kind,
              const std::string& name) {
  if (kind == kNode) return contains(family, name);
  const char* array = kind == kCpu ? "sockets" : kind == kGpu ? "gpus" : kind == kNic ? "nics" : nullptr;
  if (!array) return false;
  const char* key = kind == kCpu ? "cpu" : "model";
  for (const auto* e : cat.of_kind(kNode)) {
    std::set<std::string> used;
    refs(e->document.root(), array, key, used);
    if (used.count(name) && !contains(family, e->name)) return false;
  }
  return true;
}

// The text of the fact at `pointer` of a document ("/sockets/0/dram_bandwidth"): its "value" when
// it is a fact object, else the JSON value; nullopt where the pointer leads nowhere.
std::optional<std::string> fact_text(Reader r, const std::string& pointer) {
  std::size_t i = 1;
  while (i <= pointer.size()) {
    const std::size_t j = std::min(pointer.find('/', i), pointer.size());
    const std::string tok = pointer.substr(i, j - i);
    if (r.is_object()) {
      if (!r.has(tok)) return std::nullopt;
      r = r.child(tok);
    } else if (r.is_array()) {
      if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
      const std::size_t k = std::stoul(tok);
      if (k >= r.size()) return std::nullopt;
      r = r.at(k);
    } else {
      return std::nullopt;
    }
    i = j + 1;
  }
  if (r.is_object() && r.has("value")) return r.child("value").describe();
  return r.describe();
}

std::string list(const std::vector<std::string>& v) { return join(v, ", "); }

}  // namespace

std::vector<std::string> node_family(const Catalog& cat, const std::string& node) {
  std::vector<std::string> out;
  for (const auto* e : cat.of_kind(kNode)) {
    // Walk the chain of "extends" (the catalog refused cycles when it loaded).
    std::string cur = e->name;
    for (std::size_t hops = 0; !cur.empty() && hops < 64; ++hops) {
      if (cur == node) {
        out.push_back(e->name);
        break;
      }
      const CatalogEntry* x = cat.find(kNode, cur);
      cur = x ? extends_of(*x) : "";
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

calib::CalibrationUse apply_scoped(Catalog& cat, const calib::CalibrationFile& c,
                                   const std::vector<std::string>& targets, bool have_scenarios) {
  calib::CalibrationUse u;
  u.file = c.file;
  u.name = c.name;
  u.node = c.node;
  for (const auto& t : targets)  // "": a scenario scenario_node could not read (its own loading fails)
    if (!t.empty() && !contains(u.targets, t)) u.targets.push_back(t);
  if (!cat.find(kNode, c.node)) {
    const auto valid = cat.names(kNode);
    throw ConfigError(
        c.file, "/node",
        "unknown node model \"" + c.node + "\"" + did_you_mean(c.node, valid) + "; valid: " + join(valid));
  }
  u.family = node_family(cat, c.node);
  std::vector<std::string> in, out;  // the targets in the family, and the others
  for (const auto& t : u.targets) (contains(u.family, t) ? in : out).push_back(t);
  const std::string family_text =
      c.node + (u.family.size() > 1 ? " or a node model extending it (" + list(u.family) + ")"
                                    : " (or a node model extending it)");
  calib::CalibrationFile apply = c;
  apply.overrides.clear();
  for (const calib::Override& o : c.overrides) {
    calib::ScopedOverride s{o, false, ""};
    if (o.scope == calib::kScopeLibrary) {
      s.applied = true;
      s.reason = "library scope: " + o.scope_reason;
    } else {
      const bool owned = owned_by(cat, u.family, o.kind, o.name);
      const std::string shared = o.kind + " " + o.name + " is used beyond node model " + family_text;
      if (!have_scenarios) {
        s.applied = owned;
        s.reason = owned ? "machine scope: " + o.kind + " " + o.name + " belongs to node model " + family_text
                         : "machine scope: " + shared + "; it applies only to a command whose scenarios all run on " +
                               family_text;
      } else if (in.empty()) {
        s.reason = "machine scope: the scenario's node model " + list(out) +
                   (out.size() == 1 ? " is not " : " are not ") + c.node + " and does not extend it";
      } else if (!owned && !out.empty()) {
        s.reason = "machine scope: " + shared + ", and this command also runs node model " + list(out);
      } else {
        s.applied = true;
        s.reason =
            "machine scope: the scenario's node model " + list(in) + (in.size() == 1 ? " is " : " are ") + family_text;
      }
    }
    if (s.applied) {
      apply.overrides.push_back(o);
      // A node fact holds for the family's node models that inherit the measured node's value.
      if (o.kind == kNode && o.name == c.node) {
        const auto base = fact_text(cat.find(kNode, c.node)->document.root(), o.pointer);
        for (const auto& f : u.family) {
          if (f == c.node) continue;
          const auto v = fact_text(cat.find(kNode, f)->document.root(), o.pointer);
          if (base && v && *v == *base) {
            calib::Override x = o;
            x.name = f;
            apply.overrides.push_back(x);
          }
        }
      }
    }
    u.values.push_back(std::move(s));
  }
  apply_calibration(cat, apply);
  return u;
}

std::string scenario_node(const std::string& path) {
  try {
    const Document d = load_scenario(path);
    const Reader r = d.root();
    if (!r.is_object() || !r.has("cluster")) return "";
    const Reader c = r.child("cluster");
    if (!c.is_object() || !c.has("node") || !c.child("node").is_string()) return "";
    return c.child("node").as_string();
  } catch (const std::exception&) {
    return "";  // the command's own loading says what is wrong with the file
  }
}

}  // namespace ffsim::config
