// `ffsim summary <scenario>`: the main job: what ffsim knows and predicts about a scenario: the
// cluster, its plan against the alternative design, HFReduce against NCCL, and (when the scenario has
// a workload) a training step.
// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <filesystem>
#include <optional>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/context.hpp"
#include "coll/collective.hpp"
#include "config/reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "plan/design.hpp"
#include "plan/scenario.hpp"
#include "report/table.hpp"
#include "train/collectives.hpp"
#include "train/run.hpp"

namespace ffsim::cli {

namespace {

struct SummaryArgs {
  std::string scenario;
  std::string against;
  std::string workload;
};

// --against and --workload name scenarios; a catalog model (it has "kind") is a usage error, not
// a bad scenario (the file is a valid model of another kind).
void check_is_scenario(const std::string& file, const std::string& option) {
  const config::Document d = config::Document::load(file, false);
  const config::Reader r = d.root();
  if (r.is_object() && r.has("kind") && r.child("kind").is_string())
    throw UsageError(option + ": " + file + " is a catalog model (kind \"" + r.child("kind").as_string() +
                     "\"), not a scenario; name a scenario file (scenarios/*.json)");
}

void cluster_section(const plan::ScenarioSpec& s) {
  const hw::ClusterSpec& c = s.cluster;
  const hw::NodeSpec& n = c.node;
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
  t.print(std::cout, "  ");
  // The fabric's description is a sentence: on its own line (in the table it would set the width
  // of a right-aligned value column).
  std::cout << "  fabric: " << s.fabric.design->summary() << "\n";
}

using Plans = std::pair<plan::DesignPlan, plan::DesignPlan>;  // (the scenario's, the alternative's)

std::optional<Plans> plan_section(const plan::ScenarioSpec& s, const plan::ScenarioSpec& alt) {
  plan::DesignPlan a, b;
  try {
    a = plan::plan_design(s);
    b = plan::plan_design(alt);
  } catch (const ValueError& e) {  // a design the planner cannot rate (a device without compute)
    std::cout << "\nCapacity plan against " << alt.name << ": not rated (" << e.what() << ")\n";
    return std::nullopt;
  }
  const plan::Relative r = plan::compare(a, b);
  std::cout << "\nCapacity plan against " << b.name << " (ffsim plan for every row)\n";
  report::Table t({"", a.name, b.name});
  auto money = [](const std::optional<plan::CostBreakdown>& c, double (plan::CostBreakdown::*m)() const) {
    return c ? fmt_int(static_cast<long long>(std::llround(((*c).*m)()))) + " " + c->unit : std::string("-");
  };
  t.add({"GPUs", fmt_int(a.gpus), fmt_int(b.gpus)});
  t.add({"switches", fmt_int(a.counts.switches), fmt_int(b.counts.switches)});
  t.add({"cables", fmt_int(a.counts.cables), fmt_int(b.counts.cables)});
  t.add({"network cost", money(a.cost, &plan::CostBreakdown::network), money(b.cost, &plan::CostBreakdown::network)});
  t.add({"server cost", money(a.cost, &plan::CostBreakdown::servers), money(b.cost, &plan::CostBreakdown::servers)});
  t.add({"total cost", money(a.cost, &plan::CostBreakdown::total), money(b.cost, &plan::CostBreakdown::total)});
  const auto pa = a.power.total(), pb = b.power.total();
  t.add({"power", pa ? fmt_power(*pa) : "-", pb ? fmt_power(*pb) : "-"});
  t.add({"performance (" + a.precision + " GEMM)", fmt_flop_rate(a.performance()), fmt_flop_rate(b.performance())});
  t.add({"node performance vs " + b.name, fmt_f(100 * r.node_performance, 1) + "%", "100.0%"});
  if (r.node_price) t.add({"node price vs " + b.name, fmt_f(100 * *r.node_price, 1) + "%", "100.0%"});
  if (r.node_cost_performance) t.add({"node cost-performance", fmt_f(*r.node_cost_performance, 2), "1.00"});
  if (r.node_power_saving) t.add({"node power saving", fmt_f(100 * *r.node_power_saving, 1) + "%", "0.0%"});
  t.print(std::cout, "  ");
  return Plans{std::move(a), std::move(b)};
}

// The training comparison per unit of each cluster's total cost and power (the plan's totals per
// GPU, storage and fabric included): `per_gpu` = the scenario's samples/s per GPU / the
// alternative's. Empty when the plan has no prices or powers to divide by.
std::string per_cost_line(const Plans& pl, double per_gpu) {
  const auto& [a, b] = pl;
  std::string out;
  if (a.cost && b.cost && a.cost->unit == b.cost->unit && a.cost->total() > 0 && b.cost->total() > 0) {
    const double ca = a.cost->total() / a.gpus, cb = b.cost->total() / b.gpus;
    auto price = [](double v) { return v >= 1000 ? fmt_int(std::llround(v)) : fmt_g(v, 3); };
    out += "  per unit of total cost (" + price(ca) + " against " + price(cb) + " " + a.cost->unit +
           " per GPU in the plan): " + fmt_f(per_gpu * cb / ca, 2) + "x the samples/s of " + b.name + "\n";
  }
  const auto pa = a.power.total(), pb = b.power.total();
  if (pa && pb && pa->si() > 0 && pb->si() > 0) {
    const double wa = pa->si() / a.gpus, wb = pb->si() / b.gpus;
    out += "  per watt (" + fmt_power(Watts(wa)) + " against " + fmt_power(Watts(wb)) +
           " per GPU in the plan): " + fmt_f(per_gpu * wb / wa, 2) + "x the samples/s of " + b.name + "\n";
  }
  return out;
}

void collective_section(Context& ctx, const plan::ScenarioSpec& s) {
  const auto p = plan::make_platform(s);
  const coll::LibraryParams lib = coll::load_library_params(ctx.catalog());
  const double S = 184.0 * 1048576;
  std::cout << "\nAllreduce of 184 MiB per GPU, closed-form model (ffsim collective --engine fluid|simgrid to simulate)\n";
  report::Table t({"GPUs", "hfreduce algbw", "nccl algbw", "hfreduce / nccl", "hfreduce host mem/node", "hfreduce bound by"});
  const auto hf = coll::algorithms().get("hfreduce").factory();
  const auto nc = coll::algorithms().get("nccl").factory();
  int largest = 0;
  double hf_largest = 0;
  for (int n : {16, 128, 1440}) {
    if (n > s.cluster.gpus()) continue;
    const coll::Group g = coll::Group::first_gpus(*p, n);
    const auto eh = hf->estimate(*p, lib, g, S), en = nc->estimate(*p, lib, g, S);
    t.add({std::to_string(n), fmt_bandwidth(BytesPerSecond(S / eh.time)), fmt_bandwidth(BytesPerSecond(S / en.time)),
           fmt_f(en.time / eh.time, 2) + "x", fmt_f(eh.host_traffic_per_byte, 1) + " S", eh.bottleneck});
    largest = n;
    hf_largest = eh.time;
  }
  t.print(std::cout, "  ");
  std::cout << "  host mem/node: bytes read + written in each node's host memory per allreduce, in multiples of\n"
               "  the vector size S (the paper counts 24 S for HFReduce with GDRCopy; 2 nodes need less)\n";
  // The nccl column rests on one assumption that matters at scale: a fixed tree chunk (the
  // shipped 4 MiB, [I]) where NCCL's own source moves 512 KiB steps. Show what NCCL's own rule
  // gives, so that the comparison's dependence on it is in the output and not only in the README.
  if (lib.nccl.tree_chunk_bytes > 0 && largest > 0) {
    coll::LibraryParams own = lib;
    own.nccl.tree_chunk_bytes = 0;  // coll::nccl_tree_chunk: NCCL's step, halved for small messages
    const coll::Group g = coll::Group::first_gpus(*p, largest);
    const auto en = nc->estimate(*p, own, g, S);
    const auto shipped = nc->estimate(*p, lib, g, S);
    // Said only where it changes the figure (NCCL picks the ring, or the chunks are equal, elsewhere).
    if (std::abs(en.time - shipped.time) > 1e-3 * shipped.time) {
      std::cout << "  nccl (here and in the training rows below) assumes a " << fmt_bytes(Bytes(lib.nccl.tree_chunk_bytes))
                << " tree chunk ([I]: models/libraries/nccl.json tree_chunk; README, \"NCCL's tree chunk\");\n"
                << "  NCCL's own rule (" << fmt_bytes(Bytes(lib.nccl.step_size))
                << " steps, \"tree_chunk\": \"nccl\") gives " << fmt_bandwidth(BytesPerSecond(S / en.time)) << " at "
                << largest << " GPUs, hfreduce / nccl " << fmt_f(en.time / hf_largest, 2) << "x\n";
    }
  }
}

// The job of the training step: the --workload scenario's, the scenario's own, or for a scenario
// without one the workload of train-vgg16-ddp.json beside it. Read before anything is printed (a
// bad file fails with nothing on stdout); `missing` says why there is none.
struct Job {
  std::optional<train::WorkloadSpec> workload;
  std::string from;
  std::string missing;
};

Job resolve_job(Context& ctx, const SummaryArgs& a, const plan::ScenarioSpec& s) {
  Job j{s.workload, s.file, ""};
  if (!a.workload.empty()) {
    const plan::ScenarioSpec t = plan::load_scenario(a.workload, ctx.catalog());
    if (!t.workload)
      throw ConfigError(t.file, "", "--workload: this scenario has no \"workload\" section to run on " + s.name +
                                        "'s cluster; name one that has (scenarios/train-*.json)");
    j.workload = t.workload;
    j.from = t.file;
  } else if (!j.workload) {
    const auto path = std::filesystem::path(a.scenario).parent_path() / "train-vgg16-ddp.json";
    if (!std::filesystem::exists(path)) {
      j.missing = s.file + " has no \"workload\" section and there is no " + path.string() +
                  " beside it; name a scenario with one: --workload scenarios/train-vgg16-ddp.json";
      return j;
    }
    const plan::ScenarioSpec t = plan::load_scenario(path.string(), ctx.catalog());
    if (!t.workload) {
      j.missing = "neither " + s.file + " nor " + t.file + " has a \"workload\" section; name a scenario with one: --workload FILE";
      return j;
    }
    j.workload = t.workload;
    j.from = t.file;
  }
  return j;
}

// A training step of the job: step time and scaling on both backends, with closed-form collective
// costs so that the main job stays quick; and, when there is an alternative design, the same job
// on its cluster with NCCL (its own stack).
void training_section(Context& ctx, const Job& job, const plan::ScenarioSpec& s,
                      const std::optional<plan::ScenarioSpec>& alt, const std::optional<Plans>& plans) {
  if (!job.workload) {
    std::cout << "\nTraining step: not shown (" << job.missing << ")\n";
    return;
  }
  const std::string& from = job.from;
  train::WorkloadSpec w = *job.workload;
  std::vector<int> gpus;
  for (int g : w.gpus)
    if (g <= s.cluster.gpus()) gpus.push_back(g);
  if (gpus.size() > 2) gpus = {gpus.front(), gpus.back()};
  const std::string title = "\nTraining step: " + w.model.name + " " + w.kind + " of " + from + " on " + s.name;
  if (gpus.empty()) {
    std::cout << title << ": not run (the cluster has fewer GPUs than its smallest count, " << w.gpus.front() << ")\n";
    return;
  }
  const coll::LibraryParams lib = coll::load_library_params(ctx.catalog());
  auto engine = eval::engines().get("analytic").factory();
  report::Table tab({"cluster", "backend", "GPUs", "step", "compute", "exposed comm", "efficiency", "MFU", "samples/s/GPU"});
  // One backend of the job on one cluster; the rows, or nothing when the cluster cannot run it.
  auto run = [&](const plan::ScenarioSpec& on, const char* backend) {
    const auto p = plan::make_platform(on);
    w.backend = backend;
    train::CollectiveCosts costs(*engine, *p, lib, train::CollectiveCosts::Method::Estimate);
    const train::StepEnv env{*p, *engine, costs, false};
    return train::simulate_scaling(w, env, gpus);
  };
  auto add = [&](const std::string& cluster, const char* backend, const std::vector<train::StepResult>& rows) {
    for (const auto& r : rows)
      tab.add({cluster, backend, std::to_string(r.gpus), fmt_time(Seconds(r.step_s)), fmt_time(Seconds(r.compute_s)),
               fmt_time(Seconds(r.exposed_comm_s)), fmt_f(100 * r.efficiency, 1) + "%", fmt_f(100 * r.mfu, 1) + "%",
               fmt_g(r.samples_per_s / r.gpus, 4)});
    tab.rule();
  };
  // The comparison takes this cluster's faster backend at the largest count (HFReduce on
  // Fire-Flyer; NCCL where NVLink and a NIC per GPU make it faster).
  std::vector<train::StepResult> mine;
  std::string mine_backend;
  try {
    for (const char* backend : {"hfreduce", "nccl"}) {
      auto rows = run(s, backend);
      if (mine.empty() || rows.back().samples_per_s > mine.back().samples_per_s) {
        mine = rows;
        mine_backend = backend;
      }
      add(s.name, backend, rows);
    }
  } catch (const ValueError& e) {  // a workload this cluster cannot run (a device without compute)
    std::cout << title << ": not run (" << e.what() << ")\n";
    return;
  }
  std::string versus;
  if (alt && alt->name != s.name && gpus.back() > alt->cluster.gpus()) {
    versus = "  on " + alt->name + ": not run (it has " + std::to_string(alt->cluster.gpus()) + " GPUs, fewer than " +
             std::to_string(gpus.back()) + ")\n";
  } else if (alt && alt->name != s.name) {
    try {
      const auto theirs = run(*alt, "nccl");
      add(alt->name, "nccl", theirs);
      const double ratio = (mine.back().samples_per_s / mine.back().gpus) / (theirs.back().samples_per_s / theirs.back().gpus);
      versus = "  per GPU at " + std::to_string(gpus.back()) + " GPUs, " + s.name + " with " + mine_backend + " trains at " +
               fmt_f(100 * ratio, 1) + "% of " + alt->name + " with nccl (samples/s per GPU)\n";
      if (plans) versus += per_cost_line(*plans, ratio);
    } catch (const ValueError& e) {
      versus = "  on " + alt->name + ": not run (" + e.what() + ")\n";
    }
  }
  std::cout << title << " (collectives by closed form here; `ffsim train` simulates them)\n";
  tab.print(std::cout, "  ");
  std::cout << versus;
}

int run_summary(Context& ctx, const SummaryArgs& a) {
  // Every input is read before anything is printed: a bad --against fails with nothing on stdout.
  std::string against = a.against;
  const auto dflt = std::filesystem::path(a.scenario).parent_path() / "dgx-a100-cluster.json";
  const bool is_default = std::filesystem::path(a.scenario).filename() == "dgx-a100-cluster.json";
  if (against.empty() && !is_default && std::filesystem::exists(dflt)) against = dflt.string();
  ctx.use_scenarios({a.scenario, against});  // the clusters simulated (calib/scope.hpp)
  const plan::ScenarioSpec s = plan::load_scenario(a.scenario, ctx.catalog());
  std::optional<plan::ScenarioSpec> alt;
  if (!against.empty()) {
    check_is_scenario(against, "--against");
    alt = plan::load_scenario(against, ctx.catalog());
  }
  if (!a.workload.empty()) check_is_scenario(a.workload, "--workload");
  const Job job = resolve_job(ctx, a, s);

  std::cout << "Scenario " << s.name << " (" << s.file << ")\n";
  if (!s.description.empty()) std::cout << "  " << s.description << "\n";
  cluster_section(s);
  std::optional<Plans> plans;
  if (alt) {
    plans = plan_section(s, *alt);
  } else if (is_default) {
    std::cout << "\nCapacity plan: not shown (this is the default design to compare with; name another with --against FILE)\n";
  } else {
    std::cout << "\nCapacity plan against another design: not shown (no dgx-a100-cluster.json beside " << s.file
              << "; name one with --against scenarios/dgx-a100-cluster.json)\n";
  }
  if (!s.cluster.node.nics.empty() && s.cluster.nodes > 1) collective_section(ctx, s);
  else
    std::cout << "\nAllreduce across nodes: not shown (the cluster has " << (s.cluster.nodes > 1 ? "no NICs" : "one GPU node")
              << "; ffsim collective runs collectives inside a node)\n";
  training_section(ctx, job, s, alt, plans);
  print_calibration(std::cout, ctx);
  return kOk;
}

}  // namespace

void setup_summary(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("summary", "The main job: a scenario's cluster, its plan, HFReduce vs NCCL, a training step");
  auto a = std::make_shared<SummaryArgs>();
  ctx.expects(sub->add_option("scenario", a->scenario, "Scenario JSON file")->required()->check(CLI::ExistingFile),
              "a scenario file");
  ctx.expects(sub->add_option("--against", a->against, "Design to compare with (default: dgx-a100-cluster.json beside the scenario)")
                  ->check(CLI::ExistingFile),
              "a scenario file");
  ctx.expects(sub->add_option("--workload", a->workload,
                              "Scenario whose \"workload\" the training step runs (default: the scenario's own, else "
                              "train-vgg16-ddp.json beside it)")
                  ->check(CLI::ExistingFile),
              "a scenario file with a \"workload\" section");
  sub->callback([&ctx, a] { ctx.action = [&ctx, a] { return run_summary(ctx, *a); }; });
}

}  // namespace ffsim::cli
