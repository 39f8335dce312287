// Evaluating a schedule on a platform: the result every engine returns, the Engine interface, the fluid engine.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "sched/schedule.hpp"

namespace ffsim::eval {

/// What limited a flow's rate for most of its life.
inline constexpr std::uint32_t kLimitNone = std::numeric_limits<std::uint32_t>::max();      ///< no flow (latency only)
inline constexpr std::uint32_t kLimitRateCap = std::numeric_limits<std::uint32_t>::max() - 1;  ///< its own rate cap

struct OpTiming {
  double start = -1;  ///< seconds
  double end = -1;    ///< seconds
  std::uint32_t limiter = kLimitNone;  ///< resource id, kLimitRateCap or kLimitNone
};

/// How a resource was used over the run.
struct ResourceUse {
  double bytes = 0;           ///< amount carried (bytes; GPU-seconds for compute)
  double saturated_time = 0;  ///< seconds during which it was fully used
};

struct Result {
  std::string engine;
  double makespan = 0;
  std::vector<OpTiming> ops;       ///< by OpId
  std::vector<ResourceUse> usage;  ///< by resource id (empty when the engine does not track it)
  /// The resource saturated for the longest time (kLimitNone if none ever was).
  [[nodiscard]] std::uint32_t bottleneck() const;
};

/// An evaluator of schedules: the max-min fluid model below, or SimGrid's replay (src/sim). The
/// engines are registered, with what each can do, by the application layer (src/app/engines.hpp);
/// domain code takes an Engine& or an EngineFactory and never names one.
class Engine {
public:
  virtual ~Engine() = default;
  /// Runs `s` on `p`. Throws SimulationError for a schedule that cannot finish.
  [[nodiscard]] virtual Result run(const sched::Schedule& s, const platform::Platform& p) = 0;
  /// Whether it runs replicated transfers (sched::Schedule::replicate) as one flow each; an engine
  /// that does not is given the copies apart (coll::Options::replicas) and refuses replicas.
  [[nodiscard]] virtual bool runs_replicas() const { return false; }
};

/// Makes a fresh engine (one per thread where runs go side by side).
using EngineFactory = std::function<std::unique_ptr<Engine>()>;

/// The max-min fluid evaluator: the same sharing model as SimGrid's CM02 (weighted max-min over
/// every resource of a flow's path, per-flow rate caps, a fixed latency before data moves), solved
/// event by event, only over the connected set of flows that a start or an end touches.
/// Lazy constraints (the default): resources left unsaturated by a solve drop out of the
/// constraint set until a check finds them over capacity, which keeps the connected sets small;
/// the allocation is the same max-min one (tests/unit/eval_fluid_lazy_test.cpp compares the two).
/// Merged flows (the default): identical flows of one operation (a reduce's reads of several
/// inputs in one buffer) run as one flow of their summed weight and amount, which has the same
/// rates and end times (tests/unit/eval_fluid_merge_test.cpp compares against unmerged flows).
/// The solve runs on groups of flows it cannot tell apart (the same resources in the constraint
/// set and the same cap per weight), kept between solves; only the members of groups whose level
/// changed get new rates and end events.
/// Partial solves (the default): groups last solved below the level that an instant's starts and
/// ends can reach keep their rates and only the rest is solved again, which gives the same
/// allocation (tests/unit/eval_fluid_partial_test.cpp compares every op against the full solve).
class FluidEngine final : public Engine {
public:
  explicit FluidEngine(bool lazy_constraints = true, bool merge_identical = true, bool partial_solves = true)
      : lazy_(lazy_constraints), merge_(merge_identical), partial_(partial_solves) {}
  [[nodiscard]] Result run(const sched::Schedule& s, const platform::Platform& p) override;
  /// Replicated transfers run as one flow on their replica path (platform::Router::replica_path_id);
  /// a flow that crosses a resource one of them mirrors or stands for is refused (SimulationError),
  /// and at the end each mirrored resource's usage is the one that stood for it.
  [[nodiscard]] bool runs_replicas() const override { return true; }

private:
  bool lazy_;
  bool merge_;
  bool partial_;
};

}  // namespace ffsim::eval
