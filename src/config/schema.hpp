// The JSON Schema of scenarios and models, learnt from the readers themselves: while recording,
// every Reader accessor notes the key it asked for, what it expected there and the type it read,
// so that the schema is the parsers' own key tables and cannot drift from them.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/unit_parse.hpp"

namespace ffsim::config {

/// What the readers learnt about the values at one (normalized) JSON Pointer: array indices are
/// one "items" node, and a fact's {"value": ...} wrapper is folded into the fact's own node.
struct SchemaNode {
  std::string description;  ///< what the reader said it expected there ("a node model name")
  std::set<std::string> types;  ///< "string", "integer", "number", "boolean", "object", "array"
  std::vector<std::string> choices;  ///< the values a choice accepts
  std::optional<std::pair<long long, long long>> int_range;
  std::optional<std::pair<double, double>> number_range;
  std::optional<Dimension> dimension;  ///< a quantity with a unit
  const PlausibleRange* range = nullptr;
  std::string model_kind;  ///< names a catalog model of this kind (or defines one inline)
  bool fact = false;       ///< read as a fact: {"value": ..., "source": "..."} (or a bare value in a scenario)
  bool name = false;       ///< a non-empty name
  bool closed = false;     ///< finish() was called: unknown keys are errors
  bool map = false;        ///< its keys are names (a price per model), not a fixed set
  std::map<std::string, SchemaNode> properties;
  std::unique_ptr<SchemaNode> items;
};

/// Collects SchemaNodes per document root ("scenario", or a catalog kind such as "gpu").
class SchemaRecorder {
public:
  /// The node at `pointer` of a document of `root`; `fact_parent` folding as described above.
  SchemaNode& at(const std::string& root, const std::string& pointer);
  [[nodiscard]] const std::map<std::string, SchemaNode>& roots() const { return roots_; }

private:
  std::map<std::string, SchemaNode> roots_;
};

/// Starts sending every Reader's reads of documents that have a schema root to `rec`; nullptr
/// stops. Not thread-safe: record from one thread (ffsim schema).
void record_schema(SchemaRecorder* rec);
/// The recorder in use, or nullptr.
[[nodiscard]] SchemaRecorder* schema_recorder();

/// The two schema files (draft 2020-12) from what `rec` recorded: {"scenario.schema.json": text,
/// "model.schema.json": text}. `names(kind)` lists the catalog's entries of a kind (offered as
/// examples where a model is named); `kinds` are the catalog's kinds with their descriptions.
[[nodiscard]] std::map<std::string, std::string> json_schemas(
    const SchemaRecorder& rec, const std::vector<std::pair<std::string, std::string>>& kinds,
    const std::function<std::vector<std::string>(const std::string&)>& names);

}  // namespace ffsim::config
