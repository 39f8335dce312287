// JSON -> the platform's parameters: a scenario's "traffic" section (platform/traffic.hpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "config/reader.hpp"
#include "platform/traffic.hpp"

namespace ffsim::config {

/// Parses a scenario's "traffic" section:
/// {"isolation": true, "service_levels": {"hfreduce": 1, "nccl": 2, "storage": 3, "other": 0},
///  "virtual_lanes": [{"service_levels": [0], "weight": 1}, {"service_levels": [1, 2], "weight": 4}, ...]}
/// Every class used must map to a service level (0..15) that exactly one lane carries; weights are
/// integers 1..255 as in InfiniBand VL arbitration tables.
[[nodiscard]] platform::TrafficConfig parse_traffic(const Reader& r);

}  // namespace ffsim::config
