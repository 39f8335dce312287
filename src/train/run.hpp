// Simulating training steps: one step at a GPU count (time, breakdown, throughput, model FLOPs
// utilisation), a scaling sweep over GPU counts, and the timeline of a step for a trace.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include "eval/engine.hpp"
#include "sched/timeline.hpp"
#include "train/workload.hpp"

namespace ffsim::train {

/// Where steps run: the platform (the whole cluster; a step uses its first GPUs), the engine of
/// the step schedule, and the collective durations (cached across steps).
struct StepEnv {
  const platform::Platform& platform;
  eval::Engine& engine;
  CollectiveCosts& costs;
  /// Each collective as its algorithm's whole schedule inside the step instead of a timed op.
  bool emit_collectives = false;
  /// The engine of the compute-only run of each step (bubble and exposed communication): the
  /// fluid engine, given by the application layer; nullptr: `engine`.
  eval::Engine* reference = nullptr;
  /// Steps on the workload's closed form (Workload::estimate; no schedule, no engine run). Kinds
  /// that build no schedules always run on it.
  bool closed_form = false;
};

struct StepResult {
  int gpus = 0;
  std::string layout;
  int data_parallel = 0;
  double step_s = 0;         ///< simulated time of one step
  /// Breakdown of step_s on the busiest GPU: its kernels, the idle time a pipeline has even with
  /// free communication (bubble), and what communication adds on top (exposed communication).
  double compute_s = 0;
  double bubble_s = 0;
  double exposed_comm_s = 0;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double efficiency = 1;     ///< samples/s per GPU against the smallest GPU count of the sweep
  double model_flops = 0;    ///< forward + backward FLOPs of one step (whole job)
  double tflops_per_gpu = 0; ///< model FLOPs per second per GPU, in TFLOPS
  double mfu = 0;            ///< model FLOPs utilisation against the GPU's peak at the precision
  double of_gemm = 0;        ///< the same against its GEMM rate (measured when published)
  bool gemm_measured = false;
  double memory_bytes = 0;   ///< per-GPU memory estimate
  bool fits = true;          ///< memory_bytes within the GPU's memory
  std::size_t ops = 0;       ///< operations in the simulated step schedule
  std::size_t simulated_gpus = 0;
  StaggerEdge stagger;  ///< the plan's (pipelines 0 where there is no stagger)
};

/// A step's timeline: the trace model of sched/timeline.hpp (report/trace.hpp writes it).
using TraceEvent = sched::TraceEvent;
using StepTrace = sched::Trace;

/// The timeline of a built and simulated step: one event per op and track (sync ops excluded).
[[nodiscard]] StepTrace trace_of(const StepBuilder& b, const eval::Result& res, std::string title);

/// Simulates one step at `gpus` GPUs. `full` builds every GPU's ops (no symmetry shortcut).
/// With `trace`, fills the step's timeline.
[[nodiscard]] StepResult simulate_step(const WorkloadSpec& w, const StepEnv& env, int gpus, bool full = false,
                                       StepTrace* trace = nullptr);

/// With parallel collective runs (CollectiveCosts::parallel()): simulates at once every distinct
/// collective that the steps at these GPU counts need, so that simulate_step finds them cached.
/// Nothing to do otherwise. Throws what building a step throws (ValueError for a count the
/// workload cannot run), for the first such count. Returns, per GPU count, its share of the wall
/// time the simulations took: the elapsed time shared out in proportion to the time of the
/// collectives that count was the first to need (one a later count shares is simulated once, for
/// the first), so that the shares add up to the elapsed time; zeros when there was nothing to do
/// (simulate_step then simulates them itself, in its own time).
std::vector<double> prepare_steps(const WorkloadSpec& w, const StepEnv& env, const std::vector<int>& gpus,
                                  bool full = false);

/// Simulates each GPU count and sets efficiencies against the first (smallest) one.
[[nodiscard]] std::vector<StepResult> simulate_scaling(const WorkloadSpec& w, const StepEnv& env,
                                                       const std::vector<int>& gpus);

/// Efficiency of each row against row 0: (samples/s per GPU) / (samples/s per GPU of row 0).
void set_efficiencies(std::vector<StepResult>& rows);

}  // namespace ffsim::train
