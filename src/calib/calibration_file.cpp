// Calibration files: the overrides a fit writes (the reader, and applying a file to the catalog:
// config/calibration_reader.cpp).
// SPDX-License-Identifier: Apache-2.0
#include "calib/calibration_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/spell.hpp"

namespace ffsim::calib {

std::string unit_string(double si, bool bandwidth) {
  char buf[64];
  if (bandwidth) std::snprintf(buf, sizeof buf, "%.7gGB/s", si / 1e9);
  else std::snprintf(buf, sizeof buf, "%.7gus", si * 1e6);
  return buf;
}

std::pair<std::string, std::string> scope_of(Param p) {
  // Machine: each is a fact of the machine the points ran on. None of today's parameters is a cost
  // of the library alone (docs/calibration.md, "Scope: what transfers to other machines").
  switch (p) {
    case Param::DramBandwidth:
      return {"machine", "the DRAM rate of the measured socket (on a VM, its share of the host's)"};
    case Param::DeviceLink:
      return {"machine", "the rate of the measured machine's device copies (on the host backend: one copy thread's memcpy on "
                         "its cores)"};
    case Param::DeviceLatency:
      return {"machine", "the fixed time of a device copy on the measured machine (on the host backend: handing the copy to a "
                         "stream's thread, the operating system's scheduling on its cores)"};
    case Param::Duplex:
      return {"machine", "the measured machine's cap on both copy directions at once"};
    case Param::ReducePerCore:
      return {"machine", "the per-core sum rate of the measured CPU (its SIMD width, clock and caches)"};
    case Param::ChunkOverhead:
      return {"machine", "hfreduce's time per chunk as the measured machine runs it: where the copy threads, the reducer and "
                         "the ranks outnumber the cores (8-16 threads on 2 on the CI VMs) it is mostly the scheduler's hand-off "
                         "between threads, not the library's own code, and a node with a core per stream does not pay it"};
    case Param::NicBandwidth:
    case Param::NicLatency:
      return {"machine", "the measured transport between ranks (on the CI VMs: Open MPI's shared memory within one machine)"};
  }
  return {"machine", "a fact of the measured machine"};
}

std::vector<Override> node_overrides(const BenchModel& m, const Calibration& c, const std::string& file) {
  const hw::NodeSpec& n = m.node;
  const ParamSet v = node_params(c);
  // The fit a node value came from: the DRAM regime's, else the cache regime's, of the right group.
  auto source_fit = [&](Param p) -> const Fit* {
    // Values the memory model gives: its copies' fit (DRAM), the node group's reduce fit.
    if ((p == Param::DramBandwidth || (p == Param::DeviceLink && c.emulated_devices)) && c.memory.kinds.count("copy memcpy"))
      for (const Fit& f : c.fits)
        if (f.levels && f.stages == "copy") return &f;
    if (p == Param::ReducePerCore && c.memory.kinds.count("reduce " + c.node_reduce_group))
      for (const Fit& f : c.fits)
        if (f.levels && f.stages == "reduce" && (f.group == c.node_reduce_group || f.group.empty())) return &f;
    const std::string want_group = p == Param::ReducePerCore ? c.node_reduce_group
                                   : (p == Param::NicBandwidth || p == Param::NicLatency)
                                       ? std::to_string(c.node_ranks) + (c.node_ranks == 1 ? " rank" : " ranks")
                                       : "";
    for (Regime r : {Regime::Dram, Regime::Cache})
      for (const Fit& f : c.fits)
        if (f.regime == r && f.group == want_group)
          for (const FittedValue& fv : f.values)
            if (fv.applied && fv.name == param_name(p) && fv.value == at(v, p)) return &f;
    return nullptr;
  };
  auto status_of = [&](const Fit& f, Param p) {
    if (f.levels)
      return p == Param::DeviceLink ? std::string(
                                          "from the memory model: one copy thread's memcpy from DRAM, memcpy dram_rate "
                                          "/ 2 (payload: half its traffic)")
             : p == Param::DramBandwidth
                 ? std::string("from the memory model: DRAM as all ") + std::to_string(c.cores) +
                       " cores' memcpy reaches it, min(cores x memcpy dram_rate (with the thread gain), "
                       "dram_shared_bandwidth x 2/3: "
                       "its ordinary stores read each line first)"
                 : "from the memory model: one core's DRAM rate of " + c.node_reduce_group +
                       " x k / (k + 1), k = " + std::to_string(c.node_reduce_k) + " (traffic to input bytes)";
    for (const FittedValue& fv : f.values)
      if (fv.name == param_name(p)) return fv.status;
    return std::string();
  };
  std::vector<Override> out;
  auto add = [&](Param p, const std::string& kind, const std::string& name, const std::string& pointer) {
    const Fit* f = source_fit(p);
    if (!f || std::isnan(at(v, p))) return;
    std::vector<std::string> files;
    for (const FitPoint& pt : f->points)
      if (std::find(files.begin(), files.end(), pt.file) == files.end()) files.push_back(pt.file);
    char rms[32];
    std::snprintf(rms, sizeof rms, "%.1f%%", 100 * f->rms);
    const std::string status = status_of(*f, p);
    // The fit is named by its JSON pointer in this file too: its points list every measured point used.
    const std::string fit_ptr = "/fits/" + std::to_string(f - c.fits.data());
    const std::string source = file + " " + fit_ptr + ": " + f->name + (f->group.empty() ? "" : " (" + f->group + ")") + ", fitted to " +
                               std::to_string(f->points.size()) + " " + f->stages + (f->points.size() == 1 ? " point (" : " points (") +
                               (f->levels ? std::string("every memory level") : std::string(regime_name(f->regime)) + " regime") +
                               ") of " + join(files) + "; relative RMS residual " + rms +
                               (status == "fitted" ? "" : "; " + status);
    const auto [scope, why] = scope_of(p);
    out.push_back(Override{kind, name, pointer, unit_string(at(v, p), is_bandwidth(p)), source, param_name(p), scope, why, ""});
  };
  for (std::size_t i = 0; i < n.sockets.size(); ++i)
    add(Param::DramBandwidth, kOverrideNode, n.name, "/sockets/" + std::to_string(i) + "/dram_bandwidth");
  std::vector<std::string> done;
  auto once = [&](const std::string& key) {
    if (std::find(done.begin(), done.end(), key) != done.end()) return false;
    done.push_back(key);
    return true;
  };
  for (const auto& g : n.gpus)
    if (once("gpu " + g.gpu.name)) add(Param::DeviceLink, kOverrideGpu, g.gpu.name, "/pcie_bandwidth");
  if (!n.gpus.empty()) add(Param::DeviceLatency, kOverrideNode, n.name, "/pcie_latency");
  for (std::size_t i = 0; i < n.ports.size(); ++i)
    for (const auto& g : n.gpus)
      if (g.port == n.ports[i].name && once("port " + n.ports[i].name))
        add(Param::Duplex, kOverrideNode, n.name,
            "/ports/" + std::to_string(i) +
                (port_cap_is_bidirectional(n.ports[i]) ? "/bidirectional_bandwidth" : "/duplex_bandwidth"));
  for (const auto& s : n.sockets)
    if (once("cpu " + s.cpu.name)) add(Param::ReducePerCore, kOverrideCpu, s.cpu.name, "/reduce_bandwidth_per_core");
  add(Param::ChunkOverhead, kOverrideLibrary, "hfreduce", "/chunk_overhead");
  for (const auto& x : n.nics)
    if (once("nic " + x.nic.name)) {
      add(Param::NicBandwidth, kOverrideNic, x.nic.name, "/port_bandwidth");
      add(Param::NicBandwidth, kOverrideNic, x.nic.name, "/effective_bandwidth");
      add(Param::NicLatency, kOverrideNic, x.nic.name, "/latency");
    }
  return out;
}

}  // namespace ffsim::calib
