// JSON -> hardware specs.
// SPDX-License-Identifier: Apache-2.0
#include "config/hw_reader.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"

namespace ffsim::config {

using namespace hw;

void allow_entry_keys(const Reader& r) { r.allow({"kind", "name", "description", "extends"}); }

namespace {

std::string dq(const std::string& s) { return "\"" + s + "\""; }

int int_fact(const Reader& r, std::string_view key, int min, int max) {
  return static_cast<int>(r.fact_integer(key, min, max));
}

// Rejects a repeated "name" among the elements of an array.
void check_unique(const std::vector<Reader>& items, const std::vector<std::string>& names, const std::string& what) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (!seen.insert(names[i]).second) items[i].fail_at("name", "duplicate " + what + " name " + dq(names[i]));
}

}  // namespace

GpuSpec parse_gpu(const CatalogEntry& e) {
  Reader r = e.document.root();
  allow_entry_keys(r);
  GpuSpec g;
  g.name = e.name;
  g.description = e.description;
  Reader ff = r.fact("form_factor");
  g.form_factor = ff.as_string();
  const std::vector<std::string> forms{"pcie", "sxm", "emulated"};
  if (std::find(forms.begin(), forms.end(), g.form_factor) == forms.end())
    ff.fail("expected one of " + join(forms) + "; got " + dq(g.form_factor) + did_you_mean(g.form_factor, forms));
  // An emulated device (host memory standing in for a GPU) has no compute, PCIe link or power of its own.
  const bool emulated = g.emulated();
  g.memory = r.fact_quantity<Bytes>("memory", false, &plausible::kMemory);
  g.memory_bandwidth = r.fact_quantity<BytesPerSecond>("memory_bandwidth");
  std::optional<Reader> comp = emulated ? r.optional_child("compute") : r.child("compute", "an object of rates by precision");
  if (comp) {
    for (const auto& p : precisions()) {
      auto c = comp->optional_child(p);
      if (!c) continue;
      ComputeRate rate;
      rate.peak = c->fact_quantity<FlopsPerSecond>("peak");
      rate.gemm_measured = c->optional_fact_quantity<FlopsPerSecond>("gemm_measured");
      if (rate.gemm_measured && *rate.gemm_measured > rate.peak)
        c->fail_at("gemm_measured", "measured GEMM rate exceeds the peak rate of the same precision");
      c->finish();
      g.compute[p] = rate;
    }
    comp->finish();
    if (g.compute.empty() && !emulated) comp->fail("expected at least one precision (" + join(precisions()) + ")");
  }
  if (!emulated || r.has("pcie_generation")) g.pcie_generation = int_fact(r, "pcie_generation", 1, 7);
  if (!emulated || r.has("pcie_lanes")) g.pcie_lanes = int_fact(r, "pcie_lanes", 1, 32);
  g.pcie_bandwidth = r.fact_quantity<BytesPerSecond>("pcie_bandwidth");
  g.nvlink_bandwidth = r.optional_fact_quantity<BytesPerSecond>("nvlink_bandwidth", true).value_or(BytesPerSecond(0));
  g.copy_engines = int_fact(r, "copy_engines", 1, 64);
  if (r.has("sms")) g.sms = int_fact(r, "sms", 1, 1024);
  g.tdp = emulated ? r.optional_fact_quantity<Watts>("tdp", true).value_or(Watts(0)) : r.fact_quantity<Watts>("tdp");
  r.finish();
  return g;
}

CpuSpec parse_cpu(const CatalogEntry& e) {
  Reader r = e.document.root();
  allow_entry_keys(r);
  CpuSpec c;
  c.name = e.name;
  c.description = e.description;
  c.cores = int_fact(r, "cores", 1, 4096);
  c.threads = int_fact(r, "threads", 1, 8192);
  if (c.threads < c.cores) r.fail_at("threads", "expected at least as many threads as cores (" + std::to_string(c.cores) + ")");
  c.base_clock = r.optional_fact_quantity<Hertz>("base_clock");
  const std::vector<std::string> simd{"scalar", "neon", "avx2", "avx512"};
  Reader s = r.fact("simd");
  c.simd = s.as_string();
  if (std::find(simd.begin(), simd.end(), c.simd) == simd.end())
    s.fail("expected one of " + join(simd) + "; got " + dq(c.simd) + did_you_mean(c.simd, simd));
  c.memory_channels = int_fact(r, "memory_channels", 1, 64);
  c.memory_bandwidth = r.fact_quantity<BytesPerSecond>("memory_bandwidth");
  c.pcie_lanes = int_fact(r, "pcie_lanes", 0, 1024);
  c.tdp = r.optional_fact_quantity<Watts>("tdp");
  c.reduce_bandwidth_per_core = r.optional_fact_quantity<BytesPerSecond>("reduce_bandwidth_per_core");
  c.last_level_cache = r.optional_fact_quantity<Bytes>("last_level_cache", false, &plausible::kCache);
  c.l1d_cache_per_core = r.optional_fact_quantity<Bytes>("l1d_cache_per_core", false, &plausible::kCache);
  c.l2_cache_per_core = r.optional_fact_quantity<Bytes>("l2_cache_per_core", false, &plausible::kCache);
  c.memcpy_streaming_threshold =
      r.optional_fact_quantity<Bytes>("memcpy_streaming_threshold", false, &plausible::kCache);
  r.finish();
  return c;
}

NicSpec parse_nic(const CatalogEntry& e) {
  Reader r = e.document.root();
  allow_entry_keys(r);
  NicSpec n;
  n.name = e.name;
  n.description = e.description;
  n.ports = int_fact(r, "ports", 1, 16);
  n.port_bandwidth = r.fact_quantity<BytesPerSecond>("port_bandwidth");
  n.effective_bandwidth = r.fact_quantity<BytesPerSecond>("effective_bandwidth");
  if (n.effective_bandwidth > n.port_bandwidth)
    r.fail_at("effective_bandwidth", "effective bandwidth exceeds the port's line rate");
  n.latency = r.fact_quantity<Seconds>("latency");
  // A software transport standing in for a NIC (ranks of one machine) has no PCIe link and draws
  // no power of its own: both may be left out or be 0.
  n.pcie_generation = r.has("pcie_generation") ? int_fact(r, "pcie_generation", 1, 7) : 0;
  n.pcie_lanes = r.has("pcie_lanes") ? int_fact(r, "pcie_lanes", 1, 32) : 0;
  n.power = r.fact_quantity<Watts>("power", true);
  r.finish();
  return n;
}

SwitchSpec parse_switch(const CatalogEntry& e) {
  Reader r = e.document.root();
  allow_entry_keys(r);
  SwitchSpec s;
  s.name = e.name;
  s.description = e.description;
  s.ports = int_fact(r, "ports", 1, 100000);
  s.port_bandwidth = r.fact_quantity<BytesPerSecond>("port_bandwidth");
  s.latency = r.fact_quantity<Seconds>("latency");
  s.power = r.fact_quantity<Watts>("power");
  // Prices live in price books (plan layer); the planner reads them from there.
  r.allow({"price"});
  r.finish();
  return s;
}

NodeSpec parse_node(const CatalogEntry& e, const Catalog& cat) {
  Reader r = e.document.root();
  allow_entry_keys(r);
  NodeSpec n;
  n.name = e.name;
  n.description = e.description;
  n.role = r.choice("role", {"gpu", "storage"});
  n.measured_machine = r.string_or("measured_machine", "");
  if (r.has("measured_cpu_model")) n.measured_cpu_model = r.fact_string("measured_cpu_model");

  // Sockets.
  std::vector<Reader> socks = r.child("sockets", "an array of sockets").elements("sockets");
  if (socks.empty()) r.fail_at("sockets", "expected at least one socket");
  std::vector<std::string> sock_names;
  for (const Reader& s : socks) {
    SocketSpec sp;
    sp.name = s.name("name");
    sp.cpu = parse_cpu(cat.model_ref(kCpu, s.child("cpu", "a cpu model name or an inline cpu model")));
    sp.memory = s.fact_quantity<Bytes>("memory", false, &plausible::kMemory);
    sp.dram_bandwidth = s.fact_quantity<BytesPerSecond>("dram_bandwidth");
    if (sp.dram_bandwidth > sp.cpu.memory_bandwidth)
      s.fail_at("dram_bandwidth", "practical DRAM bandwidth exceeds the CPU's theoretical memory bandwidth");
    s.finish();
    sock_names.push_back(sp.name);
    n.sockets.push_back(std::move(sp));
  }
  check_unique(socks, sock_names, "socket");
  if (n.sockets.size() > 1) {
    Reader link = r.child("socket_link", "an object with bandwidth and latency");
    n.socket_link_bandwidth = link.fact_quantity<BytesPerSecond>("bandwidth");
    n.socket_link_latency = link.fact_quantity<Seconds>("latency");
    link.finish();
  } else if (r.has("socket_link")) {
    r.fail_at("socket_link", "a node with one socket has no socket link");
  }

  // PCIe ports: defaults from "root_port", each port may override.
  std::optional<Reader> defaults = r.optional_child("root_port");
  std::optional<BytesPerSecond> def_bw, def_duplex, def_bidir;
  if (defaults) {
    def_bw = defaults->optional_fact_quantity<BytesPerSecond>("bandwidth");
    def_duplex = defaults->optional_fact_quantity<BytesPerSecond>("duplex_bandwidth");
    def_bidir = defaults->optional_fact_quantity<BytesPerSecond>("bidirectional_bandwidth");
    defaults->finish();
  }
  std::vector<Reader> ports = r.child("ports", "an array of PCIe ports").elements("ports");
  std::vector<std::string> port_names;
  std::map<std::string, int> slots;
  for (const Reader& p : ports) {
    PciePortSpec ps;
    ps.name = p.name("name");
    ps.kind = p.choice_or("kind", {"root_port", "switch"}, "root_port");
    Reader parent = p.child("parent", "a socket name (root port) or a port name (switch)");
    ps.parent = parent.as_string();
    if (ps.kind == "root_port" && !n.socket(ps.parent))
      parent.fail("unknown socket " + dq(ps.parent) + did_you_mean(ps.parent, sock_names) + "; valid: " +
                  join(sock_names));
    if (p.has("bandwidth")) ps.bandwidth = p.fact_quantity<BytesPerSecond>("bandwidth");
    else if (def_bw) ps.bandwidth = *def_bw;
    else p.fail("missing required key \"bandwidth\" (and the node has no \"root_port\" default)");
    ps.duplex_bandwidth = p.has("duplex_bandwidth") ? p.optional_fact_quantity<BytesPerSecond>("duplex_bandwidth")
                                                    : def_duplex;
    if (ps.duplex_bandwidth && *ps.duplex_bandwidth > 2.0 * ps.bandwidth)
      p.fail_at("duplex_bandwidth", "duplex bandwidth exceeds twice the per-direction bandwidth");
    ps.bidirectional_bandwidth = p.has("bidirectional_bandwidth")
                                     ? p.optional_fact_quantity<BytesPerSecond>("bidirectional_bandwidth")
                                     : def_bidir;
    if (ps.bidirectional_bandwidth && *ps.bidirectional_bandwidth > 2.0 * ps.bandwidth)
      p.fail_at("bidirectional_bandwidth", "expected at most twice the per-direction bandwidth (2 x " +
                                               fmt_bandwidth(ps.bandwidth) + "), got " +
                                               fmt_bandwidth(*ps.bidirectional_bandwidth) +
                                               " (both directions together, while both carry traffic)");
    slots[ps.name] = static_cast<int>(p.integer_or("slots", ps.kind == "switch" ? 64 : 1, 1, 64));
    p.finish();
    port_names.push_back(ps.name);
    n.ports.push_back(std::move(ps));
  }
  check_unique(ports, port_names, "port");
  // Switch parents must be ports; chains must end at a root port (no cycles).
  for (std::size_t i = 0; i < n.ports.size(); ++i) {
    const PciePortSpec& ps = n.ports[i];
    if (ps.kind != "switch") continue;
    if (!n.port(ps.parent))
      ports[i].fail_at("parent", "unknown port " + dq(ps.parent) + did_you_mean(ps.parent, port_names) +
                                     "; valid: " + join(port_names));
    std::set<std::string> seen{ps.name};
    const PciePortSpec* cur = n.port(ps.parent);
    while (cur && cur->kind == "switch") {
      if (!seen.insert(cur->name).second)
        ports[i].fail_at("parent", "circular PCIe switch chain through " + dq(cur->name));
      cur = n.port(cur->parent);
    }
  }

  // Devices on ports.
  std::map<std::string, std::vector<std::string>> attached;
  auto attach = [&](const Reader& dev, const std::string& name) {
    Reader pr = dev.child("port", "a PCIe port name");
    const std::string port = pr.as_string();
    if (!n.port(port))
      pr.fail("unknown port " + dq(port) + did_you_mean(port, port_names) + "; valid: " + join(port_names));
    attached[port].push_back(name);
    if (static_cast<int>(attached[port].size()) > slots[port])
      pr.fail("port " + dq(port) + " has " + std::to_string(slots[port]) + " slot" + (slots[port] == 1 ? "" : "s") +
              " but " + join(attached[port]) + " are attached (add a port, or set \"slots\" on the port)");
    return port;
  };
  std::vector<Reader> gpus = r.child("gpus", "an array of GPUs").elements("GPUs");
  std::vector<std::string> gpu_names;
  for (const Reader& g : gpus) {
    GpuSlot gs;
    gs.name = g.name("name");
    gs.gpu = parse_gpu(cat.model_ref(kGpu, g.child("model", "a gpu model name or an inline gpu model")));
    gs.port = attach(g, gs.name);
    g.finish();
    gpu_names.push_back(gs.name);
    n.gpus.push_back(std::move(gs));
  }
  check_unique(gpus, gpu_names, "GPU");
  if (n.role == "gpu" && n.gpus.empty()) r.fail_at("gpus", "a node with role \"gpu\" needs at least one GPU");
  std::vector<Reader> nics = r.child("nics", "an array of NICs").elements("NICs");
  std::vector<std::string> nic_names;
  for (const Reader& x : nics) {
    NicSlot ns;
    ns.name = x.name("name");
    ns.nic = parse_nic(cat.model_ref(kNic, x.child("model", "a nic model name or an inline nic model")));
    ns.role = x.choice_or("role", {"compute", "storage", "any"}, "any");
    ns.port = attach(x, ns.name);
    x.finish();
    nic_names.push_back(ns.name);
    n.nics.push_back(std::move(ns));
  }
  check_unique(nics, nic_names, "NIC");

  // NVLink.
  if (auto nv = r.optional_child("nvlink")) {
    n.nvlink.kind = nv->choice("kind", {"none", "pairs", "switch"});
    if (n.nvlink.kind != "none") n.nvlink.bandwidth = nv->fact_quantity<BytesPerSecond>("bandwidth");
    if (n.nvlink.kind == "pairs") {
      std::vector<bool> used(n.gpus.size(), false);
      for (const Reader& pr : nv->child("pairs", "an array of [i, j] GPU index pairs").elements("pairs")) {
        if (!pr.is_array() || pr.size() != 2)
          pr.fail("expected a pair of 2 GPU indices [i, j], got " +
                  (pr.is_array() ? "an array of " + std::to_string(pr.size()) : pr.describe()));
        const auto max = static_cast<std::int64_t>(n.gpus.size()) - 1;
        const int a = static_cast<int>(pr.at(0).as_integer(0, max));
        const int b = static_cast<int>(pr.at(1).as_integer(0, max));
        if (a == b) pr.fail("a GPU cannot be paired with itself");
        for (int x : {a, b}) {
          if (used[static_cast<std::size_t>(x)]) pr.fail("GPU " + std::to_string(x) + " is already in another NVLink pair");
          used[static_cast<std::size_t>(x)] = true;
        }
        n.nvlink.pairs.emplace_back(a, b);
      }
    }
    nv->finish();
  }

  if (!n.gpus.empty() && !n.nics.empty())
    n.gpu_nic_p2p_bandwidth = r.fact_quantity<BytesPerSecond>("gpu_nic_p2p_bandwidth");
  else if (r.has("gpu_nic_p2p_bandwidth"))  // a valid key, here without a use: say why, not "unknown key"
    r.fail_at("gpu_nic_p2p_bandwidth", std::string("the node has no ") + (n.gpus.empty() ? "GPUs" : "NICs") +
                                           ", so no GPU<->NIC peer-to-peer path: remove this fact" +
                                           (n.gpus.empty() ? "" : " or give the node a NIC"));
  if (n.gpus.size() > 1) n.gpu_gpu_p2p_bandwidth = r.fact_quantity<BytesPerSecond>("gpu_gpu_p2p_bandwidth");
  else if (r.has("gpu_gpu_p2p_bandwidth"))
    r.fail_at("gpu_gpu_p2p_bandwidth", "the node has " + std::to_string(n.gpus.size()) +
                                           " GPU(s), so no GPU<->GPU peer-to-peer path: remove this fact");
  n.pcie_latency = r.fact_quantity<Seconds>("pcie_latency");
  if (auto d = r.optional_child("drives")) {
    n.drives.count = int_fact(*d, "count", 0, 1024);
    n.drives.capacity = d->fact_quantity<Bytes>("capacity", false, &plausible::kMemory);
    n.drives.read_bandwidth = d->fact_quantity<BytesPerSecond>("read_bandwidth");
    n.drives.write_bandwidth = d->fact_quantity<BytesPerSecond>("write_bandwidth");
    d->finish();
  }
  if (r.has("price")) n.price = r.fact_number("price", 0, 1e12);
  n.power = r.optional_fact_quantity<Watts>("power");
  r.finish();
  return n;
}

NodeSpec node_ref(const Reader& r, std::string_view key, const Catalog& cat) {
  return parse_node(cat.model_ref(kNode, r.child(key, "a node model name or an inline node model")), cat);
}

SwitchSpec switch_ref(const Reader& r, std::string_view key, const Catalog& cat) {
  return parse_switch(cat.model_ref(kSwitch, r.child(key, "a switch model name or an inline switch model")));
}

ClusterSpec parse_cluster(const Reader& r, const Catalog& cat) {
  ClusterSpec c;
  Reader node_r = r.child("node", "a node model name");
  c.node = node_ref(r, "node", cat);
  if (c.node.role != "gpu") node_r.fail("node model \"" + c.node.name + "\" has role \"" + c.node.role + "\", expected \"gpu\"");
  const bool has_nodes = r.has("nodes"), has_gpus = r.has("gpus");
  if (has_nodes && has_gpus) r.fail("expected exactly one of \"nodes\" or \"gpus\", got both");
  if (!has_nodes && !has_gpus) {
    // A misspelt key is the likely cause: name it ("nodez" -> did you mean "nodes"?).
    for (const auto& k : r.keys())
      if (const auto near = k == "node" || k == "storage" ? std::nullopt : suggest(k, {"nodes", "gpus"}))
        r.fail("expected one of \"nodes\" or \"gpus\"; found unknown key \"" + k + "\" (did you mean \"" + *near + "\"?)");
    r.fail("expected one of \"nodes\" or \"gpus\" (the cluster's size), found neither");
  }
  const auto per_node = static_cast<std::int64_t>(c.node.gpus.size());
  if (has_nodes) {
    c.nodes = static_cast<int>(r.integer("nodes", 1, 10'000'000));
  } else {
    const std::int64_t g = r.integer("gpus", 1, 80'000'000);
    if (g % per_node != 0)
      r.fail_at("gpus", std::to_string(g) + " GPUs is not a multiple of the " + std::to_string(per_node) +
                            " GPUs per node of \"" + c.node.name + "\"");
    c.nodes = static_cast<int>(g / per_node);
  }
  if (auto s = r.optional_child("storage")) {
    StorageSpec st;
    Reader sn = s->child("node", "a storage node model name");
    st.node = node_ref(*s, "node", cat);
    if (st.node.role != "storage")
      sn.fail("node model \"" + st.node.name + "\" has role \"" + st.node.role + "\", expected \"storage\"");
    st.count = static_cast<int>(s->integer("count", 0, 1'000'000));
    s->finish();
    c.storage = std::move(st);
  }
  r.finish();
  return c;
}

}  // namespace ffsim::config
