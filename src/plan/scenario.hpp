// A what-if scenario: the cluster, its fabric and what runs on it, parsed from one JSON file.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include "config/catalog.hpp"
#include "config/hw_reader.hpp"
#include "config/reader.hpp"
#include "ops/params.hpp"
#include "plan/prices.hpp"
#include "platform/platform.hpp"
#include "platform/traffic.hpp"
#include "topo/topology.hpp"
#include "train/workload.hpp"

namespace ffsim::plan {

struct ScenarioSpec {
  std::string file;         ///< where it was read from
  std::string name;         ///< short name shown in reports
  std::string description;
  hw::ClusterSpec cluster;
  topo::FabricSpec fabric;
  std::shared_ptr<const topo::Fabric> built_fabric;  ///< the fabric for this cluster (built once)
  platform::TrafficConfig traffic;                   ///< "traffic" section (default: no isolation)
  /// "price_book": the name of a catalog price book, or an inline book; none: costs unknown.
  std::optional<PriceBook> prices;
  /// "workload": a training job for `ffsim train` (none: the scenario describes only the machine).
  std::optional<train::WorkloadSpec> workload;
  /// "ops": the job mix, failure processes, seed and horizon of `ffsim ops` (none: no operations model).
  std::optional<ops::OpsParams> ops;
};

/// What building a scenario's fabric and platform takes, from the cluster's size and the design's
/// parameters alone (topo::Topology::size_of): nothing is allocated.
struct PlatformSize {
  long long nodes = 0;  ///< GPU nodes and storage nodes
  topo::FabricSize fabric;
  double bytes = 0;  ///< the estimate of the fabric's and the platform's memory
};
[[nodiscard]] PlatformSize platform_size(const hw::ClusterSpec& cluster, const topo::FabricSpec& fabric);

/// Refuses (SimulationError, exit 4) a scenario whose platform_size exceeds memory_limit()
/// (core/size_guard.hpp), before its fabric or platform is built. `what`: the request's words.
void check_platform_size(const hw::ClusterSpec& cluster, const topo::FabricSpec& fabric, const std::string& file);

/// The simulated machine of a scenario.
[[nodiscard]] std::unique_ptr<platform::Platform> make_platform(const ScenarioSpec& s,
                                                                platform::PlatformOptions opts = {});

/// Parses a scenario document; every section is validated and unknown keys are rejected.
/// With `check_fit`, the fabric is built once to check that the cluster fits the design and
/// that the price book prices everything the design uses (ConfigErrors at /fabric or in the book).
[[nodiscard]] ScenarioSpec parse_scenario(const config::Document& doc, const config::Catalog& cat,
                                          bool check_fit = true);
/// Loads (with "extends") and parses a scenario file.
[[nodiscard]] ScenarioSpec load_scenario(const std::string& path, const config::Catalog& cat, bool check_fit = true);

}  // namespace ffsim::plan
