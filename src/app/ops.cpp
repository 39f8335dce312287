// The service of `ffsim ops`.
// SPDX-License-Identifier: Apache-2.0
#include "app/ops.hpp"

#include <algorithm>
#include <cmath>

#include "config/ops_reader.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::app {

ops::OpsParams ops_params(const plan::ScenarioSpec& sc, const OpsOptions& opt) {
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
  return p;
}

OpsReport run_ops(const plan::ScenarioSpec& sc, const OpsOptions& opt) {
  OpsReport r;
  r.scenario = sc.name;
  r.params = ops_params(sc, opt);
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
