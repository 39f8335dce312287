// The catalog of models/ with every kind the ffsim command registers, for unit tests.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stdexcept>
#include <string>

#include "cli/context.hpp"
#include "config/catalog.hpp"
#include "config/train_reader.hpp"
#include "plan/scenario.hpp"
#include "train/nn_model.hpp"

namespace ffsim::testing {

inline const config::Catalog& catalog() {
  static const config::Catalog c = [] {
    cli::Context ctx;
    cli::register_kinds(ctx);
    return config::Catalog::load(FFSIM_MODELS_DIR, ctx.kind_names());
  }();
  return c;
}

/// The zoo's network `name` (a failed REQUIRE-free lookup throws: the caller's test fails).
inline train::NnModelSpec nn_model(const std::string& name) {
  const auto* e = catalog().find(config::kNnModel, name);
  if (e == nullptr) throw std::runtime_error("no nn_model " + name + " in models/");
  return config::parse_nn_model(*e);
}

/// A scenario of `nodes` GPU nodes of model `node` on a two-layer fat-tree of qm8700 switches.
inline plan::ScenarioSpec cluster(int nodes, const std::string& node = "fire_flyer_pcie") {
  const std::string text = R"({"name": "t", "cluster": {"node": ")" + node + R"(", "nodes": )" + std::to_string(nodes) +
                           R"(}, "fabric": {"topology": "two_layer", "switch": "qm8700"}})";
  return plan::parse_scenario(config::Document::parse(text, "t.json", false), catalog());
}

}  // namespace ffsim::testing
