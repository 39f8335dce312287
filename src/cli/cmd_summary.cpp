// `ffsim summary <scenario>`: the main job: what ffsim knows and predicts about a scenario: the
// cluster, its plan against the alternative design, HFReduce against NCCL, and (when the scenario has
// a workload) a training step.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <iostream>
#include <iterator>
#include <sstream>

#include <CLI/CLI.hpp>

#include "app/engines.hpp"
#include "app/summary.hpp"
#include "app/train.hpp"
#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "config/reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "plan/design.hpp"
#include "plan/scenario.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"
#include "train/collectives.hpp"
#include "train/run.hpp"

namespace ffsim::cli {

namespace {

struct SummaryArgs {
  std::string scenario;
  std::string against;
  std::string workload;
  bool json = false;
};

// What the sections found, for the verdict that opens the text and for --json (SI base units).
struct Findings {
  std::vector<Record> cluster;  // (item, value, unit)
  // The capacity plan against the alternative: per GPU, from `ffsim plan`.
  struct Plan {
    std::string against;
    long long gpus = 0, against_gpus = 0, switches = 0, against_switches = 0;
    std::optional<double> cost_per_gpu, against_cost_per_gpu;  // in `unit`
    std::string unit;
    std::optional<double> power_per_gpu_w, against_power_per_gpu_w;
    double node_performance = 0;  // the node's GEMM rate against the alternative's
    std::string precision;
  };
  std::optional<Plan> plan;
  std::string plan_missing;
  std::vector<Record> allreduce;  // one per GPU count
  struct Allreduce {
    int gpus = 0;
    double hfreduce_Bps = 0, nccl_Bps = 0;
  };
  std::optional<Allreduce> allreduce_largest;
  std::vector<Record> training;  // one per (cluster, backend, GPUs)
  struct Training {
    std::string model, backend, against;
    int gpus = 0;
    double per_gpu_ratio = 0;  // samples/s per GPU against the alternative's with nccl
  };
  std::optional<Training> training_versus;
  std::string training_missing;
};

// Wraps `text` at spaces into lines of at most `width` characters, each starting with `indent`.
// Continuation lines are indented by two more spaces, except prose blocks (`hang` false).
std::string wrap(const std::string& text, const std::string& indent, std::size_t width = 100, bool hang = true) {
  const std::string more = hang ? indent + "  " : indent;
  std::string out, line;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t sp = text.find(' ', i);
    const std::string word = text.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
    i = sp == std::string::npos ? text.size() : sp + 1;
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out += (out.empty() ? indent : more) + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += (out.empty() ? indent : more) + line + "\n";
  return out;
}

// --against and --workload name scenarios; a catalog model (it has "kind") is a usage error, not
// a bad scenario (the file is a valid model of another kind).
void check_is_scenario(const std::string& file, const std::string& option) {
  const config::Document d = config::Document::load(file, false);
  const config::Reader r = d.root();
  if (r.is_object() && r.has("kind") && r.child("kind").is_string())
    throw UsageError(option + ": " + file + " is a catalog model (kind \"" + r.child("kind").as_string() +
                     "\"), not a scenario; name a scenario file (scenarios/*.json)");
}

void cluster_section(std::ostream& out, Findings& f, const plan::ScenarioSpec& s) {
  const hw::ClusterSpec& c = s.cluster;
  const hw::NodeSpec& n = c.node;
  out << "\nCluster\n";
  report::Table t({"item", "value"});
  auto item = [&](const std::string& name, Cell value, const std::string& model) {
    f.cluster.push_back({{"item", name}, {"value", std::move(value)}, {"model", model}});
  };
  t.add({"GPU nodes", fmt_int(c.nodes) + " x " + n.name});
  item("gpu_nodes", static_cast<long long>(c.nodes), n.name);
  t.add({"GPUs", fmt_int(c.gpus()) + " x " + n.gpus.front().gpu.name});
  item("gpus", static_cast<long long>(c.gpus()), n.gpus.front().gpu.name);
  const auto& g = n.gpus.front().gpu;
  for (const char* p : {"tf32", "fp16"}) {
    auto it = g.compute.find(p);
    if (it == g.compute.end()) continue;
    t.add({std::string("GEMM ") + p + " (cluster)", fmt_flop_rate(it->second.gemm() * static_cast<double>(c.gpus()))});
    item(std::string("gemm_") + p + "_cluster_flops", it->second.gemm().si() * static_cast<double>(c.gpus()), g.name);
  }
  BytesPerSecond dram(0);
  for (const auto& sk : n.sockets) dram += sk.dram_bandwidth;
  t.add({"host DRAM bandwidth per node", fmt_bandwidth(dram)});
  item("host_dram_per_node_Bps", dram.si(), n.name);
  const std::string nic = n.nics.empty() ? std::string("-") : n.nics.front().nic.name;
  t.add({"compute NICs per node", std::to_string(n.compute_nics()) + " x " + nic});
  item("compute_nics_per_node", static_cast<long long>(n.compute_nics()), nic);
  if (c.storage) {
    t.add({"storage nodes", fmt_int(c.storage->count) + " x " + c.storage->node.name});
    item("storage_nodes", static_cast<long long>(c.storage->count), c.storage->node.name);
  }
  t.print(out, "  ");
  // The fabric's description is a sentence: on its own lines (in the table it would set the width
  // of a right-aligned value column).
  out << wrap("fabric: " + s.fabric.design->summary(), "  ");
}

using Plans = std::pair<plan::DesignPlan, plan::DesignPlan>;  // (the scenario's, the alternative's)

std::optional<Plans> plan_section(std::ostream& out, Findings& f, const plan::ScenarioSpec& s, const plan::ScenarioSpec& alt) {
  plan::DesignPlan a, b;
  try {
    a = plan::plan_design(s);
    b = plan::plan_design(alt);
  } catch (const ValueError& e) {  // a design the planner cannot rate (a device without compute)
    f.plan_missing = std::string("not rated (") + e.what() + ")";
    out << "\n" << wrap("Capacity plan against " + alt.name + ": " + f.plan_missing, "");
    return std::nullopt;
  }
  const plan::Relative r = plan::compare(a, b);
  Findings::Plan fp;
  fp.against = b.name;
  fp.gpus = a.gpus;
  fp.against_gpus = b.gpus;
  fp.switches = a.counts.switches;
  fp.against_switches = b.counts.switches;
  if (a.cost && b.cost && a.cost->unit == b.cost->unit && a.gpus > 0 && b.gpus > 0) {
    fp.cost_per_gpu = a.cost->total() / a.gpus;
    fp.against_cost_per_gpu = b.cost->total() / b.gpus;
    fp.unit = a.cost->unit;
  }
  if (const auto pa = a.power.total(), pb = b.power.total(); pa && pb && a.gpus > 0 && b.gpus > 0) {
    fp.power_per_gpu_w = pa->si() / a.gpus;
    fp.against_power_per_gpu_w = pb->si() / b.gpus;
  }
  fp.node_performance = r.node_performance;
  fp.precision = a.precision;
  f.plan = fp;
  out << "\nCapacity plan against " << b.name << " (ffsim plan for every row)\n";
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
  t.print(out, "  ");
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
    out += wrap("per unit of total cost (" + price(ca) + " against " + price(cb) + " " + a.cost->unit +
                    " per GPU in the plan): " + fmt_f(per_gpu * cb / ca, 2) + "x the samples/s of " + b.name,
                "  ");
  }
  const auto pa = a.power.total(), pb = b.power.total();
  if (pa && pb && pa->si() > 0 && pb->si() > 0) {
    const double wa = pa->si() / a.gpus, wb = pb->si() / b.gpus;
    out += wrap("per watt (" + fmt_power(Watts(wa)) + " against " + fmt_power(Watts(wb)) +
                    " per GPU in the plan): " + fmt_f(per_gpu * wb / wa, 2) + "x the samples/s of " + b.name,
                "  ");
  }
  return out;
}

void collective_section(std::ostream& out, Findings& f, Context& ctx, const plan::ScenarioSpec& s) {
  const app::AllreduceSummary sum = app::allreduce_summary(s, ctx.catalog());
  const double S = sum.bytes;
  out << "\nAllreduce of 184 MiB per GPU, closed form (ffsim collective --engine fluid|simgrid simulates it)\n";
  report::Table t({"GPUs", "hfreduce algbw", "nccl algbw", "hfreduce / nccl", "hfreduce host mem/node"});
  std::string bounds;  // what binds hfreduce at each count: below the table (a name can be long)
  int largest = 0;
  double hf_largest = 0;
  for (const auto& row : sum.rows) {
    const int n = row.gpus;
    t.add({std::to_string(n), fmt_bandwidth(BytesPerSecond(S / row.hfreduce_time)), fmt_bandwidth(BytesPerSecond(S / row.nccl_time)),
           fmt_f(row.nccl_time / row.hfreduce_time, 2) + "x", fmt_f(row.hfreduce_host, 1) + " S"});
    bounds += wrap("hfreduce at " + std::to_string(n) + " GPUs is bound by " + row.hfreduce_bound, "  ");
    f.allreduce.push_back({{"gpus", static_cast<long long>(n)},
                           {"bytes", S},
                           {"hfreduce_algbw_Bps", S / row.hfreduce_time},
                           {"nccl_algbw_Bps", S / row.nccl_time},
                           {"hfreduce_over_nccl", row.nccl_time / row.hfreduce_time},
                           {"hfreduce_host_traffic_per_node_S", row.hfreduce_host},
                           {"hfreduce_bound_by", row.hfreduce_bound}});
    f.allreduce_largest = Findings::Allreduce{n, S / row.hfreduce_time, S / row.nccl_time};
    largest = n;
    hf_largest = row.hfreduce_time;
  }
  t.print(out, "  ");
  out << bounds;
  out << "  host mem/node: bytes read + written in each node's host memory per allreduce, in multiples of\n"
               "  the vector size S (the paper counts 24 S for HFReduce with GDRCopy; 2 nodes need less)\n";
  // The nccl column rests on one assumption that matters at scale: a fixed tree chunk (the
  // shipped 4 MiB, [I]) where NCCL's own source moves 512 KiB steps. Show what NCCL's own rule
  // gives, so that the comparison's dependence on it is in the output and not only in the README.
  if (sum.nccl_own_rule_time && sum.nccl_shipped_time) {
    const double own = *sum.nccl_own_rule_time, shipped = *sum.nccl_shipped_time;
    // Said only where it changes the figure (NCCL picks the ring, or the chunks are equal, elsewhere).
    if (std::abs(own - shipped) > 1e-3 * shipped) {
      out << "  nccl (here and in the training rows below) assumes a " << fmt_bytes(Bytes(sum.tree_chunk_bytes))
          << " tree chunk\n  ([I]: models/libraries/nccl.json tree_chunk; docs/results.md, \"NCCL's tree chunk\");\n"
          << "  NCCL's own rule (" << fmt_bytes(Bytes(sum.step_size))
          << " steps, \"tree_chunk\": \"nccl\") gives " << fmt_bandwidth(BytesPerSecond(S / own)) << " at "
          << largest << " GPUs,\n  hfreduce / nccl " << fmt_f(own / hf_largest, 2) << "x\n";
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
void training_section(std::ostream& out, Findings& f, Context& ctx, const Job& job, const plan::ScenarioSpec& s,
                      const std::optional<plan::ScenarioSpec>& alt, const std::optional<Plans>& plans) {
  if (!job.workload) {
    f.training_missing = job.missing;
    out << "\n" << wrap("Training step: not shown (" + job.missing + ")", "");
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
    f.training_missing = "the cluster has fewer GPUs than its smallest count, " + std::to_string(w.gpus.front());
    out << "\n" << wrap(title.substr(1) + ": not run (" + f.training_missing + ")", "");
    return;
  }
  const app::EngineChoice fluid = app::choose_engine("fluid", app::Analytic::Fluid);
  report::Table tab({"cluster", "backend", "GPUs", "step", "compute", "exposed comm", "efficiency", "MFU", "samples/s/GPU"});
  // One backend of the job on one cluster; the rows, or nothing when the cluster cannot run it.
  auto run = [&](const plan::ScenarioSpec& on, const char* backend) {
    w.backend = backend;
    const app::StepSession session(on, ctx.catalog(), fluid, train::CollectiveCosts::Method::Estimate, false, 1);
    return train::simulate_scaling(w, session.env(), gpus);
  };
  auto add = [&](const std::string& cluster, const char* backend, const std::vector<train::StepResult>& rows) {
    for (const auto& r : rows)
      f.training.push_back({{"cluster", cluster},
                            {"backend", std::string(backend)},
                            {"gpus", static_cast<long long>(r.gpus)},
                            {"step_s", r.step_s},
                            {"compute_s", r.compute_s},
                            {"exposed_comm_s", r.exposed_comm_s},
                            {"efficiency", r.efficiency},
                            {"mfu", r.mfu},
                            {"samples_per_s_per_gpu", r.samples_per_s / r.gpus}});
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
    f.training_missing = e.what();
    f.training.clear();
    out << "\n" << wrap(title.substr(1) + ": not run (" + e.what() + ")", "");
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
      f.training_versus = Findings::Training{w.model.name, mine_backend, alt->name, gpus.back(), ratio};
      versus = wrap("per GPU at " + std::to_string(gpus.back()) + " GPUs, " + s.name + " with " + mine_backend + " trains at " +
                        fmt_f(100 * ratio, 1) + "% of " + alt->name + " with nccl (samples/s per GPU)",
                    "  ");
      if (plans) versus += per_cost_line(*plans, ratio);
    } catch (const ValueError& e) {
      versus = "  on " + alt->name + ": not run (" + e.what() + ")\n";
    }
  }
  out << title << "\n  (collectives by closed form here; `ffsim train` simulates them)\n";
  tab.print(out, "  ");
  out << versus;
}

// The paper's headline figures for Fire-Flyer 2 against the DGX-A100 cluster (arXiv 2408.14158,
// as the project's reference notes list them: shared/reference/fire-flyer-facts.md sections 1, 2
// and 8), printed beside ffsim's own for comparison. No figure ffsim prints is computed from them.
struct Published {
  const char* what;
  const char* figure;
  const char* source;
};
constexpr Published kPublished[] = {
    {"performance", "80-83% of DGX-A100 (GEMM per GPU: TF32 107 vs 131 TFLOPS)", "Table II"},
    {"cost", "about 50-60% of the cost; node cost-performance 1.38", "Table III"},
    {"energy", "40% less energy", "Sec. I"},
    {"switches", "122 against 1,320", "Table III"},
    {"allreduce",
     "186 MiB (the artifact's benchmark and ffsim: 46 x 4 MiB = 184 MiB), 16-1,440 GPUs: HFReduce 6.3-8.1 GB/s against "
     "NCCL 1.6-4.8 GB/s",
     "Fig. 7"},
};
// The scenarios the figures are for (the as-built cluster, and its Table III form) and the design
// they compare with; any other pair gets no published line.
constexpr const char* kPublishedFor[] = {"fire-flyer-2", "table3-fire-flyer-2"};
constexpr const char* kPublishedAgainst = "dgx-a100-cluster";

std::string per_gpu_money(double v) { return v >= 1000 ? fmt_int(std::llround(v)) : fmt_g(v, 3); }

// A few lines: the scenario against the alternative in cost, power and performance (ffsim plan
// and the training step), HFReduce against NCCL, and the published figures it compares with.
void print_verdict(std::ostream& out, const plan::ScenarioSpec& s, const std::optional<plan::ScenarioSpec>& alt,
                   const Findings& f, bool published) {
  out << "\nVerdict" << (alt ? " against " + alt->name : std::string()) << " (ffsim's figures"
      << (published ? "; the paper's below)" : ")") << "\n";
  if (f.plan) {
    const auto& p = *f.plan;
    std::string cost = "cost: ";
    if (p.cost_per_gpu && p.against_cost_per_gpu && *p.against_cost_per_gpu > 0)
      cost += per_gpu_money(*p.cost_per_gpu) + " against " + per_gpu_money(*p.against_cost_per_gpu) + " " + p.unit + " per GPU (" +
              fmt_f(100 * *p.cost_per_gpu / *p.against_cost_per_gpu, 1) + "%)";
    else
      cost += "not priced";
    out << wrap(cost, "  ");
    std::string power = "power: ";
    if (p.power_per_gpu_w && p.against_power_per_gpu_w && *p.against_power_per_gpu_w > 0)
      power += fmt_power(Watts(*p.power_per_gpu_w)) + " against " + fmt_power(Watts(*p.against_power_per_gpu_w)) + " per GPU (" +
               fmt_f(100 * (1 - *p.power_per_gpu_w / *p.against_power_per_gpu_w), 1) + "% less)";
    else
      power += "not known";
    power += "; switches " + fmt_int(p.switches) + " against " + fmt_int(p.against_switches);
    out << wrap(power, "  ");
    out << wrap("performance: node " + p.precision + " GEMM " + fmt_f(100 * p.node_performance, 1) + "% of " + p.against + "'s",
                "  ");
    if (f.training_versus)
      out << wrap("training: " + f.training_versus->model + " at " + std::to_string(f.training_versus->gpus) + " GPUs, " +
                      f.training_versus->backend + " against nccl: " + fmt_f(100 * f.training_versus->per_gpu_ratio, 1) +
                      "% of its samples/s per GPU",
                  "  ");
  } else {
    out << wrap("capacity plan: " + (f.plan_missing.empty() ? std::string("not shown") : f.plan_missing), "  ");
  }
  if (f.allreduce_largest) {
    const auto& r = *f.allreduce_largest;
    out << wrap("allreduce of 184 MiB at " + fmt_int(r.gpus) + " GPUs: HFReduce " +
                    fmt_bandwidth(BytesPerSecond(r.hfreduce_Bps)) + " against NCCL " + fmt_bandwidth(BytesPerSecond(r.nccl_Bps)) +
                    " (" + fmt_f(r.hfreduce_Bps / r.nccl_Bps, 2) + "x, closed form)",
                "  ");
  }
  if (published) {
    out << "  published (arXiv 2408.14158, " << s.name << " against " << alt->name << "):\n";
    for (const auto& p : kPublished) out << wrap(std::string(p.what) + ": " + p.figure + " (" + p.source + ")", "    ");
  }
}

void print_json(std::ostream& os, const plan::ScenarioSpec& s, const std::optional<plan::ScenarioSpec>& alt,
                const Findings& f, bool published, const std::string& allreduce_missing, Context& ctx) {
  auto opt = [](const std::optional<double>& v) { return v ? Cell(*v) : Cell(nullptr); };
  auto text_or_null = [](const std::string& t) { return t.empty() ? Cell(nullptr) : Cell(t); };
  report::JsonWriter w(os);
  begin_json(w, "summary");
  w.field("scenario", s.name);
  w.field("file", s.file);
  w.field("description", s.description);
  w.key("against");
  if (alt) w.value(alt->name);
  else w.null();
  w.key("cluster");
  write_records_json(w, f.cluster);
  w.field("fabric", s.fabric.design->summary());
  w.key("plan");
  if (f.plan) {
    const auto& p = *f.plan;
    write_records_json(w, {{{"design", s.name},
                            {"gpus", p.gpus},
                            {"switches", p.switches},
                            {"cost_per_gpu", opt(p.cost_per_gpu)},
                            {"cost_unit", p.unit},
                            {"power_per_gpu_w", opt(p.power_per_gpu_w)},
                            {"node_performance_vs_against", p.node_performance},
                            {"precision", p.precision}},
                           {{"design", p.against},
                            {"gpus", p.against_gpus},
                            {"switches", p.against_switches},
                            {"cost_per_gpu", opt(p.against_cost_per_gpu)},
                            {"cost_unit", p.unit},
                            {"power_per_gpu_w", opt(p.against_power_per_gpu_w)},
                            {"node_performance_vs_against", 1.0},
                            {"precision", p.precision}}});
  } else {
    w.null();
  }
  w.key("allreduce");
  write_records_json(w, f.allreduce);
  w.key("training");
  write_records_json(w, f.training);
  w.key("verdict");
  {
    Record v;
    v.reserve(16);  // (also keeps g++ 12 from a false -Warray-bounds on growing an empty vector)
    if (f.plan) {
      const auto& p = *f.plan;
      v.emplace_back("cost_per_gpu_ratio", p.cost_per_gpu && p.against_cost_per_gpu && *p.against_cost_per_gpu > 0
                                               ? Cell(*p.cost_per_gpu / *p.against_cost_per_gpu)
                                               : Cell(nullptr));
      v.emplace_back("power_per_gpu_ratio", p.power_per_gpu_w && p.against_power_per_gpu_w && *p.against_power_per_gpu_w > 0
                                                ? Cell(*p.power_per_gpu_w / *p.against_power_per_gpu_w)
                                                : Cell(nullptr));
      v.emplace_back("node_performance_ratio", p.node_performance);
    }
    if (f.training_versus) {
      v.emplace_back("training_model", f.training_versus->model);
      v.emplace_back("training_gpus", static_cast<long long>(f.training_versus->gpus));
      v.emplace_back("training_backend", f.training_versus->backend);
      v.emplace_back("training_per_gpu_ratio", f.training_versus->per_gpu_ratio);
    }
    if (f.allreduce_largest) {
      v.emplace_back("allreduce_gpus", static_cast<long long>(f.allreduce_largest->gpus));
      v.emplace_back("hfreduce_algbw_Bps", f.allreduce_largest->hfreduce_Bps);
      v.emplace_back("nccl_algbw_Bps", f.allreduce_largest->nccl_Bps);
    }
    v.emplace_back("plan_missing", text_or_null(f.plan_missing));
    v.emplace_back("allreduce_missing", text_or_null(allreduce_missing));
    v.emplace_back("training_missing", text_or_null(f.training_missing));
    write_records_json(w, {v});
  }
  w.key("published");
  std::vector<Record> pub;
  if (published)
    for (const auto& p : kPublished)
      pub.push_back({{"what", std::string(p.what)}, {"figure", std::string(p.figure)}, {"source", "arXiv 2408.14158 " + std::string(p.source)}});
  write_records_json(w, pub);
  if (ctx.calibration_use()) {  // what --calibration applied and skipped (calib_report.hpp)
    w.key("calibration");
    write_calibration(w, ctx);
  }
  w.end_object();
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

  // The sections write to `body`; the verdict, which needs their figures, comes first.
  std::ostringstream body;
  Findings f;
  cluster_section(body, f, s);
  std::optional<Plans> plans;
  if (alt) {
    plans = plan_section(body, f, s, *alt);
  } else if (is_default) {
    f.plan_missing = "this is the default design to compare with; name another with --against FILE";
    body << "\n" << wrap("Capacity plan: not shown (" + f.plan_missing + ")", "");
  } else {
    f.plan_missing = "no dgx-a100-cluster.json beside " + s.file + "; name one with --against scenarios/dgx-a100-cluster.json";
    body << "\n" << wrap("Capacity plan against another design: not shown (" + f.plan_missing + ")", "");
  }
  std::string allreduce_missing;
  if (!s.cluster.node.nics.empty() && s.cluster.nodes > 1) {
    collective_section(body, f, ctx, s);
  } else {
    allreduce_missing = std::string("the cluster has ") + (s.cluster.nodes > 1 ? "no NICs" : "one GPU node") +
                        "; ffsim collective runs collectives inside a node";
    body << "\n" << wrap("Allreduce across nodes: not shown (" + allreduce_missing + ")", "");
  }
  training_section(body, f, ctx, job, s, alt, plans);
  const bool published = alt && alt->name == kPublishedAgainst &&
                         std::find(std::begin(kPublishedFor), std::end(kPublishedFor), s.name) != std::end(kPublishedFor);
  if (a.json) {
    print_json(std::cout, s, alt, f, published, allreduce_missing, ctx);
    return kOk;
  }
  std::cout << "Scenario " << s.name << " (" << s.file << ")\n";
  print_verdict(std::cout, s, alt, f, published);
  if (!s.description.empty()) std::cout << "\nAbout the scenario\n" << wrap(s.description, "  ", 100, false);
  std::cout << body.str();
  print_calibration(std::cout, ctx);
  return kOk;
}

}  // namespace

void setup_summary(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("summary", "The main job: a scenario's cluster, its plan, HFReduce vs NCCL, a training step");
  auto a = std::make_shared<SummaryArgs>();
  ctx.expects(sub->add_option("scenario", a->scenario, "Scenario JSON file")->required()->check(input_file()),
              "a scenario file");
  ctx.expects(sub->add_option("--against", a->against, "Design to compare with (default: dgx-a100-cluster.json beside the scenario)")
                  ->check(input_file()),
              "a scenario file");
  ctx.expects(sub->add_option("--workload", a->workload,
                              "Scenario whose \"workload\" the training step runs (default: the scenario's own, else "
                              "train-vgg16-ddp.json beside it)")
                  ->check(input_file()),
              "a scenario file with a \"workload\" section");
  sub->add_flag("--json", a->json, "Machine-readable output: the verdict, the published figures and every section's rows");
  sub->callback([&ctx, a] { ctx.action = [&ctx, a] { return run_summary(ctx, *a); }; });
}

}  // namespace ffsim::cli
