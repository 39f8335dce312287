// The kinds of catalog entries (models/*/*.json "kind") and how to check one: registered here,
// from every layer that defines a kind, for `ffsim check`, `ffsim models` and the catalog loader.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/catalog.hpp"
#include "core/registry.hpp"

namespace ffsim::app {

/// Validates one catalog entry of a kind (throws ConfigError at the entry's file and pointer).
using KindValidator = std::function<void(const config::CatalogEntry&, const config::Catalog&)>;
using KindRegistry = Registry<KindValidator>;

/// Registers every kind of catalog entry the layers define: gpu, cpu, nic, switch, node,
/// collective_library, calibration, nn_model, compute_model, price_book.
void register_kinds(KindRegistry& r);

/// The kind of a node model ("node").
[[nodiscard]] std::string node_kind();

/// The precisions a GPU model rates (fp32, tf32, fp16, ...), for options that name one.
[[nodiscard]] const std::vector<std::string>& precisions();

}  // namespace ffsim::app
