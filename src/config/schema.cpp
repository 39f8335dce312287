// The JSON Schema of scenarios and models, from what the readers recorded.
// SPDX-License-Identifier: Apache-2.0
#include "config/schema.hpp"

#include <cctype>

#include <nlohmann/json.hpp>

#include "core/spell.hpp"

namespace ffsim::config {

using nlohmann::json;

namespace {
SchemaRecorder* g_recorder = nullptr;

bool is_index(const std::string& t) { return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos; }

// "~1" -> "/", "~0" -> "~".
std::string unescape(const std::string& t) {
  std::string r;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '~' && i + 1 < t.size() && (t[i + 1] == '0' || t[i + 1] == '1')) {
      r += t[++i] == '0' ? '~' : '/';
    } else {
      r += t[i];
    }
  }
  return r;
}
}  // namespace

void record_schema(SchemaRecorder* rec) { g_recorder = rec; }
SchemaRecorder* schema_recorder() { return g_recorder; }

SchemaNode& SchemaRecorder::at(const std::string& root, const std::string& pointer) {
  SchemaNode* n = &roots_[root];
  std::size_t pos = 1;
  while (pos <= pointer.size() && !pointer.empty()) {
    const std::size_t next = std::min(pointer.find('/', pos), pointer.size());
    const std::string token = unescape(pointer.substr(pos, next - pos));
    pos = next + 1;
    if (n->fact && token == "value") continue;  // {"value": ...} of a fact: the fact's own node
    if (is_index(token) && !n->map) {
      if (!n->items) n->items = std::make_unique<SchemaNode>();
      n = n->items.get();
    } else {
      n = &n->properties[token];
    }
  }
  return *n;
}

namespace {

// A unit string of dimension `d`: a number, an optional blank, one of its units.
std::string unit_pattern(Dimension d) {
  std::string alt;
  for (const auto& u : dimension_units(d)) {
    std::string e;
    for (char c : u) {
      if (std::string_view("\\^$.|?*+()[]{}/").find(c) != std::string_view::npos) e += '\\';
      e += c;
    }
    alt += (alt.empty() ? "" : "|") + e;
  }
  return "^[+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?[ \t]?(" + alt + ")$";
}

// "quantity_bandwidth": the definition of a unit string of `d` in model.schema.json.
std::string quantity_def(Dimension d) {
  std::string n(dimension_name(d));
  for (char& c : n) c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return "quantity_" + n;
}

constexpr Dimension kDimensions[] = {Dimension::Size,     Dimension::Bandwidth, Dimension::Time,
                                     Dimension::Power,    Dimension::Energy,    Dimension::FlopRate,
                                     Dimension::FlopCount, Dimension::Frequency};

struct Emitter {
  const std::function<std::vector<std::string>(const std::string&)>& names;
  std::string model_file;  // "" inside model.schema.json, "model.schema.json" from the scenario's

  // The schema of one node's value (a fact's value, without its wrapper).
  json value_schema(const SchemaNode& n, bool strict) const {
    std::vector<json> alts;
    if (!n.model_kind.empty()) {
      json s{{"type", "string"}, {"description", "the name of a " + n.model_kind + " in the catalog (models/)"}};
      const auto ex = names(n.model_kind);
      if (!ex.empty()) s["examples"] = ex;
      alts.push_back(s);
      alts.push_back(json{{"$ref", model_file + "#/$defs/" + n.model_kind + "_inline"},
                          {"description", "a " + n.model_kind + " defined here: {\"extends\": \"<name>\", <keys to change>} or a whole one with a \"name\""}});
    }
    if (n.dimension) {
      const Dimension d = *n.dimension;
      const PlausibleRange& r = n.range ? *n.range : default_range(d);
      alts.push_back(json{{"$ref", model_file + "#/$defs/" + quantity_def(d)},
                          {"x-ffsim-unit-kind", std::string(dimension_name(d))},
                          {"description", a_dimension(d) + " with its unit, e.g. \"" + std::string(dimension_example(d)) +
                                              "\"; plausible " + std::string(r.kind) + ": " + std::string(r.min) + " to " +
                                              std::string(r.max)}});
      alts.push_back(json{{"const", 0}, {"description", "zero, where the key allows it"}});
    }
    if (n.types.count("string") && n.model_kind.empty() && !n.dimension) {
      json s{{"type", "string"}};
      if (!n.choices.empty()) s["enum"] = n.choices;
      if (n.name) s["minLength"] = 1;
      alts.push_back(s);
    }
    if (n.types.count("integer")) {
      json s{{"type", "integer"}};
      if (n.int_range) {
        if (n.int_range->first != INT64_MIN) s["minimum"] = n.int_range->first;
        if (n.int_range->second != INT64_MAX) s["maximum"] = n.int_range->second;
      }
      alts.push_back(s);
    }
    if (n.types.count("number") && !n.types.count("integer")) {
      json s{{"type", "number"}};
      if (n.number_range) {
        s["minimum"] = n.number_range->first;
        s["maximum"] = n.number_range->second;
      }
      alts.push_back(s);
    }
    if (n.types.count("boolean")) alts.push_back(json{{"type", "boolean"}});
    if (n.types.count("array") || n.items) {
      json s{{"type", "array"}};
      if (n.items) s["items"] = schema(*n.items, strict);
      alts.push_back(s);
    }
    if (n.types.count("object") || !n.properties.empty()) {
      json s{{"type", "object"}};
      if (n.map) {
        // Keys are names (of models, cables...): every value has the schema of those seen.
        SchemaNode merged;
        for (const auto& [k, v] : n.properties) merge(merged, v);
        s["additionalProperties"] = schema(merged, strict);
      } else {
        json props = json::object();
        for (const auto& [k, v] : n.properties) props[k] = schema(v, strict);
        if (!props.empty()) s["properties"] = props;
        if (n.closed) s["additionalProperties"] = false;
      }
      alts.push_back(s);
    }
    if (alts.empty()) return json::object();  // read by no accessor in the shipped files: anything
    if (alts.size() == 1) return alts.front();
    return json{{"anyOf", alts}};
  }

  // The schema of a node: its value, wrapped as a fact where it is one.
  json schema(const SchemaNode& n, bool strict) const {
    json v = value_schema(n, strict);
    json r;
    if (n.fact) {
      json wrapped{{"type", "object"},
                   {"properties",
                    {{"value", v},
                     {"source", {{"type", "string"}, {"minLength", 1}, {"description", "where the value comes from"}}},
                     {"note", {{"type", "string"}}}}},
                   {"required", strict ? json::array({"value", "source"}) : json::array({"value"})},
                   {"additionalProperties", false}};
      r = strict ? wrapped : json{{"anyOf", json::array({v, wrapped})}};
    } else {
      r = v;
    }
    if (!n.description.empty()) r["description"] = n.description;
    return r;
  }

  static void merge(SchemaNode& into, const SchemaNode& from) {
    if (into.description.empty()) into.description = from.description;
    into.types.insert(from.types.begin(), from.types.end());
    if (into.choices.empty()) into.choices = from.choices;
    if (!into.int_range) into.int_range = from.int_range;
    if (!into.number_range) into.number_range = from.number_range;
    if (!into.dimension) into.dimension = from.dimension;
    if (!into.range) into.range = from.range;
    if (into.model_kind.empty()) into.model_kind = from.model_kind;
    into.fact = into.fact || from.fact;
    into.name = into.name || from.name;
    into.closed = into.closed || from.closed;
    into.map = into.map || from.map;
    for (const auto& [k, v] : from.properties) merge(into.properties[k], v);
    if (from.items) {
      if (!into.items) into.items = std::make_unique<SchemaNode>();
      merge(*into.items, *from.items);
    }
  }
};

std::string text(const json& j) { return j.dump(2) + "\n"; }

}  // namespace

std::map<std::string, std::string> json_schemas(const SchemaRecorder& rec,
                                                const std::vector<std::pair<std::string, std::string>>& kinds,
                                                const std::function<std::vector<std::string>(const std::string&)>& names) {
  const std::string draft = "https://json-schema.org/draft/2020-12/schema";
  std::map<std::string, std::string> out;

  // Models: one definition per kind for catalog files (facts with sources, "kind" and "name"
  // required) and one for models written inline (bare values allowed, everything optional).
  Emitter in_models{names, ""};
  json defs = json::object(), all_of = json::array(), kind_names = json::array();
  for (const auto& [kind, description] : kinds) {
    kind_names.push_back(kind);
    const auto it = rec.roots().find(kind);
    SchemaNode n;
    if (it != rec.roots().end()) Emitter::merge(n, it->second);
    json strict = in_models.schema(n, true);
    strict["description"] = description;
    strict["required"] = json::array({"kind", "name"});
    json loose = in_models.schema(n, false);
    loose["description"] = description + ", defined inline: {\"extends\": \"<name>\", <keys to change>} or whole, with a \"name\"";
    if (loose.contains("properties")) loose["properties"]["extends"] = json{{"type", "string"}, {"description", "the catalog entry this one changes"}};
    defs[kind] = strict;
    defs[kind + "_inline"] = loose;
    all_of.push_back(json{{"if", {{"properties", {{"kind", {{"const", kind}}}}}, {"required", json::array({"kind"})}}},
                          {"then", {{"$ref", "#/$defs/" + kind}}}});
  }
  for (Dimension d : kDimensions)
    defs[quantity_def(d)] = json{{"type", "string"},
                                 {"pattern", unit_pattern(d)},
                                 {"x-ffsim-unit-kind", std::string(dimension_name(d))},
                                 {"description", a_dimension(d) + ": a number and one of " + join(dimension_units(d)) +
                                                     " (case-sensitive), e.g. \"" + std::string(dimension_example(d)) + "\""}};
  json model{{"$schema", draft},
             {"title", "ffsim catalog model"},
             {"description", "A file of ffsim's catalog (models/). Generated by `ffsim schema` from the readers' own key tables; "
                             "`ffsim check` is the validator (it also checks ranges, references and consistency)."},
             {"type", "object"},
             {"properties", {{"kind", {{"enum", kind_names}}}}},
             {"required", json::array({"kind"})},
             {"allOf", all_of},
             {"$defs", defs}};
  out["model.schema.json"] = text(model);

  Emitter in_scenarios{names, "model.schema.json"};
  SchemaNode sc;
  if (const auto it = rec.roots().find("scenario"); it != rec.roots().end()) Emitter::merge(sc, it->second);
  json scenario = in_scenarios.schema(sc, false);
  scenario["$schema"] = draft;
  scenario["title"] = "ffsim scenario";
  scenario["description"] =
      "A what-if scenario (scenarios/). Generated by `ffsim schema` from the readers' own key tables; `ffsim check` is the "
      "validator (it also checks ranges, references and consistency).";
  out["scenario.schema.json"] = text(scenario);
  return out;
}

}  // namespace ffsim::config
