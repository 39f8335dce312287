// The service of `ffsim ops`.
// SPDX-License-Identifier: Apache-2.0
#include "app/ops.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "app/engines.hpp"
#include "app/train.hpp"
#include "coll/placement.hpp"
#include "config/ops_reader.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"
#include "eval/engine.hpp"
#include "platform/background.hpp"
#include "sched/schedule.hpp"
#include "train/nn_model.hpp"
#include "train/run.hpp"

namespace ffsim::app {

namespace {

// The collective layer's placement of a job's step (coll/placement.hpp) for its ops placement.
coll::Placement job_placement(const ops::JobSpec& j) {
  coll::Placement p;
  switch (j.placement) {
    case ops::JobSpec::Placement::Packed: p.kind = coll::Placement::Kind::Packed; break;
    case ops::JobSpec::Placement::Spread: p.kind = coll::Placement::Kind::Spread; break;
    case ops::JobSpec::Placement::Random:
      p.kind = coll::Placement::Kind::Random;
      p.seed = j.placement_seed;
      break;
  }
  return p;
}

// The step times of the jobs that name a train workload: each (workload file, GPU count) once, on
// `sc`'s cluster. A kind with a closed form (transformer) runs on it; the others on the fluid
// engine with every collective its algorithm's closed-form estimate (--collectives estimate).
void resolve_workloads(const plan::ScenarioSpec& sc, const config::Catalog& cat, const std::string& file,
                       const std::string& jobs_pointer, ops::OpsParams& p, std::vector<OpsStepTime>* out) {
  std::unique_ptr<StepSession> closed, fluid;
  std::map<std::tuple<std::string, int, std::string>, train::StepResult> cache;
  std::map<std::string, plan::ScenarioSpec> loaded;
  const int per_node = static_cast<int>(sc.cluster.node.gpus.size());
  for (std::size_t i = 0; i < p.jobs.size(); ++i) {
    ops::JobSpec& j = p.jobs[i];
    if (j.workload.empty()) continue;
    const std::string at = jobs_pointer + "/" + std::to_string(i);
    auto it = loaded.find(j.workload);
    if (it == loaded.end()) it = loaded.emplace(j.workload, plan::load_scenario(j.workload, cat, false)).first;
    const plan::ScenarioSpec& ws = it->second;
    if (!ws.workload)
      throw ConfigError(file, at + "/workload",
                        "job \"" + j.name + "\": " + j.workload +
                            " has no \"workload\" section; name a scenario that has one (scenarios/train-*.json)");
    // The step at the job's placement, on nodes chosen by the same rule in an empty cluster (the
    // nodes the scheduler gives change from run to run; one step per shape is computed).
    train::WorkloadSpec w = *ws.workload;
    w.placement = job_placement(j);
    const std::string why = w.impl->check(w, j.gpus, sc.cluster.gpus(), per_node);
    if (!why.empty())
      throw ConfigError(file, at + "/gpus",
                        "job \"" + j.name + "\": the workload of " + ws.name + " cannot run on " +
                            std::to_string(j.gpus) + " GPUs: " + why);
    const bool cf = w.impl->has_closed_form();
    const std::tuple<std::string, int, std::string> key{j.workload, j.gpus, w.placement.name()};
    auto found = cache.find(key);
    const bool reused = found != cache.end();
    if (!reused) {
      std::unique_ptr<StepSession>& s = cf ? closed : fluid;
      if (!s)
        s = std::make_unique<StepSession>(
            sc, cat, cf ? choose_engine("closed-form", Analytic::ClosedForm) : choose_engine("fluid", Analytic::Fluid),
            train::CollectiveCosts::Method::Estimate, false, 1);
      train::StepResult r;
      try {
        r = train::simulate_step(w, s->env(), j.gpus);
      } catch (const ValueError& e) {
        throw ConfigError(file, at + "/gpus",
                          "job \"" + j.name + "\": the workload of " + ws.name + " at " + std::to_string(j.gpus) +
                              " GPUs: " + e.what());
      }
      found = cache.emplace(key, r).first;
    }
    const train::StepResult& r = found->second;
    j.step_s = r.step_s;
    j.work_s = static_cast<double>(j.steps) * r.step_s;
    OpsStepTime st{j.name,   j.workload, ws.name, j.gpus, r.layout, cf ? "closed-form" : "fluid",
                   r.step_s, j.steps,    0,       reused};
    st.placement = w.placement.name();
    if (j.checkpoint_size_from_model) {
      // A checkpoint holds the weights and the optimizer state (master weights, moments), not the
      // gradients: optimizer_state_bytes less the gradient's bytes, per parameter.
      const double params = train::total_params(train::layer_costs(w.model, w.seq, w.flash_attention));
      const double per_param = train::optimizer_state_bytes(w, 1) - w.grad_bytes;
      st.checkpoint_bytes = params * per_param;
      j.checkpoint_bytes = st.checkpoint_bytes;
      const int nodes = (j.gpus + per_node - 1) / per_node;
      j.checkpoint_cost_s = st.checkpoint_bytes / (j.checkpoint_bw_per_node * nodes);
    }
    if (out) out->push_back(std::move(st));
  }
}

// The time for every node of `nodes` to move `bytes` (the whole checkpoint, in equal shares) to or
// from the storage nodes' drives through the fabric: `targets` flows per node, the node's flows
// together at most `bw_per_node`, in the storage class, on the fluid engine. The last flow's end.
double storage_io_time(eval::Engine& e, const platform::Platform& pf, const std::vector<int>& nodes, int targets,
                       platform::BackgroundDirection dir, double bytes, double bw_per_node) {
  sched::Schedule s;
  const double flows = static_cast<double>(nodes.size()) * targets;
  const std::vector<sched::OpId> ops = platform::add_storage_flows(
      s, pf, nodes, targets, dir, bytes / flows, bw_per_node / targets, sched::TrafficClass::Storage,
      s.tag(dir == platform::BackgroundDirection::Write ? "checkpoint write" : "checkpoint read"));
  const eval::Result r = e.run(s, pf);
  double end = 0;
  for (const sched::OpId o : ops) end = std::max(end, r.ops[o].end);
  return end;
}

// The checkpoints of jobs with "through": "fabric": their write time (the checkpoint's cost) and a
// restart's read (added to the restart cost), each (GPUs, placement, size, targets, bandwidths)
// once, on the scenario's platform and the fluid engine.
void resolve_checkpoint_io(const plan::ScenarioSpec& sc, const std::string& file, const std::string& jobs_pointer,
                           ops::OpsParams& p, std::vector<OpsCheckpointIo>* out) {
  std::unique_ptr<platform::Platform> pf;
  std::unique_ptr<eval::Engine> engine;
  using Key = std::tuple<int, std::string, double, int, double, double>;
  std::map<Key, OpsCheckpointIo> cache;
  for (std::size_t i = 0; i < p.jobs.size(); ++i) {
    ops::JobSpec& j = p.jobs[i];
    if (!j.checkpoint_through_fabric || !(j.checkpoint_interval_s > 0)) continue;
    const std::string at = jobs_pointer + "/" + std::to_string(i) + "/checkpoint/through";
    const int storage = sc.cluster.storage ? sc.cluster.storage->count : 0;
    if (storage == 0)
      throw ConfigError(file, at,
                        "job \"" + j.name + "\" writes its checkpoint through the fabric to the storage nodes, and " +
                            sc.name +
                            "'s cluster has none; give the cluster storage nodes (cluster.storage) or drop "
                            "\"through\" (the closed form: size / (nodes x write_bandwidth_per_node))");
    if (!pf) {
      pf = plan::make_platform(sc);
      engine = choose_engine("fluid", Analytic::Fluid).make();
    }
    const coll::Placement pl = job_placement(j);
    const Key key{j.gpus,
                  pl.name(),
                  j.checkpoint_bytes,
                  j.checkpoint_targets_per_node,
                  j.checkpoint_bw_per_node,
                  j.checkpoint_read_bw_per_node};
    auto found = cache.find(key);
    const bool reused = found != cache.end();
    if (!reused) {
      OpsCheckpointIo io;
      std::vector<int> nodes;
      try {
        nodes = coll::place_nodes(*pf, j.gpus, pl, "placement " + pl.name());
      } catch (const UsageError& e) {
        throw ConfigError(file, jobs_pointer + "/" + std::to_string(i), "job \"" + j.name + "\": " + e.what());
      }
      io.gpus = j.gpus;
      io.nodes = static_cast<int>(nodes.size());
      io.targets = j.checkpoint_targets_per_node;
      io.storage_nodes = storage;
      io.placement = pl.name();
      io.bytes = j.checkpoint_bytes;
      io.write_bw_per_node = j.checkpoint_bw_per_node;
      io.read_bw_per_node = j.checkpoint_read_bw_per_node;
      io.write_s = storage_io_time(*engine, *pf, nodes, io.targets, platform::BackgroundDirection::Write, io.bytes,
                                   io.write_bw_per_node);
      io.read_s = storage_io_time(*engine, *pf, nodes, io.targets, platform::BackgroundDirection::Read, io.bytes,
                                  io.read_bw_per_node);
      io.closed_form_write_s = io.bytes / (io.nodes * io.write_bw_per_node);
      found = cache.emplace(key, io).first;
    }
    OpsCheckpointIo io = found->second;
    io.job = j.name;
    io.reused = reused;
    j.checkpoint_cost_s = io.write_s;
    j.restart_cost_s += io.read_s;
    if (out) out->push_back(std::move(io));
  }
}

}  // namespace

ops::OpsParams ops_params(const plan::ScenarioSpec& sc, const config::Catalog& cat, const OpsOptions& opt,
                          std::vector<OpsStepTime>* steps, std::vector<OpsCheckpointIo>* checkpoint_io) {
  if (!sc.ops)
    throw UsageError("ops: " + sc.file +
                     " has no \"ops\" section (the job mix, failure processes, seed and horizon; "
                     "docs/commands/ops.md; an example: scenarios/ops-fire-flyer-2.json)");
  ops::OpsParams p = *sc.ops;
  if (p.cluster.zones == 0) {
    // The fabric's zones (nodes are split into equal contiguous blocks, one per zone).
    int zones = 1;
    if (sc.built_fabric) zones = std::max(1, sc.built_fabric->counts().zones);
    p.cluster.zones = std::min(zones, p.cluster.nodes);
  }
  if (!opt.jobs_file.empty()) p.jobs = config::load_ops_jobs(opt.jobs_file, p.cluster);
  if (opt.seed) p.seed = *opt.seed;
  if (opt.horizon_s) p.horizon_s = *opt.horizon_s;
  const std::string file = opt.jobs_file.empty() ? sc.file : opt.jobs_file;
  const std::string jobs_pointer = opt.jobs_file.empty() ? "/ops/jobs" : "/jobs";
  resolve_workloads(sc, cat, file, jobs_pointer, p, steps);
  resolve_checkpoint_io(sc, file, jobs_pointer, p, checkpoint_io);
  return p;
}

OpsReport run_ops(const plan::ScenarioSpec& sc, const config::Catalog& cat, const OpsOptions& opt) {
  OpsReport r;
  r.scenario = sc.name;
  r.params = ops_params(sc, cat, opt, &r.step_times, &r.checkpoint_io);
  try {
    ops::validate(r.params);
  } catch (const ValueError& e) {
    throw ConfigError(sc.file, "/ops", e.what());
  }
  r.result = ops::simulate(r.params, opt.timeline);
  if (opt.without_checkpoints) {
    ops::OpsParams q = r.params;
    for (auto& j : q.jobs) j.checkpoint_interval_s = 0;
    r.without_checkpoints = ops::simulate(q);
  }
  if (!opt.sweep_job.empty()) {
    std::vector<std::string> names;
    for (const auto& j : r.params.jobs) names.push_back(j.name);
    const auto it = std::find(names.begin(), names.end(), opt.sweep_job);
    if (it == names.end())
      throw UsageError("--checkpoint-sweep: no job \"" + opt.sweep_job + "\"" + did_you_mean(opt.sweep_job, names) +
                       "; jobs: " + join(names));
    const auto j = static_cast<std::size_t>(it - names.begin());
    const double rate = ops::job_failure_rate(r.params, r.params.jobs[j]);
    const double c = r.params.jobs[j].checkpoint_cost_s;
    if (!(rate > 0) || !(c > 0))
      throw UsageError("--checkpoint-sweep " + opt.sweep_job +
                       ": the job needs failures that hit it and a checkpoint cost > 0 "
                       "(Young/Daly's interval sqrt(2 C MTBF) is otherwise 0 or infinite)");
    const double yd = std::sqrt(2.0 * c / rate);
    r.sweep = ops::sweep_checkpoint(r.params, j, ops::default_sweep_grid(yd), opt.sweep_seeds);
  }
  return r;
}

}  // namespace ffsim::app
