// Closed-form load helpers: what many flows at once put on each resource, without a path per flow.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <limits>
#include <vector>

#include "platform/machine.hpp"
#include "platform/router.hpp"
#include "sched/schedule.hpp"

namespace ffsim::platform {

/// The load of every ordered pair of ranks at once (all_pairs_loads).
struct PairLoads {
  std::vector<double> load;                                       ///< bytes by resource id (resource_count() entries)
  double min_rate_cap = std::numeric_limits<double>::infinity();  ///< the smallest path rate cap
  bool any_local = false, any_net = false;                        ///< pairs inside a node / between nodes exist
  double max_net_latency = 0;  ///< largest path latency between nodes (inside a node NCCL's hop latency holds)
};

/// What every ordered pair (a, b), a != b, of `ranks` moving `bytes` from a to b at once puts on
/// each resource (an alltoall's traffic), without a path per pair: the sender's and the
/// receiver's sides are counted once per rank (and destination plane) and the fabric once per
/// pair of NICs. The loads equal the sum over the pairs' paths up to the order of additions
/// (tests/unit/platform_all_pairs_test.cpp); latencies are the largest of any pair's path.
[[nodiscard]] PairLoads all_pairs_loads(const Machine& m, const Router& r, const std::vector<sched::Place>& ranks,
                                        double bytes);

}  // namespace ffsim::platform
