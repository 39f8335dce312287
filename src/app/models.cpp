// The catalog as tables for people.
// SPDX-License-Identifier: Apache-2.0
#include "app/models.hpp"

#include <map>

#include "calib/calibration_file.hpp"
#include "config/calibration_reader.hpp"
#include "config/hw_reader.hpp"
#include "config/train_reader.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"
#include "plan/prices.hpp"
#include "train/compute.hpp"
#include "train/nn_model.hpp"

namespace ffsim::app {

namespace {

std::string gemm(const hw::GpuSpec& g, const std::string& p) {
  auto it = g.compute.find(p);
  return it == g.compute.end() ? "-" : fmt_flop_rate(it->second.gemm());
}

}  // namespace

std::vector<CatalogTable> catalog_tables(const config::Catalog& cat, const std::string& only) {
  auto want = [&](const char* k) { return only.empty() || only == k; };
  std::vector<CatalogTable> tables;
  auto add = [&](std::string title, std::vector<std::string> head) -> CatalogTable& {
    tables.push_back({std::move(title), std::move(head), {}});
    return tables.back();
  };
  if (want(config::kGpu)) {
    CatalogTable& t = add("GPUs", {"name", "form", "memory", "HBM", "TF32 GEMM", "FP16 GEMM", "host link", "NVLink", "TDP"});
    for (const auto* e : cat.of_kind(config::kGpu)) {
      const auto g = config::parse_gpu(*e);
      t.rows.push_back({g.name, g.form_factor, fmt_bytes_si(g.memory), fmt_bandwidth(g.memory_bandwidth), gemm(g, "tf32"),
             gemm(g, "fp16"),
             (g.emulated() ? "copy thread "
                           : "PCIe " + std::to_string(g.pcie_generation) + ".0 x" + std::to_string(g.pcie_lanes) + " ") +
                 fmt_bandwidth(g.pcie_bandwidth),
             g.nvlink_bandwidth.si() > 0 ? fmt_bandwidth(g.nvlink_bandwidth) : "-", fmt_power(g.tdp)});
    }
  }
  if (want(config::kCpu)) {
    CatalogTable& t = add("CPUs", {"name", "cores", "SIMD", "channels", "DRAM (theor.)", "PCIe lanes", "TDP"});
    for (const auto* e : cat.of_kind(config::kCpu)) {
      const auto c = config::parse_cpu(*e);
      t.rows.push_back({c.name, std::to_string(c.cores), c.simd, std::to_string(c.memory_channels),
             fmt_bandwidth(c.memory_bandwidth), std::to_string(c.pcie_lanes), c.tdp ? fmt_power(*c.tdp) : "-"});
    }
  }
  if (want(config::kNic)) {
    CatalogTable& t = add("NICs", {"name", "ports", "line rate", "effective", "latency", "power"});
    for (const auto* e : cat.of_kind(config::kNic)) {
      const auto n = config::parse_nic(*e);
      t.rows.push_back({n.name, std::to_string(n.ports), fmt_bandwidth(n.port_bandwidth), fmt_bandwidth(n.effective_bandwidth),
             fmt_time(n.latency), fmt_power(n.power)});
    }
  }
  if (want(config::kSwitch)) {
    CatalogTable& t = add("Switches", {"name", "ports", "port rate", "latency", "power"});
    for (const auto* e : cat.of_kind(config::kSwitch)) {
      const auto s = config::parse_switch(*e);
      t.rows.push_back({s.name, std::to_string(s.ports), fmt_bandwidth(s.port_bandwidth), fmt_time(s.latency), fmt_power(s.power)});
    }
  }
  if (want(config::kNode)) {
    CatalogTable& t = add("Nodes", {"name", "role", "sockets", "GPUs", "NICs", "PCIe ports", "NVLink", "DRAM BW", "price", "power"});
    for (const auto* e : cat.of_kind(config::kNode)) {
      const auto n = config::parse_node(*e, cat);
      BytesPerSecond dram(0);
      for (const auto& s : n.sockets) dram += s.dram_bandwidth;
      std::string gpus = n.gpus.empty() ? "-" : std::to_string(n.gpus.size()) + "x " + n.gpus[0].gpu.name;
      t.rows.push_back({n.name, n.role, std::to_string(n.sockets.size()) + "x " + n.sockets[0].cpu.name, gpus,
             std::to_string(n.nics.size()), std::to_string(n.ports.size()), n.nvlink.kind, fmt_bandwidth(dram),
             n.price ? fmt_g(*n.price, 4) : "-", n.power ? fmt_power(*n.power) : "-"});
    }
  }
  if (want(plan::kPriceBook)) {
    CatalogTable& t = add("Price books", {"name", "unit", "nodes", "switches", "chassis", "cables", "optic"});
    for (const auto* e : cat.of_kind(plan::kPriceBook)) {
      const auto b = plan::parse_price_book(*e, cat);
      auto items = [](const std::map<std::string, double>& m) {
        std::string r;
        for (const auto& [k, v] : m) r += (r.empty() ? "" : " ") + k + "=" + fmt_g(v, 4);
        return r.empty() ? std::string("-") : r;
      };
      t.rows.push_back({b.name, b.unit, b.nodes_from_catalog && b.nodes.empty() ? "node models' prices" : items(b.nodes),
             items(b.switches), items(b.chassis), items(b.cables), b.optic ? fmt_g(*b.optic, 4) : "-"});
    }
  }
  if (want(config::kNnModel)) {
    CatalogTable& t = add("Neural networks (parameters and FLOPs derived from the architecture; published counts for comparison)", {"name", "architecture", "layers", "parameters", "activated", "published", "fwd FLOPs/sample",
                     "sample"});
    for (const auto* e : cat.of_kind(config::kNnModel)) {
      const auto m = config::parse_nn_model(*e);
      const bool tf = m.architecture == "transformer";
      const int seq = tf ? m.transformer.max_sequence : 1;
      const auto l = train::layer_costs(m, seq, true);
      double active = 0;
      for (const auto& x : l) active += x.active_params;
      std::string what = tf ? std::to_string(m.transformer.layers) + " x " + std::to_string(m.transformer.hidden) : std::to_string(l.size());
      if (tf && m.transformer.moe)
        what += ", " + std::to_string(m.transformer.moe->routed_experts) + " experts top-" +
                std::to_string(m.transformer.moe->top_k);
      t.rows.push_back({m.name, m.architecture, what, fmt_g(train::total_params(l), 4), fmt_g(active, 4),
             m.published_parameters ? fmt_g(*m.published_parameters, 4) : "-", fmt_g(train::forward_flops(l), 4),
             tf ? std::to_string(seq) + " tokens" : "1 image"});
    }
  }
  if (want(config::kComputeModel)) {
    CatalogTable& t = add("Compute models (kernel efficiencies against the GPU's GEMM rate and memory bandwidth)", {"name", "GEMM", "conv", "attention", "memory", "backward x (GEMM, attention, memory)"});
    std::vector<std::pair<train::ComputeModel, std::string>> shaped;
    for (const auto* e : cat.of_kind(config::kComputeModel)) {
      auto c = config::parse_compute_model(*e);
      if (c.shaped) {  // its efficiencies are not used: listed with what it uses instead
        shaped.emplace_back(std::move(c), e->file);
        continue;
      }
      t.rows.push_back({c.name, fmt_g(c.gemm_efficiency, 3), fmt_g(c.conv_efficiency, 3), fmt_g(c.attention_efficiency, 3),
             fmt_g(c.memory_efficiency, 3),
             fmt_g(c.backward_gemm, 3) + ", " + fmt_g(c.backward_attention, 3) + ", " + fmt_g(c.backward_memory, 3)});
    }
    if (!shaped.empty()) {
      CatalogTable& st =
          add("Shaped compute models (ffsim calibrate --throughput: every product by its shape, times the "
              "fitted multipliers; only for their GPU models and precisions)",
              {"name", "GPU models", "precisions", "GEMM ceiling", "conv", "gemm", "memory", "file"});
      for (const auto& [c, file] : shaped) {
        std::set<std::string> fams;
        std::vector<std::string> precs, ceil;
        for (const auto& [ff, m] : c.shaped->gemm) {
          std::vector<std::string> mine;
          for (const auto& [f, g] : m) {
            fams.insert(f == "fp16" ? "fp16/bf16" : f);
            mine.push_back(f + " " + fmt_g(g.ceiling, 3));
          }
          ceil.push_back(ff + ": " + join(mine, ", "));
        }
        precs.assign(fams.begin(), fams.end());
        st.rows.push_back({c.name, join(c.shaped->gpus, " "), join(precs, " "), join(ceil, "; "),
                           fmt_g(c.shaped->multipliers.conv, 3), fmt_g(c.shaped->multipliers.linear, 3),
                           fmt_g(c.shaped->multipliers.memory, 3), file});
      }
    }
  }
  if (want(calib::kCalibration)) {
    CatalogTable& t = add("Calibrations (ffsim calibrate; apply one with --calibration FILE)", {"name", "node model", "measurement files", "facts overridden", "file"});
    for (const auto* e : cat.of_kind(calib::kCalibration)) {
      const auto c = config::parse_calibration(e->document);
      t.rows.push_back({c.name, c.node, std::to_string(c.measurements.size()), std::to_string(c.overrides.size()), e->file});
    }
  }
  return tables;
}

}  // namespace ffsim::app
