// The `net` service: a microbenchmark of the simulated machine on the chosen engine.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "app/engines.hpp"
#include "plan/netbench.hpp"

namespace ffsim::app {

/// Runs net test `name` on `sc` with `engine`; limiters come from it when it reports them, else
/// from the fluid engine.
[[nodiscard]] plan::NetReport net_test(const std::string& name, const plan::ScenarioSpec& sc, const EngineChoice& engine,
                                       const plan::NetOptions& opt);

}  // namespace ffsim::app
