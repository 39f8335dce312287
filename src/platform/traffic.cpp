// Traffic classes -> service levels -> virtual lanes.
// SPDX-License-Identifier: Apache-2.0
#include "platform/traffic.hpp"

namespace ffsim::platform {

double TrafficConfig::weight(sched::TrafficClass c) const {
  if (!isolation) return 1.0;
  const int sl = service_level[static_cast<std::size_t>(c)];
  return lane_weight[static_cast<std::size_t>(lane_of_sl[static_cast<std::size_t>(sl)])];
}

}  // namespace ffsim::platform
