// The `train` service.
// SPDX-License-Identifier: Apache-2.0
#include "app/train.hpp"
#include "config/coll_reader.hpp"

namespace ffsim::app {

StepSession::StepSession(const plan::ScenarioSpec& sc, const config::Catalog& cat, const EngineChoice& engine,
                         train::CollectiveCosts::Method method, bool emit_collectives, int threads)
    : platform_(plan::make_platform(sc)),
      lib_(config::load_library_params(cat)),
      engine_(engine.make()),
      reference_(make_engine("fluid")) {
  // The closed form makes no engine (its factory gives none) and runs no schedule: the steps are
  // the workload's closed form, each collective its algorithm's estimate().
  const bool closed = !engine.caps.simulates;
  eval::Engine& e = engine_ ? *engine_ : *reference_;
  costs_ = std::make_unique<train::CollectiveCosts>(e, *platform_, lib_,
                                                    closed ? train::CollectiveCosts::Method::Estimate : method);
  // The fluid engine keeps no state between runs: a step's distinct collectives run at once, one
  // per thread (the times are the same as one after the other).
  if (engine.caps.parallel_safe && !closed) costs_->set_parallel(engine.factory(), threads);
  costs_->set_size_guard(engine.caps.bytes_per_op, plan::platform_size(sc.cluster, sc.fabric).bytes);
  env_ = std::make_unique<train::StepEnv>(
      train::StepEnv{*platform_, e, *costs_, emit_collectives && !closed, reference_.get(), closed});
}

}  // namespace ffsim::app
