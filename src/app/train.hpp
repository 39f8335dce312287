// The `train` service: what a training step runs on (the scenario's platform, the collective
// library's tuning, the chosen engine, the collective costs), built from a scenario and --engine.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "app/engines.hpp"
#include "coll/collective.hpp"
#include "config/catalog.hpp"
#include "plan/scenario.hpp"
#include "train/collectives.hpp"
#include "train/run.hpp"

namespace ffsim::app {

/// Steps of one cluster: pass env() to train::simulate_step and friends. `threads` > 1 runs a
/// step's distinct collectives side by side when the engine is safe on threads and the method
/// simulates; the compute-only run of each step is on the fluid engine.
class StepSession {
public:
  StepSession(const plan::ScenarioSpec& sc, const config::Catalog& cat, const EngineChoice& engine,
              train::CollectiveCosts::Method method, bool emit_collectives, int threads);
  StepSession(const StepSession&) = delete;
  StepSession& operator=(const StepSession&) = delete;
  [[nodiscard]] const train::StepEnv& env() const { return *env_; }
  [[nodiscard]] const coll::LibraryParams& library() const { return lib_; }
  [[nodiscard]] const platform::Platform& platform() const { return *platform_; }

private:
  std::unique_ptr<platform::Platform> platform_;
  coll::LibraryParams lib_;
  std::unique_ptr<eval::Engine> engine_, reference_;
  std::unique_ptr<train::CollectiveCosts> costs_;
  std::unique_ptr<train::StepEnv> env_;
};

}  // namespace ffsim::app
