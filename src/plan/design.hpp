// The capacity plan of one design: counts from its fabric generator, cost from its price book,
// power from the node and switch models, delivered performance from the GPU model; and the
// comparison of designs against a baseline.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "plan/prices.hpp"
#include "plan/scenario.hpp"
#include "topo/fabric.hpp"

namespace ffsim::plan {

struct PlanOptions {
  std::string precision = "tf32";  ///< the GEMM rate that measures delivered performance
};

/// Power drawn by the parts of a design; a part whose model has no power figure leaves the total unknown.
struct PowerBreakdown {
  std::optional<Watts> gpu_nodes;
  std::optional<Watts> storage_nodes;  ///< 0 without storage
  Watts switches;                      ///< every switch chip, in a chassis or not
  [[nodiscard]] std::optional<Watts> total() const;
};

struct DesignPlan {
  std::string name;
  std::string file;
  std::string topology;      ///< registry name
  std::string summary;       ///< the design's one-line summary
  std::string node_model;
  std::string gpu_model;
  std::string switch_model;
  int gpu_nodes = 0;
  int gpus_per_node = 0;
  int gpus = 0;
  int storage_nodes = 0;
  topo::FabricCounts counts;
  std::optional<CostBreakdown> cost;  ///< none without a price book
  PowerBreakdown power;
  std::optional<Watts> node_power;    ///< one GPU node
  std::string precision;
  FlopsPerSecond gemm_per_gpu;        ///< GEMM rate of one GPU at `precision`
  bool gemm_measured = false;         ///< a measured GEMM rate (else the datasheet peak)

  [[nodiscard]] FlopsPerSecond node_performance() const { return gemm_per_gpu * static_cast<double>(gpus_per_node); }
  [[nodiscard]] FlopsPerSecond performance() const { return gemm_per_gpu * static_cast<double>(gpus); }
  /// Performance per unit of total cost (TFLOPS per price unit).
  [[nodiscard]] std::optional<double> cost_performance() const;
  /// One GPU node's performance per unit of its price (TFLOPS per price unit).
  [[nodiscard]] std::optional<double> node_cost_performance() const;
  /// Performance per kilowatt of the whole design (TFLOPS per kW).
  [[nodiscard]] std::optional<double> energy_performance() const;
  /// One GPU node's performance per kilowatt (TFLOPS per kW).
  [[nodiscard]] std::optional<double> node_energy_performance() const;
  [[nodiscard]] std::optional<Watts> power_per_gpu() const;
};

/// Builds the scenario's fabric; throws ValueError naming the limit when the cluster does not fit.
[[nodiscard]] topo::Fabric build_fabric(const ScenarioSpec& s);

/// The plan of a scenario whose fabric is `fabric`. Throws ValueError if the GPU model has no
/// rate at the requested precision, ConfigError if the price book lacks a price the design needs.
[[nodiscard]] DesignPlan plan_design(const ScenarioSpec& s, const topo::Fabric& fabric, const PlanOptions& opt = {});
/// Builds the fabric and plans it.
[[nodiscard]] DesignPlan plan_design(const ScenarioSpec& s, const PlanOptions& opt = {});

/// A design against a baseline design: ratios (design / baseline) and savings (1 - ratio).
/// A figure is absent where either side lacks its input (a price, a power).
struct Relative {
  std::string baseline;
  double node_performance = 0;                   ///< GEMM of one node / the baseline node's
  std::optional<double> node_price;              ///< node price / the baseline node's
  std::optional<double> node_cost_performance;   ///< the paper's 1.38: performance ratio / price ratio
  std::optional<double> node_power_saving;       ///< 1 - node power / the baseline node's
  std::optional<double> node_energy_performance; ///< (performance per W) / the baseline's
  double performance = 0;                        ///< whole design
  std::optional<double> cost;
  std::optional<double> cost_performance;
  std::optional<double> power;
  std::optional<double> energy_performance;
};

[[nodiscard]] Relative compare(const DesignPlan& d, const DesignPlan& baseline);

}  // namespace ffsim::plan
