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
  costs_ = std::make_unique<train::CollectiveCosts>(*engine_, *platform_, lib_, method);
  // The fluid engine keeps no state between runs: a step's distinct collectives run at once, one
  // per thread (the times are the same as one after the other).
  if (engine.caps.parallel_safe) costs_->set_parallel(engine.factory(), threads);
  costs_->set_size_guard(engine.caps.bytes_per_op, plan::platform_size(sc.cluster, sc.fabric).bytes);
  env_ = std::make_unique<train::StepEnv>(train::StepEnv{*platform_, *engine_, *costs_, emit_collectives, reference_.get()});
}

}  // namespace ffsim::app
