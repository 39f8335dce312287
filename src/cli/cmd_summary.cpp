// `ffsim summary <scenario>`: the main job: what ffsim knows and predicts about a scenario.
// SPDX-License-Identifier: Apache-2.0
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/context.hpp"
#include "core/format.hpp"
#include "plan/scenario.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

namespace {

int run_summary(Context& ctx, const std::string& file) {
  const plan::ScenarioSpec s = plan::load_scenario(file, ctx.catalog());
  const hw::ClusterSpec& c = s.cluster;
  const hw::NodeSpec& n = c.node;
  std::cout << "Scenario " << s.name << " (" << s.file << ")\n";
  if (!s.description.empty()) std::cout << "  " << s.description << "\n";
  std::cout << "\nCluster\n";
  report::Table t({"item", "value"});
  t.add({"GPU nodes", fmt_int(c.nodes) + " x " + n.name});
  t.add({"GPUs", fmt_int(c.gpus()) + " x " + n.gpus.front().gpu.name});
  const auto& g = n.gpus.front().gpu;
  for (const char* p : {"tf32", "fp16"}) {
    auto it = g.compute.find(p);
    if (it == g.compute.end()) continue;
    t.add({std::string("GEMM ") + p + " (cluster)", fmt_flop_rate(it->second.gemm() * static_cast<double>(c.gpus()))});
  }
  BytesPerSecond dram(0);
  for (const auto& sk : n.sockets) dram += sk.dram_bandwidth;
  t.add({"host DRAM bandwidth per node", fmt_bandwidth(dram)});
  t.add({"compute NICs per node", std::to_string(n.compute_nics()) + " x " +
                                      (n.nics.empty() ? std::string("-") : n.nics.front().nic.name)});
  if (c.storage) t.add({"storage nodes", fmt_int(c.storage->count) + " x " + c.storage->node.name});
  if (n.power) t.add({"GPU node power (total)", fmt_power(*n.power * static_cast<double>(c.nodes))});
  if (n.price) t.add({"GPU node price (total, relative units)", fmt_int(static_cast<long long>(*n.price * c.nodes + 0.5))});
  t.print(std::cout, "  ");
  return kOk;
}

}  // namespace

void setup_summary(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("summary", "The main job: a scenario's cluster and what ffsim predicts for it");
  auto file = std::make_shared<std::string>();
  sub->add_option("scenario", *file, "Scenario JSON file")->required()->check(CLI::ExistingFile);
  sub->callback([&ctx, file] { ctx.action = [&ctx, file] { return run_summary(ctx, *file); }; });
}

}  // namespace ffsim::cli
