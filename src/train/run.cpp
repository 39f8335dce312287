// Simulating training steps.
// SPDX-License-Identifier: Apache-2.0
#include "train/run.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "core/error.hpp"

namespace ffsim::train {

namespace {

// Seconds of the workload's kernels per GPU (its compute ops' times alone; kernels of emitted
// collectives are communication), on the busiest GPU.
double busiest_compute(const StepBuilder& b) {
  std::map<std::uint64_t, double> per_gpu;
  const auto& s = b.schedule();
  for (sched::OpId i = 0; i < s.size(); ++i)
    if (b.category(i) == OpCategory::Compute) per_gpu[platform::place_key(s.op(i).at)] += s.op(i).amount;
  double m = 0;
  for (const auto& [k, v] : per_gpu) m = std::max(m, v);
  return m;
}

void trace_of_into(StepTrace& t, const StepBuilder& b, const eval::Result& res, std::string title) {
  t.title = std::move(title);
  t.events.clear();
  const auto& s = b.schedule();
  for (sched::OpId i = 0; i < s.size(); ++i) {
    const OpCategory c = b.category(i);
    if (c == OpCategory::Sync) continue;
    const auto& o = res.ops[i];
    for (const Track& k : b.tracks(i)) t.events.push_back(TraceEvent{k.node, k.lane, b.name(i), category_name(c), o.start, o.end, {}});
  }
}

}  // namespace

StepTrace trace_of(const StepBuilder& b, const eval::Result& res, std::string title) {
  StepTrace t;
  trace_of_into(t, b, res, std::move(title));
  return t;
}

std::vector<double> prepare_steps(const WorkloadSpec& w, const StepEnv& env, const std::vector<int>& gpus, bool full) {
  // Each step is built once to learn which collectives it needs (their times do not change what
  // it asks for); they run at once, and the real builds find them. Already known ones are not asked.
  std::vector<double> seconds(gpus.size(), 0.0);
  if (!env.costs.parallel() || env.emit_collectives || env.closed_form || !w.impl->builds_schedules()) return seconds;
  const hw::ClusterSpec& cluster = env.platform.cluster();
  // first[i]: the index of the first query the count gpus[i] recorded (its queries run to first[i + 1]).
  std::vector<std::size_t> first;
  env.costs.begin_recording();
  try {
    for (int g : gpus) {
      const std::string why = w.impl->check(w, g, cluster.gpus(), static_cast<int>(cluster.node.gpus.size()));
      if (!why.empty()) throw ValueError(why);
      first.push_back(env.costs.recorded());
      StepBuilder rec(env.platform, &env.costs, false, false);
      (void)w.impl->build(rec, w, g, full);
    }
  } catch (...) {
    env.costs.discard_recorded();
    throw;
  }
  first.push_back(env.costs.recorded());
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<double> wall = env.costs.run_recorded();
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The elapsed time shared out in proportion to each count's queries' own times: the rows add up
  // to the wall time, and one count gets all of it.
  double total = 0;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    for (std::size_t k = first[i]; k < first[i + 1]; ++k) seconds[i] += wall[k];
  for (const double x : seconds) total += x;
  if (total > 0)
    for (double& x : seconds) x *= elapsed / total;
  return seconds;
}

StepResult simulate_step(const WorkloadSpec& w, const StepEnv& env, int gpus, bool full, StepTrace* trace) {
  const hw::ClusterSpec& cluster = env.platform.cluster();
  const std::string why = w.impl->check(w, gpus, cluster.gpus(), static_cast<int>(cluster.node.gpus.size()));
  if (!why.empty()) throw ValueError(why);
  StepResult r;
  r.gpus = gpus;
  const GpuRates rates = rates_of(cluster.node.gpus.front().gpu, w.precision);
  // What every step reports from its plan and time.
  auto account = [&](const StepPlan& plan) {
    r.layout = plan.layout;
    r.data_parallel = plan.data_parallel;
    FFSIM_ASSERT(r.step_s > 0, "a training step of zero time");
    r.samples_per_s = plan.samples / r.step_s;
    r.tokens_per_s = r.samples_per_s * w.seq;
    r.model_flops = plan.model_flops;
    const double per_gpu = plan.model_flops / r.step_s / gpus;
    r.tflops_per_gpu = per_gpu / 1e12;
    r.mfu = per_gpu / rates.peak.si();
    r.of_gemm = per_gpu / rates.gemm.si();
    r.gemm_measured = rates.gemm_measured;
    r.memory_bytes = plan.memory_bytes;
    r.fits = plan.memory_bytes <= cluster.node.gpus.front().gpu.memory.si();
    r.simulated_gpus = plan.simulated.size();
    r.stagger = plan.stagger;
  };
  if (env.closed_form || !w.impl->builds_schedules()) {
    if (trace) throw ValueError("the closed form evaluates no schedule: there is no timeline to trace");
    const ClosedFormStep c = w.impl->estimate(w, env.platform, env.costs, gpus);
    r.step_s = c.step_s;
    r.compute_s = c.compute_s;
    r.bubble_s = c.bubble_s;
    r.exposed_comm_s = c.exposed_comm_s;
    account(c.plan);
    return r;
  }
  (void)prepare_steps(w, env, {gpus}, full);
  // The step with communication, on the chosen engine.
  StepBuilder b(env.platform, &env.costs, false, env.emit_collectives);
  const StepPlan plan = w.impl->build(b, w, gpus, full);
  const eval::Result res = env.engine.run(b.schedule(), env.platform);
  // The same step with free communication, on the reference engine (compute and delays only).
  StepBuilder free(env.platform, nullptr, true);
  (void)w.impl->build(free, w, gpus, full);
  eval::Engine& reference = env.reference ? *env.reference : env.engine;
  const double free_makespan = reference.run(free.schedule(), env.platform).makespan;

  r.step_s = res.makespan;
  r.compute_s = busiest_compute(b);
  // Differences below a nanosecond per second of step are rounding in the engines, not time.
  auto clean = [&](double v) { return v > 1e-9 * r.step_s ? v : 0.0; };
  r.bubble_s = clean(free_makespan - r.compute_s);
  r.exposed_comm_s = clean(r.step_s - std::max(free_makespan, r.compute_s));
  account(plan);
  r.ops = b.schedule().size();
  r.simulated_gpus = plan.simulated.size();
  if (trace) trace_of_into(*trace, b, res, w.model.name + " " + w.kind + " at " + std::to_string(gpus) + " GPUs (" + plan.layout + ")");
  return r;
}

void set_efficiencies(std::vector<StepResult>& rows) {
  if (rows.empty()) return;
  const double base = rows.front().samples_per_s / rows.front().gpus;
  for (auto& r : rows) r.efficiency = (r.samples_per_s / r.gpus) / base;
}

std::vector<StepResult> simulate_scaling(const WorkloadSpec& w, const StepEnv& env, const std::vector<int>& gpus) {
  std::vector<StepResult> rows;
  for (int g : gpus) rows.push_back(simulate_step(w, env, g));
  set_efficiencies(rows);
  return rows;
}

}  // namespace ffsim::train
