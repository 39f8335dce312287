// The hardware/model catalog.
// SPDX-License-Identifier: Apache-2.0
#include "config/catalog.hpp"

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::config {

namespace fs = std::filesystem;

bool is_snake_case(const std::string& name) {
  if (name.empty() || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

Catalog Catalog::load(const std::string& dir, const std::vector<std::string>& kinds) {
  return load(std::vector<std::string>{dir}, kinds);
}

Catalog Catalog::load(const std::vector<std::string>& dirs, const std::vector<std::string>& kinds) {
  Catalog c;
  c.dir_ = join(dirs);
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw ConfigError(dir, "", "models directory not found (use --models DIR)");
    // Every .json file that is not a folder: a FIFO or a device among them is refused by the
    // reader (Document::read_file), not skipped.
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (!e.is_directory() && e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) c.add_file(f, kinds);
    ++c.folder_;
  }
  c.folder_ = 0;  // a file added later (ffsim check) must not replace a catalog entry: a duplicate
  c.resolve();
  return c;
}

void Catalog::add_file(const std::string& path, const std::vector<std::string>& kinds) {
  const std::string text = Document::read_file(path);
  // What hfreduce-bench writes begins with its schema (src/hfreduce/bench): a measurement, which
  // calibrate and validate read and check, not a catalog entry. Known from the first member, so
  // that every command need not parse the 3.6 MB of models/measured (80 of its 110 ms per
  // command in 2026-12-01's catalog).
  if (Document::first_member_is(text, "schema", "ffsim.hfreduce-bench/")) return;
  Document doc = Document::parse(text, path, /*require_sources=*/true);
  Reader r = doc.root();
  if (!r.is_object()) r.fail("expected an object, got " + r.describe());
  if (!r.has("kind") && r.has("schema")) return;  // not a catalog entry: a measurement written by a benchmark
  Reader kr = r.child("kind", "the kind of catalog entry: one of " + join(kinds));
  const std::string kind = kr.as_string();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    if (kind == "measurement" || kind == "calibration") return;  // validated by calibrate/validate
    kr.fail("unknown kind \"" + kind + "\"" + did_you_mean(kind, kinds) + "; valid: " + join(kinds));
  }
  Reader nr = r.child("name", "a snake_case name");
  const std::string name = nr.as_string();
  if (!is_snake_case(name)) nr.fail("expected a snake_case name ([a-z][a-z0-9_]*), got \"" + name + "\"");
  const auto key = std::make_pair(kind, name);
  std::string overrides;
  if (auto it = raw_.find(key); it != raw_.end() && it->second.folder < folder_) {
    overrides = it->second.file;  // a later models folder replaces the entry by name
    raw_.erase(it);
  } else if (it != raw_.end())
    nr.fail("duplicate " + kind + " name \"" + name + "\" (also defined in " + it->second.file + "); names are unique " +
            "across the catalog: rename one" + (kind == "calibration" ? std::string(" (ffsim calibrate --name NAME)") : std::string()));
  doc.set_schema_root(kind);
  Raw raw{kind, name, r.string_or("description", ""), path, r.string_or("extends", ""), doc, folder_, overrides};
  raw_.emplace(key, std::move(raw));
}

void Catalog::resolve() {
  entries_.clear();
  for (const auto& [key, raw] : raw_) {
    // Walk the "extends" chain; detect cycles and dangling names.
    std::vector<const Raw*> chain{&raw};
    const Raw* cur = &raw;
    while (!cur->extends.empty()) {
      Reader ext = cur->document.root().child("extends");
      auto it = raw_.find({cur->kind, cur->extends});
      if (it == raw_.end()) {
        std::vector<std::string> valid;
        for (const auto& n : names_of_raw(cur->kind))
          if (n != cur->name) valid.push_back(n);
        ext.fail("unknown " + cur->kind + " \"" + cur->extends + "\" to extend" + did_you_mean(cur->extends, valid) +
                 "; valid: " + join(valid));
      }
      for (const Raw* seen : chain) {
        if (seen == &it->second) {
          std::string cycle;
          for (const Raw* c : chain) cycle += c->name + " -> ";
          ext.fail("circular \"extends\": " + cycle + it->second.name);
        }
      }
      chain.push_back(&it->second);
      cur = &it->second;
    }
    Document merged = chain.back()->document;
    for (auto it = chain.rbegin() + 1; it != chain.rend(); ++it) merged = (*it)->document.merged_over(merged);
    entries_.emplace(key, CatalogEntry{raw.kind, raw.name, raw.description, raw.file, merged, raw.overrides});
  }
}

std::vector<std::string> Catalog::names_of_raw(const std::string& kind) const {
  std::vector<std::string> r;
  for (const auto& [key, raw] : raw_)
    if (key.first == kind) r.push_back(key.second);
  return r;
}

void Catalog::set_fact(const std::string& kind, const std::string& name, const std::string& pointer,
                       const std::string& value_json, const std::string& source) {
  auto it = entries_.find({kind, name});
  if (it == entries_.end()) {
    const auto valid = names(kind);
    throw ValueError("unknown " + kind + " model \"" + name + "\"" + did_you_mean(name, valid) + "; valid: " +
                     (valid.empty() ? std::string("(none in ") + dir_ + ")" : join(valid)));
  }
  it->second.document = it->second.document.with_fact(pointer, value_json, source);
}

const CatalogEntry* Catalog::find(const std::string& kind, const std::string& name) const {
  auto it = entries_.find({kind, name});
  return it == entries_.end() ? nullptr : &it->second;
}

const CatalogEntry& Catalog::resolve_ref(const std::string& kind, const Reader& ref) const {
  ref.record_reference(kind);
  const std::string name = ref.as_string();
  if (const CatalogEntry* e = find(kind, name)) return *e;
  const auto valid = names(kind);
  ref.fail("unknown " + kind + " model \"" + name + "\"" + did_you_mean(name, valid) + "; valid: " +
           (valid.empty() ? std::string("(none in ") + dir_ + ")" : join(valid)));
}

CatalogEntry Catalog::model_ref(const std::string& kind, const Reader& ref, const std::string& what) const {
  const std::string label = what.empty() ? kind + " model" : what;
  if (ref.is_string()) {
    const std::string name = ref.as_string();
    if (name.empty())
      ref.fail("expected the name of a " + label + " (or an inline model object), got an empty string; valid: " +
               join(names(kind)));
    if (!what.empty() && !find(kind, name)) {
      const auto valid = names(kind);
      ref.fail("unknown " + label + " \"" + name + "\"" + did_you_mean(name, valid) + "; valid: " + join(valid));
    }
    return resolve_ref(kind, ref);
  }
  if (!ref.is_object())
    ref.fail("expected the name of a " + label + " or an inline " + kind + " object ({\"extends\": \"<name>\", ...}), got " +
             ref.describe());
  ref.record_reference(kind);
  Document doc = Document::inline_at(ref);
  doc.set_schema_root(kind);
  const Reader r = doc.root();
  if (r.has("kind")) {
    const Reader k = r.child("kind");
    if (k.as_string() != kind) k.fail("expected \"" + kind + "\" (the kind of model named here), got " + k.describe());
  }
  CatalogEntry e{kind, "", "", ref.file(), doc, ""};
  std::string base_description;
  if (r.has("extends")) {
    const Reader ext = r.child("extends");
    const std::string base = ext.as_string();
    const CatalogEntry* b = find(kind, base);
    if (!b) {
      const auto valid = names(kind);
      ext.fail("unknown " + kind + " \"" + base + "\" to extend" + did_you_mean(base, valid) + "; valid: " + join(valid));
    }
    e.name = b->name;
    base_description = b->description;
    e.document = doc.inherit(b->document, b->name);
  } else if (!r.has("name")) {
    r.fail("an inline " + kind + " model needs \"extends\" (the catalog entry it changes) or a \"name\" (a whole definition)");
  }
  if (r.has("name")) {
    const Reader nr = r.child("name");
    e.name = nr.as_string();
    if (!is_snake_case(e.name)) nr.fail("expected a snake_case name ([a-z][a-z0-9_]*), got \"" + e.name + "\"");
  }
  // Say in every listing that this is not the catalog's entry: "... (changed inline: port_bandwidth)".
  if (r.has("description")) {
    e.description = r.child("description").as_string();
  } else {
    std::vector<std::string> changed;
    for (const auto& k : r.keys())
      if (k != "extends" && k != "kind" && k != "name") changed.push_back(k);
    e.description = r.has("extends") ? base_description + " (changed inline in " + ref.file() +
                                           (changed.empty() ? "" : ": " + join(changed)) + ")"
                                     : "(defined inline in " + ref.file() + ")";
  }
  return e;
}

std::vector<const CatalogEntry*> Catalog::of_kind(const std::string& kind) const {
  std::vector<const CatalogEntry*> r;
  for (const auto& [key, e] : entries_)
    if (key.first == kind) r.push_back(&e);
  return r;
}

std::vector<std::string> Catalog::names(const std::string& kind) const {
  std::vector<std::string> r;
  for (const auto& [key, e] : entries_)
    if (key.first == kind) r.push_back(key.second);
  return r;
}

}  // namespace ffsim::config
