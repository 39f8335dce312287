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
      const int nodes = (j.gpus + per_node - 1) / per_node;
      j.checkpoint_cost_s = st.checkpoint_bytes / (j.checkpoint_bw_per_node * nodes);
    }
    if (out) out->push_back(std::move(st));
  }
}

}  // namespace

ops::OpsParams ops_params(const plan::ScenarioSpec& sc, const config::Catalog& cat, const OpsOptions& opt,
                          std::vector<OpsStepTime>* steps) {
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
  resolve_workloads(sc, cat, opt.jobs_file.empty() ? sc.file : opt.jobs_file,
                    opt.jobs_file.empty() ? "/ops/jobs" : "/jobs", p, steps);
  return p;
}

OpsReport run_ops(const plan::ScenarioSpec& sc, const config::Catalog& cat, const OpsOptions& opt) {
  OpsReport r;
  r.scenario = sc.name;
  r.params = ops_params(sc, cat, opt, &r.step_times);
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
