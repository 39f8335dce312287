// Price books and the cost of a design.
// SPDX-License-Identifier: Apache-2.0
#include "plan/prices.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::plan {

namespace {

std::string dq(const std::string& s) { return "\"" + s + "\""; }

std::vector<std::string> names_of(const std::map<std::string, double>& m) {
  std::vector<std::string> r;
  for (const auto& [k, v] : m) r.push_back(k);
  return r;
}

const std::vector<std::string>& cable_kinds() {
  static const std::vector<std::string> k{"host_leaf", "inter_zone", "leaf_spine", "spine_core"};
  return k;
}

// A price whose source begins with "[fit]" was solved from a target (Table III's totals): the
// plan says so beside the costs it prices, which then match that target by construction.
double read_price(const config::Reader& obj, const std::string& key, const std::string& item,
                  std::vector<std::string>& fitted) {
  const config::Reader v = obj.fact(key);
  const double x = v.as_number();
  if (x < 0) v.fail("expected a non-negative price, got " + v.describe());
  if (x > 1e12) v.fail("expected a price of at most 1e12 (as a node's), got " + v.describe());
  if (const auto src = obj.source_of(key); src && src->rfind("[fit]", 0) == 0) fitted.push_back(item);
  return x;
}

// Reads {name: price, ...}; `valid`, when not empty, lists the names allowed (with did-you-mean).
std::map<std::string, double> read_prices(const config::Reader& r, const std::string& key, const std::string& what,
                                          const std::vector<std::string>& valid, std::vector<std::string>& fitted) {
  std::map<std::string, double> m;
  const auto section = r.optional_child(key);
  if (!section) return m;
  if (!section->is_object()) section->fail("expected an object of prices by " + what + " name, got " + section->describe());
  for (const auto& k : section->keys()) {
    if (!valid.empty() && std::find(valid.begin(), valid.end(), k) == valid.end())
      section->fail_at(k, "unknown " + what + " " + dq(k) + did_you_mean(k, valid) + "; valid: " + join(valid));
    m[k] = read_price(*section, k, key + " " + k, fitted);
  }
  section->finish();
  return m;
}

}  // namespace

PriceBook parse_price_book(const config::Reader& r, const std::string& name, const config::Catalog& cat) {
  if (!r.is_object()) r.fail("expected a price book object, got " + r.describe());
  PriceBook b;
  b.name = name;
  b.file = r.file();
  b.pointer = r.pointer();
  b.unit = r.string("unit");
  if (b.unit.empty()) r.fail_at("unit", "expected the unit of the prices (e.g. \"USD\"), got an empty string");
  b.nodes_from_catalog = r.boolean_or("nodes_from_catalog", false);
  b.nodes = read_prices(r, "nodes", "node model", cat.names(config::kNode), b.fitted);
  b.switches = read_prices(r, "switches", "switch model", cat.names(config::kSwitch), b.fitted);
  b.chassis = read_prices(r, "chassis", "chassis model", {}, b.fitted);
  for (const auto& [k, v] : b.chassis)
    if (!config::is_snake_case(k))
      r.child("chassis").fail_at(k, "expected a snake_case chassis name ([a-z][a-z0-9_]*), got " + dq(k));
  b.cables = read_prices(r, "cables", "cable kind", cable_kinds(), b.fitted);
  if (r.has("optic")) b.optic = read_price(r, "optic", "optic", b.fitted);
  return b;
}

PriceBook parse_price_book(const config::CatalogEntry& e, const config::Catalog& cat) {
  const config::Reader r = e.document.root();
  config::allow_entry_keys(r);
  PriceBook b = parse_price_book(r, e.name, cat);
  r.finish();
  return b;
}

namespace {
[[noreturn]] void missing(const PriceBook& b, const std::string& section, const std::string& what,
                          const std::string& item, const std::vector<std::string>& priced, const std::string& hint = "") {
  const std::string msg = " has no price for " + what + " " + dq(item) + did_you_mean(item, priced) +
                          "; priced: " + (priced.empty() ? "none" : join(priced)) + hint;
  if (!b.ref_file.empty()) throw ConfigError(b.ref_file, b.ref_pointer, "price book " + dq(b.name) + " (" + b.file + ")" + msg);
  throw ConfigError(b.file, b.pointer + "/" + section, "price book " + dq(b.name) + msg);
}
}  // namespace

double PriceBook::node_price(const hw::NodeSpec& n) const {
  if (auto it = nodes.find(n.name); it != nodes.end()) return it->second;
  if (nodes_from_catalog && n.price) return *n.price;
  missing(*this, "nodes", "node", n.name, names_of(nodes),
          nodes_from_catalog ? " (and the node model has no \"price\")"
                             : " (node models' own prices are Table III relative units; set \"nodes_from_catalog\" "
                               "only in a book of those units)");
}

double PriceBook::switch_price(const std::string& model) const {
  if (auto it = switches.find(model); it != switches.end()) return it->second;
  missing(*this, "switches", "switch", model, names_of(switches));
}

double PriceBook::chassis_price(const std::string& model) const {
  if (auto it = chassis.find(model); it != chassis.end()) return it->second;
  missing(*this, "chassis", "chassis", model, names_of(chassis));
}

double PriceBook::cable_price(const std::string& kind) const {
  if (auto it = cables.find(kind); it != cables.end()) return it->second;
  missing(*this, "cables", "cables of kind", kind, names_of(cables));
}

double PriceBook::optic_price() const {
  if (optic) return *optic;
  const std::string msg = " has no price for optics (add \"optic\": the price of one transceiver)";
  if (!ref_file.empty()) throw ConfigError(ref_file, ref_pointer, "price book " + dq(name) + " (" + file + ")" + msg);
  throw ConfigError(file, pointer, "price book " + dq(name) + msg);
}

CostBreakdown price_design(const PriceBook& book, const hw::ClusterSpec& cluster, const topo::FabricCounts& counts) {
  CostBreakdown c;
  c.unit = book.unit;
  c.price_book = book.name;
  c.fitted = book.fitted;
  for (const auto& [model, n] : counts.standalone_switches_by_model)
    if (n > 0) c.switches += n * book.switch_price(model);
  for (const auto& [model, n] : counts.chassis_by_model)
    if (n > 0) c.chassis += n * book.chassis_price(model);
  for (const auto& [kind, n] : counts.cables_by_kind)
    if (n > 0) c.cables += n * book.cable_price(kind);
  if (counts.optics > 0) c.optics = counts.optics * book.optic_price();
  c.gpu_node_price = book.node_price(cluster.node);
  c.gpu_nodes = cluster.nodes * c.gpu_node_price;
  if (cluster.storage && cluster.storage->count > 0)
    c.storage_nodes = cluster.storage->count * book.node_price(cluster.storage->node);
  return c;
}

}  // namespace ffsim::plan
