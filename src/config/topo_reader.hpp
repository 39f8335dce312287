// JSON -> fabric designs: a scenario's "fabric" section read into the generators' parameter
// structs (topo/*.hpp), and the registry of topology names.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>

#include "config/catalog.hpp"
#include "config/reader.hpp"
#include "core/registry.hpp"
#include "topo/topology.hpp"

namespace ffsim::config {

/// Reads a topology's own parameters from the "fabric" section (the keys "topology", "switch" and
/// "cable_latency" are read by parse_fabric), calls finish() on `params` and builds the design;
/// the design's ValueError is reported at `params`.
using TopologyFactory = std::function<std::unique_ptr<topo::Topology>(
    const Reader& params, const hw::SwitchSpec& sw, const topo::CableLatencies& cables)>;
using TopologyRegistry = Registry<TopologyFactory>;

/// The registry with every built-in topology (one registration line each, in topo_reader.cpp).
[[nodiscard]] const TopologyRegistry& topologies();

/// Parses {"topology": "<name>", "switch": "<model>", "cable_latency": {...}?, ...params}.
[[nodiscard]] topo::FabricSpec parse_fabric(const Reader& r, const Catalog& cat);

}  // namespace ffsim::config
