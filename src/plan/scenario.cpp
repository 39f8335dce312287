// A what-if scenario parsed from JSON.
// SPDX-License-Identifier: Apache-2.0
#include "plan/scenario.hpp"

#include "config/ops_reader.hpp"
#include "config/platform_reader.hpp"
#include "config/scenario_doc.hpp"
#include "config/topo_reader.hpp"
#include "config/train_reader.hpp"

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
  // Building the fabric once checks that the cluster fits the design; pricing its counts checks the book.
  try {
    s.built_fabric = std::make_shared<const topo::Fabric>(s.fabric.design->build(topo::demand_of(s.cluster)));
    if (s.prices) (void)price_design(*s.prices, s.cluster, s.built_fabric->counts());
  } catch (const ValueError& e) {
    fr.fail(e.what());
  }
  return s;
}

std::unique_ptr<platform::Platform> make_platform(const ScenarioSpec& s, platform::PlatformOptions opts) {
  auto fabric = s.built_fabric;
  if (!fabric) fabric = std::make_shared<const topo::Fabric>(s.fabric.design->build(topo::demand_of(s.cluster)));
  return std::make_unique<platform::Platform>(s.cluster, fabric, s.traffic, opts);
}

ScenarioSpec load_scenario(const std::string& path, const config::Catalog& cat, bool check_fit) {
  return parse_scenario(config::load_scenario(path), cat, check_fit);
}

}  // namespace ffsim::plan
