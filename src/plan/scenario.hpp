// A what-if scenario: the cluster, its fabric and what runs on it, parsed from one JSON file.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "config/catalog.hpp"
#include "config/reader.hpp"
#include "hw/parse.hpp"
#include "platform/platform.hpp"
#include "platform/traffic.hpp"
#include "topo/topology.hpp"

namespace ffsim::plan {

struct ScenarioSpec {
  std::string file;         ///< where it was read from
  std::string name;         ///< short name shown in reports
  std::string description;
  hw::ClusterSpec cluster;
  topo::FabricSpec fabric;
  std::shared_ptr<const topo::Fabric> built_fabric;  ///< the fabric for this cluster (built once)
  platform::TrafficConfig traffic;                   ///< "traffic" section (default: no isolation)
};

/// The simulated machine of a scenario.
[[nodiscard]] std::unique_ptr<platform::Platform> make_platform(const ScenarioSpec& s,
                                                                platform::PlatformOptions opts = {});

/// Parses a scenario document; every section is validated and unknown keys are rejected.
[[nodiscard]] ScenarioSpec parse_scenario(const config::Document& doc, const config::Catalog& cat);
/// Loads (with "extends") and parses a scenario file.
[[nodiscard]] ScenarioSpec load_scenario(const std::string& path, const config::Catalog& cat);

}  // namespace ffsim::plan
