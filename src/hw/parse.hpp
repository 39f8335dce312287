// Parse functions for hardware specs from catalog entries and scenario sections.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include "config/catalog.hpp"
#include "config/reader.hpp"
#include "hw/specs.hpp"

namespace ffsim::hw {

/// Kinds of catalog entry this layer parses.
inline constexpr const char* kGpu = "gpu";
inline constexpr const char* kCpu = "cpu";
inline constexpr const char* kNic = "nic";
inline constexpr const char* kSwitch = "switch";
inline constexpr const char* kNode = "node";

/// Marks the keys every catalog entry may carry (kind, name, description, extends).
void allow_entry_keys(const config::Reader& r);

[[nodiscard]] GpuSpec parse_gpu(const config::CatalogEntry& e);
[[nodiscard]] CpuSpec parse_cpu(const config::CatalogEntry& e);
[[nodiscard]] NicSpec parse_nic(const config::CatalogEntry& e);
[[nodiscard]] SwitchSpec parse_switch(const config::CatalogEntry& e);
/// Parses a node and the GPU, CPU and NIC models it references (by name, through `cat`).
[[nodiscard]] NodeSpec parse_node(const config::CatalogEntry& e, const config::Catalog& cat);

/// Reads a string at `key` that names a catalog entry of `kind`, and parses it.
[[nodiscard]] NodeSpec node_ref(const config::Reader& r, std::string_view key, const config::Catalog& cat);
[[nodiscard]] SwitchSpec switch_ref(const config::Reader& r, std::string_view key, const config::Catalog& cat);

/// The machines of a scenario: GPU nodes and storage nodes.
struct StorageSpec {
  NodeSpec node;
  int count = 0;
};
struct ClusterSpec {
  NodeSpec node;                 ///< the GPU node
  int nodes = 0;                 ///< number of GPU nodes
  std::optional<StorageSpec> storage;
  [[nodiscard]] int gpus() const { return nodes * static_cast<int>(node.gpus.size()); }
};

/// Parses a scenario's "cluster" section:
/// {"node": "<node model>", "nodes": N | "gpus": G, "storage": {"node": "<model>", "count": K}}.
[[nodiscard]] ClusterSpec parse_cluster(const config::Reader& r, const config::Catalog& cat);

}  // namespace ffsim::hw
