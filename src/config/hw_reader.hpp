// JSON -> hardware specs: catalog entries (gpu, cpu, nic, switch, node) and a scenario's "cluster"
// section. The specs themselves (hw/specs.hpp) know no JSON.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include "config/catalog.hpp"
#include "config/reader.hpp"
#include "hw/specs.hpp"

namespace ffsim::config {

/// Kinds of catalog entry this layer parses.
inline constexpr const char* kGpu = "gpu";
inline constexpr const char* kCpu = "cpu";
inline constexpr const char* kNic = "nic";
inline constexpr const char* kSwitch = "switch";
inline constexpr const char* kNode = "node";

/// Marks the keys every catalog entry may carry (kind, name, description, extends).
void allow_entry_keys(const Reader& r);

[[nodiscard]] hw::GpuSpec parse_gpu(const CatalogEntry& e);
[[nodiscard]] hw::CpuSpec parse_cpu(const CatalogEntry& e);
[[nodiscard]] hw::NicSpec parse_nic(const CatalogEntry& e);
[[nodiscard]] hw::SwitchSpec parse_switch(const CatalogEntry& e);
/// Parses a node and the GPU, CPU and NIC models it references (by name, through `cat`).
[[nodiscard]] hw::NodeSpec parse_node(const CatalogEntry& e, const Catalog& cat);

/// Reads a string at `key` that names a catalog entry of `kind`, and parses it.
[[nodiscard]] hw::NodeSpec node_ref(const Reader& r, std::string_view key, const Catalog& cat);
[[nodiscard]] hw::SwitchSpec switch_ref(const Reader& r, std::string_view key, const Catalog& cat);

/// Parses a scenario's "cluster" section:
/// {"node": "<node model>", "nodes": N | "gpus": G, "storage": {"node": "<model>", "count": K}}.
[[nodiscard]] hw::ClusterSpec parse_cluster(const Reader& r, const Catalog& cat);

}  // namespace ffsim::config
