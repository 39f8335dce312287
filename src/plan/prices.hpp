// Price books: per-unit prices of nodes, switches, director chassis, cables and optics, and the
// cost of a design as those prices times the counts its fabric generator yields.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/catalog.hpp"
#include "config/reader.hpp"
#include "config/hw_reader.hpp"
#include "topo/fabric.hpp"

namespace ffsim::plan {

/// Kind of the catalog entries that hold price books (models/prices/*.json).
inline constexpr const char* kPriceBook = "price_book";

/// Per-unit prices in one unit (relative units of arXiv 2408.14158 Table III, or a currency).
/// Every price is >= 0. A price that a design needs but the book lacks is a ConfigError that
/// names the book's file and the JSON pointer of the missing section.
struct PriceBook {
  std::string name;
  std::string unit;     ///< "relative (Table III)", "USD", ...
  std::string file;     ///< where the book was read, for messages
  std::string pointer;  ///< JSON pointer of the book in `file` ("" for a catalog file)
  /// Where a scenario names this catalog book ("price_book": "<name>"): a missing price is reported
  /// there, since either the book lacks it or the scenario misspells an item. Empty for inline books.
  std::string ref_file;
  std::string ref_pointer;
  /// Nodes missing from `nodes` take the node model's own "price" fact (which is in Table III's
  /// relative units), so only a book in those units should set this.
  bool nodes_from_catalog = false;
  std::map<std::string, double> nodes;     ///< by node model
  std::map<std::string, double> switches;  ///< by switch model, for switches outside a chassis
  std::map<std::string, double> chassis;   ///< by chassis model: the frame with its switch chips and backplane
  std::map<std::string, double> cables;    ///< by link kind name (host_leaf, leaf_spine, spine_core, inter_zone)
  std::optional<double> optic;             ///< one transceiver
  /// Prices whose source is "[fit]" (solved from a target such as Table III's totals), as
  /// "switches qm8700", "cables host_leaf", "optic": the costs they price match it by construction.
  std::vector<std::string> fitted;

  [[nodiscard]] double node_price(const hw::NodeSpec& n) const;
  [[nodiscard]] double switch_price(const std::string& model) const;
  [[nodiscard]] double chassis_price(const std::string& model) const;
  [[nodiscard]] double cable_price(const std::string& kind) const;
  [[nodiscard]] double optic_price() const;
};

/// Parses a price book object: {"unit": "...", "nodes_from_catalog": bool?, "nodes": {name: price},
/// "switches": {...}, "chassis": {...}, "cables": {kind: price}, "optic": price?}. Prices are facts
/// (with a source in models/). Node and switch names must exist in `cat`; cable kinds must be link kinds.
[[nodiscard]] PriceBook parse_price_book(const config::Reader& r, const std::string& name, const config::Catalog& cat);
/// Parses a catalog entry of kind "price_book".
[[nodiscard]] PriceBook parse_price_book(const config::CatalogEntry& e, const config::Catalog& cat);

/// What a design costs, item by item, in the book's unit.
struct CostBreakdown {
  std::string unit;
  std::string price_book;
  double switches = 0;       ///< switches outside a chassis
  double chassis = 0;        ///< director chassis (their switch chips and backplane included)
  double cables = 0;
  double optics = 0;
  double gpu_nodes = 0;
  double storage_nodes = 0;
  double gpu_node_price = 0;  ///< one GPU node
  std::vector<std::string> fitted;  ///< PriceBook::fitted
  [[nodiscard]] double network() const { return switches + chassis + cables + optics; }
  [[nodiscard]] double servers() const { return gpu_nodes + storage_nodes; }
  [[nodiscard]] double total() const { return network() + servers(); }
};

/// Prices a cluster and the counts of its fabric: each item's count times its per-unit price.
[[nodiscard]] CostBreakdown price_design(const PriceBook& book, const hw::ClusterSpec& cluster,
                                         const topo::FabricCounts& counts);

}  // namespace ffsim::plan
