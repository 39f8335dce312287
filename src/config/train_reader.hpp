// JSON -> training parameters: "nn_model" and "compute_model" catalog entries, a scenario's
// "workload" section (train/workload.hpp), and the registry of workload kinds, each of which reads
// its own keys into its parameter struct (train/ddp.hpp, fsdp.hpp, pipeline.hpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/catalog.hpp"
#include "config/reader.hpp"
#include "core/registry.hpp"
#include "train/compute.hpp"
#include "train/nn_model.hpp"
#include "train/workload.hpp"

namespace ffsim::config {

/// Kinds of catalog entry this reader parses.
inline constexpr const char* kNnModel = "nn_model";
inline constexpr const char* kComputeModel = "compute_model";

[[nodiscard]] train::NnModelSpec parse_nn_model(const CatalogEntry& e);
/// Parses a "compute_model" catalog entry.
[[nodiscard]] train::ComputeModel parse_compute_model(const CatalogEntry& e);
/// Overrides from a scenario section {"gemm": 0.7, ...} (the keys of "efficiency").
void apply_efficiency_overrides(train::ComputeModel& m, const Reader& r);

/// Reads a kind's own keys of the "workload" section (the common keys are already read) into its
/// parameter struct, calls finish() on `r`, and builds the workload.
using WorkloadFactory = std::function<std::unique_ptr<train::Workload>(const Reader& r, const train::WorkloadSpec& common)>;
using WorkloadRegistry = Registry<WorkloadFactory>;
/// Every built-in workload kind (one registration line each, in train_reader.cpp).
[[nodiscard]] const WorkloadRegistry& workloads();

/// Parses a scenario's "workload" section, checking each GPU count against the cluster.
[[nodiscard]] train::WorkloadSpec parse_workload(const Reader& r, const Catalog& cat, const hw::ClusterSpec& c);

/// A string at `key` (a bare value or a {"value", "source"} fact) that must be one of `valid`;
/// `def` when the key is absent.
[[nodiscard]] std::string fact_choice(const Reader& r, std::string_view key, const std::vector<std::string>& valid,
                                      const std::string& def);

}  // namespace ffsim::config
