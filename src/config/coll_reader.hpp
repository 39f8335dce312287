// JSON -> collective library parameters (coll::LibraryParams) from the catalog's
// "collective_library" entries (models/libraries/*.json).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "coll/collective.hpp"
#include "config/catalog.hpp"

namespace ffsim::config {

/// Parses the "collective_library" catalog entries (models/libraries/*.json) named "nccl" and "hfreduce".
[[nodiscard]] coll::LibraryParams load_library_params(const Catalog& cat);
/// Validates one "collective_library" entry (for `ffsim check`).
void check_library_entry(const CatalogEntry& e);

}  // namespace ffsim::config
