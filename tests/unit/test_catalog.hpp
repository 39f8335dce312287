// The catalog of models/ with every kind the ffsim command registers, for unit tests.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "cli/context.hpp"
#include "config/catalog.hpp"
#include "plan/scenario.hpp"

namespace ffsim::testing {

inline const config::Catalog& catalog() {
  static const config::Catalog c = [] {
    cli::Context ctx;
    cli::register_kinds(ctx);
    return config::Catalog::load(FFSIM_MODELS_DIR, ctx.kind_names());
  }();
  return c;
}

/// A scenario of `nodes` GPU nodes of model `node` on a two-layer fat-tree of qm8700 switches.
inline plan::ScenarioSpec cluster(int nodes, const std::string& node = "fire_flyer_pcie") {
  const std::string text = R"({"name": "t", "cluster": {"node": ")" + node + R"(", "nodes": )" + std::to_string(nodes) +
                           R"(}, "fabric": {"topology": "two_layer", "switch": "qm8700"}})";
  return plan::parse_scenario(config::Document::parse(text, "t.json", false), catalog());
}

}  // namespace ffsim::testing
