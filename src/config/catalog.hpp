// The hardware/model catalog: every JSON file under models/, indexed by (kind, name),
// with "extends" inheritance resolved and references checked by name.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/reader.hpp"

namespace ffsim::config {

/// One catalog file: {"kind": "gpu", "name": "a100_pcie_40gb", "description": "...", ...}.
struct CatalogEntry {
  std::string kind;
  std::string name;
  std::string description;
  std::string file;
  Document document;  ///< with any "extends" chain already merged in
  /// The file of the entry of the same kind and name in an earlier models folder that this one
  /// replaces (Catalog::load of several folders), or empty.
  std::string overrides;
};

class Catalog {
public:
  /// Loads every *.json file below `dir` (recursively, in sorted path order) that carries a
  /// "kind" listed in `kinds` (files of other kinds, such as measurements, are skipped by the
  /// catalog and validated by their own commands). Errors name the file and JSON pointer.
  static Catalog load(const std::string& dir, const std::vector<std::string>& kinds);
  /// The same over several folders, in order: an entry of a later folder replaces the entry of the
  /// same kind and name of an earlier one (within one folder a name stays unique).
  static Catalog load(const std::vector<std::string>& dirs, const std::vector<std::string>& kinds);

  /// Adds one file. Throws ConfigError on a duplicate (kind, name), a bad name or kind.
  void add_file(const std::string& path, const std::vector<std::string>& kinds);
  /// Resolves "extends" for every entry (call after the last add_file). Circular or dangling
  /// chains throw ConfigError at the offending file's /extends.
  void resolve();

  /// Overrides one fact of a resolved entry (a calibrated value): see Document::with_fact. Entries
  /// that extend this one keep the value they inherited. Throws ValueError for an unknown entry
  /// or a pointer whose parent object does not exist.
  void set_fact(const std::string& kind, const std::string& name, const std::string& pointer,
                const std::string& value_json, const std::string& source);

  [[nodiscard]] const CatalogEntry* find(const std::string& kind, const std::string& name) const;
  /// The entry `kind`/`name` referenced at `ref` (a string value inside another document);
  /// an unknown name fails at `ref`: unknown gpu model "x" (did you mean "y"?); valid: a, b.
  [[nodiscard]] const CatalogEntry& resolve_ref(const std::string& kind, const Reader& ref) const;
  /// The model of `kind` a document names at `ref`, wherever a model is named: a string is the
  /// name of a catalog entry (as resolve_ref); an object is a model defined in place, either
  /// {"extends": "<entry>", <keys to change>...} (merged over that entry, RFC 7386: arrays are
  /// replaced whole, null deletes a key) or a whole definition with a "name". Its errors point into
  /// ref's file and pointer. `what` names the kind in messages ("gpu model", "neural network").
  [[nodiscard]] CatalogEntry model_ref(const std::string& kind, const Reader& ref, const std::string& what = "") const;
  [[nodiscard]] std::vector<const CatalogEntry*> of_kind(const std::string& kind) const;
  [[nodiscard]] std::vector<std::string> names(const std::string& kind) const;
  /// The models folder, or the folders loaded, comma-separated.
  [[nodiscard]] const std::string& dir() const { return dir_; }

private:
  struct Raw {
    std::string kind, name, description, file, extends;
    Document document;
    std::size_t folder = 0;  ///< which folder of load() it came from
    std::string overrides;
  };
  [[nodiscard]] std::vector<std::string> names_of_raw(const std::string& kind) const;

  std::string dir_;
  std::size_t folder_ = 0;  ///< the folder load() is reading
  std::map<std::pair<std::string, std::string>, Raw> raw_;
  std::map<std::pair<std::string, std::string>, CatalogEntry> entries_;
};

/// True if `name` is a valid snake_case catalog name: [a-z0-9_]+ starting with a letter.
[[nodiscard]] bool is_snake_case(const std::string& name);

}  // namespace ffsim::config
