// Chrome/Perfetto trace export.
// SPDX-License-Identifier: Apache-2.0
#include "report/trace.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/format.hpp"
#include "report/json_writer.hpp"

namespace ffsim::report {

namespace {

struct Placed {
  const sched::TraceEvent* e;
  int pid;
  int tid;
};

}  // namespace

void write_chrome_trace(std::ostream& os, const sched::Trace& t) {
  // Group events by (node, lane), in a deterministic order.
  std::map<std::pair<int, std::string>, std::vector<const sched::TraceEvent*>> lanes;
  for (const auto& e : t.events) lanes[{e.node, e.lane}].push_back(&e);
  std::vector<Placed> placed;
  struct Thread {
    int pid, tid;
    std::string name;
  };
  std::vector<Thread> threads;
  std::map<int, int> next_tid;
  std::map<std::pair<int, std::string>, int> first_tid;  // a lane's first sub-lane (its instants go there)
  for (auto& [key, evs] : lanes) {
    std::stable_sort(evs.begin(), evs.end(), [](const sched::TraceEvent* a, const sched::TraceEvent* b) {
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
        if (k == 0) first_tid[key] = tid;
      } else {
        lane_end[k] = std::max(lane_end[k], e->end);
      }
      placed.push_back({e, key.first, lane_tid[k]});
    }
  }
  // Lanes with instants only get their thread after the others, in (node, lane) order.
  std::map<std::pair<int, std::string>, std::vector<const sched::TraceInstant*>> instant_lanes;
  for (const auto& e : t.instants) instant_lanes[{e.node, e.lane}].push_back(&e);
  for (const auto& [key, evs] : instant_lanes) {
    (void)evs;
    if (first_tid.count(key) > 0) continue;
    const int tid = next_tid[key.first]++;
    first_tid[key] = tid;
    threads.push_back({key.first, tid, key.second});
  }
  std::map<int, std::string> process_names(t.process_names.begin(), t.process_names.end());
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
    const auto named = process_names.find(node);
    w.field("name", named != process_names.end() ? named->second : "node " + std::to_string(node));
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
    // dur is the difference of the scaled times, so that ts + dur is the end's ts (exactly where
    // Sterbenz's lemma holds: an event that ends where the next begins does not overlap it by a
    // rounding; (end - start) x 1e6 overlapped by up to 1.5e-8 us, 2,198 pairs in a MoE step).
    const double ts = p.e->start * 1e6, te = p.e->end * 1e6;
    w.field("ts", ts);
    w.field("dur", te - ts);
    w.field("pid", p.pid);
    w.field("tid", p.tid);
    if (!p.e->detail.empty()) {
      w.key("args");
      w.begin_object();
      w.field("detail", p.e->detail);
      w.end_object();
    }
    w.end_object();
  }
  // Instants in the order given (a failure's time order), each on its lane's first sub-lane.
  for (const auto& e : t.instants) {
    w.begin_object();
    w.field("name", e.name);
    w.field("cat", e.category);
    w.field("ph", "i");
    w.field("s", "t");
    w.field("ts", e.t * 1e6);
    w.field("pid", e.node);
    w.field("tid", first_tid.at({e.node, e.lane}));
    if (!e.detail.empty()) {
      w.key("args");
      w.begin_object();
      w.field("detail", e.detail);
      w.end_object();
    }
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

sched::Trace schedule_trace(const sched::Schedule& s, const eval::Result& r, const platform::Platform& p,
                                std::string title) {
  using sched::Place;
  using sched::PlaceKind;
  const hw::NodeSpec& node = p.cluster().node;
  sched::Trace t;
  t.title = std::move(title);
  // Storage nodes get processes after the GPU nodes.
  auto pid = [&](const Place& x) { return x.storage ? p.cluster().nodes + x.node : x.node; };
  auto socket = [&](const Place& x) {
    return x.storage ? std::string("storage") : node.sockets.at(static_cast<std::size_t>(x.index)).name;
  };
  // A GPU's lane by its name ("gpu3"), as the training steps name it (train::gpu_lane).
  auto gpu = [&](const Place& x) { return p.cluster().node.gpus.at(static_cast<std::size_t>(x.index)).name; };
  auto nic = [&](const Place& x) {
    if (x.kind == PlaceKind::Nic) return (x.storage ? std::string("storage nic") : node.nics.at(static_cast<std::size_t>(x.index)).name);
    const int k = p.nic_for(x);
    return x.storage || k < 0 ? std::string("nic") : node.nics.at(static_cast<std::size_t>(k)).name;
  };
  for (sched::OpId i = 0; i < s.size(); ++i) {
    const sched::Op& op = s.op(i);
    const eval::OpTiming& o = r.ops.at(i);
    if (op.kind == sched::OpKind::Delay || !(o.end > o.start)) continue;
    std::string name = s.tags().at(op.tag);
    if (name.empty()) name = sched::op_kind_name(op.kind);
    std::string detail;
    if (op.kind == sched::OpKind::Transfer) detail = fmt_bytes(Bytes(op.amount));
    if (op.kind == sched::OpKind::Reduce)  // an accumulator (kept in cache) counts among the inputs
      detail = op.accumulate ? std::to_string(op.inputs_end - op.inputs_begin - 1) + " x " + fmt_bytes(Bytes(op.amount)) +
                                   " added to an accumulator in cache"
                             : std::to_string(op.inputs_end - op.inputs_begin) + " x " + fmt_bytes(Bytes(op.amount)) + " summed";
    if (o.limiter == eval::kLimitRateCap) detail += ", limited by its own rate cap";
    else if (o.limiter != eval::kLimitNone) detail += ", limited by " + p.resource_name(o.limiter);
    auto add = [&](const Place& at, std::string lane, const char* category) {
      t.events.push_back(sched::TraceEvent{pid(at), std::move(lane), name, category, o.start, o.end, detail});
    };
    switch (op.kind) {
      case sched::OpKind::Compute: add(op.at, gpu(op.at), "compute"); break;
      case sched::OpKind::Reduce: add(op.at, socket(op.at) + " reducer", "reduce"); break;
      case sched::OpKind::Transfer: {
        const bool gpu_at = op.at.kind == PlaceKind::Gpu && !op.at.storage, gpu_to = op.to.kind == PlaceKind::Gpu && !op.to.storage;
        const bool remote = op.at.node != op.to.node || op.at.storage != op.to.storage;
        if (gpu_at) add(op.at, gpu(op.at) + " out", "transfer");
        if (gpu_to) add(op.to, gpu(op.to) + " in", "transfer");
        if (remote) {
          add(op.at, nic(op.at) + " out", "transfer");
          add(op.to, nic(op.to) + " in", "transfer");
        } else if (!gpu_at && !gpu_to) {  // host-only, inside a node
          if (op.at.kind == PlaceKind::Nic || op.to.kind == PlaceKind::Nic)
            add(op.at, nic(op.at.kind == PlaceKind::Nic ? op.at : op.to) + " dma", "transfer");
          else
            add(op.at, socket(op.to.kind == PlaceKind::Cpu ? op.to : op.at) + " memory", "transfer");
        }
        break;
      }
      case sched::OpKind::Delay: break;
    }
  }
  return t;
}

}  // namespace ffsim::report
