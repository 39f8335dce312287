// The capacity plan of one design, and comparisons.
// SPDX-License-Identifier: Apache-2.0
#include "plan/design.hpp"

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::plan {

namespace {
constexpr double kTera = 1e12;  // TFLOPS per FLOPS
constexpr double kKilo = 1e3;   // W per kW

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b == 0) return std::nullopt;
  return *a / *b;
}
std::optional<double> watts(std::optional<Watts> w) {
  if (!w) return std::nullopt;
  return w->si();
}
}  // namespace

std::optional<Watts> PowerBreakdown::total() const {
  if (!gpu_nodes || !storage_nodes) return std::nullopt;
  return *gpu_nodes + *storage_nodes + switches;
}

std::optional<double> DesignPlan::cost_performance() const {
  if (!cost || cost->total() <= 0) return std::nullopt;
  return performance().si() / kTera / cost->total();
}

std::optional<double> DesignPlan::node_cost_performance() const {
  if (!cost || cost->gpu_node_price <= 0) return std::nullopt;
  return node_performance().si() / kTera / cost->gpu_node_price;
}

std::optional<double> DesignPlan::energy_performance() const {
  const auto p = power.total();
  if (!p || p->si() <= 0) return std::nullopt;
  return performance().si() / kTera / (p->si() / kKilo);
}

std::optional<double> DesignPlan::node_energy_performance() const {
  if (!node_power || node_power->si() <= 0) return std::nullopt;
  return node_performance().si() / kTera / (node_power->si() / kKilo);
}

std::optional<Watts> DesignPlan::power_per_gpu() const {
  const auto p = power.total();
  if (!p || gpus == 0) return std::nullopt;
  return *p / static_cast<double>(gpus);
}

topo::Fabric build_fabric(const ScenarioSpec& s) { return s.fabric.design->build(topo::demand_of(s.cluster)); }

DesignPlan plan_design(const ScenarioSpec& s, const topo::Fabric& fabric, const PlanOptions& opt) {
  const hw::ClusterSpec& c = s.cluster;
  DesignPlan d;
  d.name = s.name;
  d.file = s.file;
  d.topology = s.fabric.topology;
  d.summary = s.fabric.design->summary();
  d.node_model = c.node.name;
  d.switch_model = s.fabric.sw.name;
  d.gpu_nodes = c.nodes;
  d.gpus_per_node = static_cast<int>(c.node.gpus.size());
  d.gpus = c.gpus();
  d.storage_nodes = c.storage ? c.storage->count : 0;
  d.counts = fabric.counts();
  if (s.prices) d.cost = price_design(*s.prices, c, d.counts);

  // Power: GPU nodes and storage nodes at their average power under load, every switch chip at its model's.
  d.node_power = c.node.power;
  if (c.node.power) d.power.gpu_nodes = *c.node.power * static_cast<double>(c.nodes);
  if (d.storage_nodes == 0) d.power.storage_nodes = Watts(0);
  else if (c.storage->node.power) d.power.storage_nodes = *c.storage->node.power * static_cast<double>(d.storage_nodes);
  d.power.switches = s.fabric.sw.power * static_cast<double>(d.counts.switches);

  // Delivered performance: the GPU model's GEMM rate (measured where published, else peak) x GPUs.
  FFSIM_ASSERT(!c.node.gpus.empty(), "plan_design: GPU node without GPUs");
  const hw::GpuSpec& g = c.node.gpus.front().gpu;
  d.gpu_model = g.name;
  d.precision = opt.precision;
  const auto it = g.compute.find(opt.precision);
  if (it == g.compute.end()) {
    std::vector<std::string> have;
    for (const auto& [p, r] : g.compute) have.push_back(p);
    throw ValueError("GPU model \"" + g.name + "\" has no " + opt.precision + " rate; " +
                     (have.empty() ? std::string("it has no compute rates at all (a device that only copies)") : "it has " + join(have)));
  }
  d.gemm_per_gpu = it->second.gemm();
  d.gemm_measured = it->second.gemm_measured.has_value();
  return d;
}

DesignPlan plan_design(const ScenarioSpec& s, const PlanOptions& opt) { return plan_design(s, build_fabric(s), opt); }

Relative compare(const DesignPlan& d, const DesignPlan& b) {
  Relative r;
  r.baseline = b.name;
  r.node_performance = d.node_performance().si() / b.node_performance().si();
  r.performance = d.performance().si() / b.performance().si();
  // Prices compare only within one unit (two price books in relative units, or in one currency).
  if (d.cost && b.cost && d.cost->unit == b.cost->unit) {
    r.node_price = ratio(d.cost->gpu_node_price, b.cost->gpu_node_price);
    r.cost = ratio(d.cost->total(), b.cost->total());
    r.node_cost_performance = ratio(d.node_cost_performance(), b.node_cost_performance());
    r.cost_performance = ratio(d.cost_performance(), b.cost_performance());
  }
  if (const auto p = ratio(watts(d.node_power), watts(b.node_power))) r.node_power_saving = 1.0 - *p;
  r.node_energy_performance = ratio(d.node_energy_performance(), b.node_energy_performance());
  r.power = ratio(watts(d.power.total()), watts(b.power.total()));
  r.energy_performance = ratio(d.energy_performance(), b.energy_performance());
  return r;
}

}  // namespace ffsim::plan
