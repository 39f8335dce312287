// Chrome/Perfetto trace export.
// SPDX-License-Identifier: Apache-2.0
#include "report/trace.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "report/json_writer.hpp"

namespace ffsim::report {

namespace {

struct Placed {
  const train::TraceEvent* e;
  int pid;
  int tid;
};

}  // namespace

void write_chrome_trace(std::ostream& os, const train::StepTrace& t) {
  // Group events by (node, lane), in a deterministic order.
  std::map<std::pair<int, std::string>, std::vector<const train::TraceEvent*>> lanes;
  for (const auto& e : t.events) lanes[{e.node, e.lane}].push_back(&e);
  std::vector<Placed> placed;
  struct Thread {
    int pid, tid;
    std::string name;
  };
  std::vector<Thread> threads;
  std::map<int, int> next_tid;
  for (auto& [key, evs] : lanes) {
    std::stable_sort(evs.begin(), evs.end(), [](const train::TraceEvent* a, const train::TraceEvent* b) {
      return a->start != b->start ? a->start < b->start : a->end > b->end;
    });
    // First fit: an event goes to the first sub-lane whose last event has ended.
    std::vector<double> lane_end;
    std::vector<int> lane_tid;
    for (const auto* e : evs) {
      std::size_t k = 0;
      while (k < lane_end.size() && lane_end[k] > e->start) ++k;
      if (k == lane_end.size()) {
        lane_end.push_back(e->end);
        const int tid = next_tid[key.first]++;
        lane_tid.push_back(tid);
        threads.push_back({key.first, tid, k == 0 ? key.second : key.second + " #" + std::to_string(k + 1)});
      } else {
        lane_end[k] = std::max(lane_end[k], e->end);
      }
      placed.push_back({e, key.first, lane_tid[k]});
    }
  }
  JsonWriter w(os);
  w.begin_object();
  w.key("traceEvents");
  w.begin_array();
  for (const auto& [node, n] : next_tid) {
    (void)n;
    w.begin_object();
    w.field("name", "process_name");
    w.field("ph", "M");
    w.field("pid", node);
    w.key("args");
    w.begin_object();
    w.field("name", "node " + std::to_string(node));
    w.end_object();
    w.end_object();
  }
  for (const auto& th : threads) {
    w.begin_object();
    w.field("name", "thread_name");
    w.field("ph", "M");
    w.field("pid", th.pid);
    w.field("tid", th.tid);
    w.key("args");
    w.begin_object();
    w.field("name", th.name);
    w.end_object();
    w.end_object();
  }
  for (const auto& p : placed) {
    w.begin_object();
    w.field("name", p.e->name);
    w.field("cat", p.e->category);
    w.field("ph", "X");
    w.field("ts", p.e->start * 1e6);
    w.field("dur", (p.e->end - p.e->start) * 1e6);
    w.field("pid", p.pid);
    w.field("tid", p.tid);
    w.end_object();
  }
  w.end_array();
  w.field("displayTimeUnit", "ms");
  w.key("otherData");
  w.begin_object();
  w.field("title", t.title);
  w.end_object();
  w.end_object();
  os << '\n';
}

}  // namespace ffsim::report
