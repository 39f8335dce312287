// The simulated machine as one object: its resources (machine.hpp), the router that finds and
// shares the path between any two places (router.hpp), the lowering of schedule operations into
// flows that both engines run (lower.hpp) and the closed-form loads (loads.hpp). A facade over
// those parts; every const member may be called from any number of threads at once.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "platform/loads.hpp"
#include "platform/lower.hpp"
#include "platform/machine.hpp"
#include "platform/router.hpp"
#include "hw/specs.hpp"
#include "platform/traffic.hpp"
#include "sched/schedule.hpp"
#include "topo/fabric.hpp"

namespace ffsim::platform {

class Platform : public Machine {
public:
  /// `fabric` may be null for single-node platforms (no NICs used).
  Platform(hw::ClusterSpec cluster, std::shared_ptr<const topo::Fabric> fabric, TrafficConfig traffic,
           PlatformOptions opts = {})
      : Machine(std::move(cluster), std::move(fabric), std::move(traffic), opts), router_(*this) {}
  // Shared by reference between threads: no copies (the router refers to this machine).
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  using PairLoads = platform::PairLoads;

  [[nodiscard]] const Machine& machine() const { return *this; }
  [[nodiscard]] const Router& router() const { return router_; }
  /// The path id between two places (computed once, then shared).
  [[nodiscard]] std::uint32_t path_id(const sched::Place& from, const sched::Place& to) const {
    return router_.path_id(from, to);
  }
  [[nodiscard]] const Path& path(std::uint32_t id) const { return router_.path(id); }
  [[nodiscard]] std::size_t path_count() const { return router_.path_count(); }
  /// See platform::all_pairs_loads.
  [[nodiscard]] PairLoads all_pairs_loads(const std::vector<sched::Place>& ranks, double bytes) const {
    return platform::all_pairs_loads(*this, router_, ranks, bytes);
  }
  /// Lowers an operation of `s` into flows (replaces out).
  void lower(const sched::Schedule& s, sched::OpId op, Lowered& out) const {
    platform::lower(*this, router_, s, op, out);
  }

private:
  Router router_;
};

}  // namespace ffsim::platform
