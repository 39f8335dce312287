// `ffsim models`: the catalog as tables for people, one per kind, with each entry's key facts.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "config/catalog.hpp"

namespace ffsim::app {

struct CatalogTable {
  std::string title;                           ///< "GPUs", "Nodes", ...
  std::vector<std::string> head;               ///< column names
  std::vector<std::vector<std::string>> rows;  ///< one per entry, formatted
};

/// A table per kind of `cat` (only `only` when not empty), in the order `ffsim models` prints them;
/// a kind asked for has its table even without entries.
[[nodiscard]] std::vector<CatalogTable> catalog_tables(const config::Catalog& cat, const std::string& only);

}  // namespace ffsim::app
