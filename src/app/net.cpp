// The `net` service.
// SPDX-License-Identifier: Apache-2.0
#include "app/net.hpp"

namespace ffsim::app {

plan::NetReport net_test(const std::string& name, const plan::ScenarioSpec& sc, const EngineChoice& engine,
                         const plan::NetOptions& opt) {
  const auto e = engine.make();
  const auto limits = engine.caps.limiters ? engine.make() : make_engine("fluid");
  return plan::run_net_test(name, sc, *e, *limits, engine.label, opt);
}

}  // namespace ffsim::app
