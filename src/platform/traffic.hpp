// Traffic classes -> InfiniBand service levels -> virtual lanes with arbitration weights.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <vector>

#include "sched/schedule.hpp"

namespace ffsim::platform {

/// How the fabric isolates traffic classes (arXiv 2408.14158 Sec. VI-A). With isolation, each
/// class rides the virtual lane its service level maps to, and concurrent flows share bandwidth in
/// proportion to their lanes' arbitration weights (work-conserving: a lane alone takes the whole
/// link). Without isolation every class shares one lane equally.
struct TrafficConfig {
  bool isolation = false;
  std::array<int, sched::kTrafficClasses> service_level{0, 0, 0, 0};  ///< by TrafficClass
  std::array<int, 16> lane_of_sl{};                                   ///< SL -> VL
  std::vector<double> lane_weight{1.0};                               ///< by VL
  /// The weight a flow of class `c` shares bandwidth with (1 without isolation).
  [[nodiscard]] double weight(sched::TrafficClass c) const;
};

}  // namespace ffsim::platform
