// JSON -> traffic classes, service levels and virtual lanes.
// SPDX-License-Identifier: Apache-2.0
#include "config/platform_reader.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace ffsim::config {

platform::TrafficConfig parse_traffic(const Reader& r) {
  platform::TrafficConfig t;
  t.isolation = r.boolean("isolation");
  std::array<bool, sched::kTrafficClasses> set{};
  if (auto sls = r.optional_child("service_levels")) {
    for (const auto& key : sls->keys()) {
      sched::TrafficClass c;
      try {
        c = sched::class_from_name(key);
      } catch (const ValueError& e) {
        sls->fail(e.what());
      }
      t.service_level[static_cast<std::size_t>(c)] = static_cast<int>(sls->integer(key, 0, 15));
      set[static_cast<std::size_t>(c)] = true;
    }
    sls->finish();
  }
  std::array<int, 16> lane_of_sl;
  lane_of_sl.fill(-1);
  if (auto lanes = r.optional_child("virtual_lanes")) {
    t.lane_weight.clear();
    const auto items = lanes->elements("virtual lanes");
    if (items.empty() || items.size() > 15) lanes->fail("expected 1 to 15 virtual lanes, got " + std::to_string(items.size()));
    for (std::size_t v = 0; v < items.size(); ++v) {
      const Reader& lane = items[v];
      t.lane_weight.push_back(static_cast<double>(lane.integer("weight", 1, 255)));
      for (const auto& s : lane.child("service_levels", "an array of service levels 0..15").elements("service levels")) {
        const auto sl = static_cast<std::size_t>(s.as_integer(0, 15));
        if (lane_of_sl[sl] >= 0)
          s.fail("service level " + std::to_string(sl) + " is already carried by virtual lane " + std::to_string(lane_of_sl[sl]));
        lane_of_sl[sl] = static_cast<int>(v);
      }
      lane.finish();
    }
  } else if (t.isolation) {
    r.fail("missing required key \"virtual_lanes\" (isolation needs lanes with arbitration weights)");
  }
  if (t.isolation) {
    for (int c = 0; c < sched::kTrafficClasses; ++c) {
      const auto cls = static_cast<sched::TrafficClass>(c);
      if (!set[static_cast<std::size_t>(c)])
        r.child("service_levels", "a service level for every traffic class")
            .fail(std::string("missing service level for traffic class \"") + sched::class_name(cls) + "\"");
      const int sl = t.service_level[static_cast<std::size_t>(c)];
      if (lane_of_sl[static_cast<std::size_t>(sl)] < 0)
        r.child("virtual_lanes").fail("no virtual lane carries service level " + std::to_string(sl) + " (traffic class \"" +
                                      sched::class_name(cls) + "\")");
    }
    for (std::size_t i = 0; i < 16; ++i) t.lane_of_sl[i] = std::max(lane_of_sl[i], 0);
  } else {
    t.lane_weight = {1.0};
    t.lane_of_sl.fill(0);
  }
  r.finish();
  return t;
}

}  // namespace ffsim::config
