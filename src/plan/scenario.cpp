// A what-if scenario parsed from JSON.
// SPDX-License-Identifier: Apache-2.0
#include "plan/scenario.hpp"

#include <algorithm>
#include <cmath>

#include "config/ops_reader.hpp"
#include "config/platform_reader.hpp"
#include "config/scenario_doc.hpp"
#include "config/topo_reader.hpp"
#include "config/train_reader.hpp"
#include "core/format.hpp"
#include "core/size_guard.hpp"

namespace ffsim::plan {

ScenarioSpec parse_scenario(const config::Document& doc, const config::Catalog& cat, bool check_fit) {
  config::Reader r = doc.root();
  if (!r.is_object()) r.fail("expected a scenario object, got " + r.describe());
  ScenarioSpec s;
  s.file = doc.file();
  s.name = r.name("name");
  s.description = r.string_or("description", "");
  r.allow({"extends"});
  s.cluster = config::parse_cluster(r.child("cluster", "the cluster's node model and size"), cat);
  const config::Reader fr = r.child("fabric", "the network design: topology, switch model, parameters");
  s.fabric = config::parse_fabric(fr, cat);
  for (const auto& note : topo::negotiate_link_rates(s.cluster, s.fabric.sw)) r.child("cluster").note(note);
  if (s.cluster.node.compute_nics() == 0) r.child("cluster").fail_at("node", "the GPU node has no compute NIC to attach to the fabric");
  if (auto pb = r.optional_child("price_book")) {
    if (pb->is_string()) {
      s.prices = parse_price_book(cat.resolve_ref(kPriceBook, *pb), cat);
      s.prices->ref_file = pb->file();
      s.prices->ref_pointer = pb->pointer();
    } else if (pb->is_object()) {
      s.prices = parse_price_book(*pb, s.name + " (inline)", cat);
      pb->finish();
    } else {
      pb->fail("expected the name of a price book in models/ or an inline price book object, got " + pb->describe());
    }
  }
  if (auto t = r.optional_child("traffic")) s.traffic = config::parse_traffic(*t);
  if (auto w = r.optional_child("workload")) s.workload = config::parse_workload(*w, cat, s.cluster);
  if (auto o = r.optional_child("ops"))
    s.ops = config::parse_ops(*o, s.cluster.nodes, static_cast<int>(s.cluster.node.gpus.size()));
  r.finish();
  if (!check_fit) return s;
  // The size guard: a cluster too large to build is refused before any node or link is allocated.
  try {
    check_platform_size(s.cluster, s.fabric, s.file);
  } catch (const ValueError&) {
    // The design cannot hold the cluster: building it below says why, in the design's own words.
  }
  // Building the fabric once checks that the cluster fits the design; pricing its counts checks the book.
  try {
    s.built_fabric = std::make_shared<const topo::Fabric>(s.fabric.design->build(topo::demand_of(s.cluster)));
    if (s.prices) (void)price_design(*s.prices, s.cluster, s.built_fabric->counts());
  } catch (const ValueError& e) {
    fr.fail(e.what());
  }
  return s;
}

namespace {

// Memory of the fabric and the machine per node, per part of the node model (GPUs, NICs, PCIe
// ports, sockets: the resources, the node's endpoint, host link and its share of the fabric grow
// with them). Measured 2026-12-02 (branch guard, Release, the 2-core VM) as the peak RSS of
//   /usr/bin/time -f %M build/ffsim collective tests/data/cli/huge_10m_gpus.json --algo hfreduce --gpus 16
// with "gpus" set to 1e5, 1e6 and 1e7 (fire_flyer_pcie: 8 GPUs, 1 NIC, 8 ports, 2 sockets: 19
// parts), before the guard: 72,700 KB, 336,152 KB and 11,964,736 KB (418 s). The growth is not
// linear (2.4 KB per node from 1e5 to 1e6 GPUs, 10.6 KB from 1e6 to 1e7: some part grows with the
// nodes times the leaves, not found yet); the slope at the top, where the guard decides, is taken:
// (11,964,736 - 336,152) KB x 1024 / 1,125,000 nodes / 19 parts = 557 B per part (10.6 KB per node).
constexpr double kBytesPerNodePart = 557;
// Per fabric link beyond the hosts' (leaf-spine, spine-core, inter-zone): the link, its two
// adjacency entries and the platform's two directed resources (sizeof; the same 2-core VM).
constexpr double kBytesPerLink = sizeof(topo::Link) + 2 * sizeof(int) + 2 * sizeof(platform::Resource);
// Per switch: the switch, its two adjacency lists, and the two reachability bitsets of the routes
// (one bit per leaf each, Fabric::finalize).
constexpr double kBytesPerSwitch = sizeof(topo::Switch) + 2 * sizeof(std::vector<int>);

double node_parts(const hw::NodeSpec& n) {
  return static_cast<double>(n.gpus.size() + n.nics.size() + n.ports.size() + n.sockets.size());
}

}  // namespace

PlatformSize platform_size(const hw::ClusterSpec& c, const topo::FabricSpec& f) {
  PlatformSize z;
  z.fabric = f.design->size_of(topo::demand_of(c));
  z.nodes = c.nodes + (c.storage ? c.storage->count : 0);
  double bytes = static_cast<double>(c.nodes) * node_parts(c.node) * kBytesPerNodePart;
  if (c.storage) bytes += static_cast<double>(c.storage->count) * node_parts(c.storage->node) * kBytesPerNodePart;
  bytes += static_cast<double>(std::max(0LL, z.fabric.links - z.fabric.endpoints)) * kBytesPerLink;
  const double words = std::ceil(static_cast<double>(z.fabric.leaves) / 64);
  bytes += static_cast<double>(z.fabric.switches) * (kBytesPerSwitch + 2 * words * sizeof(std::uint64_t));
  z.bytes = bytes;
  return z;
}

void check_platform_size(const hw::ClusterSpec& c, const topo::FabricSpec& f, const std::string& file) {
  const PlatformSize z = platform_size(c, f);
  if (z.bytes <= memory_limit()) return;
  refuse_oversized(file + ": a cluster of " + fmt_int(c.gpus()) + " GPUs (" + fmt_int(z.nodes) + " nodes)",
                   Footprint{0, z.bytes},
                   "its platform alone: " + fmt_int(z.fabric.switches) + " switches, " + fmt_int(z.fabric.links) +
                       " links and the resources of every node",
                   "describe fewer nodes, or raise --max-memory where the machine has the memory");
}

std::unique_ptr<platform::Platform> make_platform(const ScenarioSpec& s, platform::PlatformOptions opts) {
  auto fabric = s.built_fabric;
  if (!fabric) check_platform_size(s.cluster, s.fabric, s.file);
  if (!fabric) fabric = std::make_shared<const topo::Fabric>(s.fabric.design->build(topo::demand_of(s.cluster)));
  return std::make_unique<platform::Platform>(s.cluster, fabric, s.traffic, opts);
}

ScenarioSpec load_scenario(const std::string& path, const config::Catalog& cat, bool check_fit) {
  return parse_scenario(config::load_scenario(path), cat, check_fit);
}

}  // namespace ffsim::plan
