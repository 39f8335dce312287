// The timeline of `ffsim ops --trace`.
// SPDX-License-Identifier: Apache-2.0
#include "report/ops_trace.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <vector>

#include "core/format.hpp"

namespace ffsim::report {

namespace {

constexpr int kJobs = 0, kFailures = 1, kRepairs = 2, kLinks = 3;

std::string instance_name(const ops::OpsParams& p, std::size_t job, long long instance) {
  return p.jobs.at(job).name + " #" + std::to_string(instance);
}

}  // namespace

sched::Trace ops_trace(const ops::OpsParams& p, const ops::OpsResult& r, bool checkpoints, std::string title) {
  if (!r.timeline) throw std::logic_error("ops_trace: the result has no timeline (simulate with timeline = true)");
  const ops::Timeline& tl = *r.timeline;
  sched::Trace t;
  t.title = std::move(title);
  // A process without events is not written: "links" is in the trace only with link downs.
  t.process_names = {{kJobs, "jobs"}, {kFailures, "failures"}, {kRepairs, "repairs"}, {kLinks, "links"}};
  auto slice = [&t](int pid, const std::string& lane, std::string name, const char* cat, double b, double e,
                    std::string detail) {
    if (e > b) t.events.push_back({pid, lane, std::move(name), cat, b, e, std::move(detail)});
  };

  // Runs, by job, in the order their queue stays began (ties: instance, run): each goes to the
  // first slot of its job free at that time (a restart: its instance's slot when free), so that a
  // run's segments stay on one track.
  std::vector<const ops::RunRecord*> runs;
  runs.reserve(tl.runs.size());
  for (const auto& x : tl.runs) runs.push_back(&x);
  std::stable_sort(runs.begin(), runs.end(), [](const ops::RunRecord* a, const ops::RunRecord* b) {
    if (a->job != b->job) return a->job < b->job;
    if (a->queued_at != b->queued_at) return a->queued_at < b->queued_at;
    if (a->instance != b->instance) return a->instance < b->instance;
    return a->run < b->run;
  });
  std::vector<std::vector<double>> slot_end(p.jobs.size());
  std::map<std::pair<std::size_t, long long>, std::size_t> slot_of;  // an instance's last slot
  for (const ops::RunRecord* x : runs) {
    auto& ends = slot_end[x->job];
    std::size_t k = 0;
    const auto last = slot_of.find({x->job, x->instance});
    if (last != slot_of.end() && ends[last->second] <= x->queued_at) {
      k = last->second;  // a restart stays on its instance's track
    } else {
      while (k < ends.size() && ends[k] > x->queued_at) ++k;
      if (k == ends.size()) ends.push_back(0);
    }
    ends[k] = x->end;
    slot_of[{x->job, x->instance}] = k;
    const std::string lane = p.jobs[x->job].name + " (" + std::to_string(k + 1) + ")";
    const std::string name = instance_name(p, x->job, x->instance);
    slice(kJobs, lane, "queued", "queue", x->queued_at, x->start, name + ", run " + std::to_string(x->run));
    const double work_begin = x->start + x->restart_s;
    slice(kJobs, lane, "restart", "restart", x->start, work_begin, name + ", run " + std::to_string(x->run));
    // The rest after the work: lost (a failure) or a checkpoint under way (the horizon).
    const double work_end = x->how == ops::RunEnd::Finished ? x->end : std::max(work_begin, x->end - x->tail_s);
    std::string how;
    switch (x->how) {
      case ops::RunEnd::Finished: how = "finished"; break;
      case ops::RunEnd::Failed: how = "ended by " + p.failures.at(x->cause).name; break;
      case ops::RunEnd::Horizon: how = "running at the horizon"; break;
    }
    std::string detail = "run " + std::to_string(x->run) + ", " + how;
    if (x->interval_s > 0)
      detail += "; " + std::to_string(x->checkpoints) + (x->checkpoints == 1 ? " checkpoint" : " checkpoints") +
                " of " + fmt_time(Seconds(x->checkpoint_s)) + " every " + fmt_time(Seconds(x->interval_s)) + " of work";
    if (checkpoints && x->checkpoints > 0) {
      // Boundaries summed one after the other, so that each piece ends exactly where the next begins.
      double at = work_begin;
      for (long long i = 0; i < x->checkpoints && at < work_end; ++i) {
        const double w = std::min(work_end, at + x->interval_s), c = std::min(work_end, w + x->checkpoint_s);
        slice(kJobs, lane, name, "work", at, w, detail);
        slice(kJobs, lane, "checkpoint", "checkpoint", w, c, name + ", checkpoint " + std::to_string(i + 1));
        at = c;
      }
      slice(kJobs, lane, name, "work", at, work_end, detail);
    } else {
      slice(kJobs, lane, name, "work", work_begin, work_end, detail);
    }
    if (x->how == ops::RunEnd::Failed)
      slice(kJobs, lane, "lost: " + p.failures.at(x->cause).name, "lost", work_end, x->end,
            name + ": the work since its last checkpoint");
    else if (x->how == ops::RunEnd::Horizon)
      slice(kJobs, lane, "checkpoint", "checkpoint", work_end, x->end, name + ", under way at the horizon");
  }

  // Failures, in time order; a repair as a slice from the failure to the node's return.
  const int gpn = p.cluster.gpus_per_node;
  for (const auto& f : tl.failures) {
    const ops::FailureSpec& s = p.failures.at(f.process);
    std::string detail = s.unit == ops::FailureUnit::Gpu
                             ? "GPU " + std::to_string(f.unit) + " (node " + std::to_string(f.node) + ", slot " +
                                   std::to_string(f.unit % static_cast<std::uint64_t>(gpn)) + ")"
                         : s.unit == ops::FailureUnit::Node ? "node " + std::to_string(f.node)
                                                            : "the link of node " + std::to_string(f.node);
    if (f.on_down) {
      detail += ": its node was down, no effect";
    } else {
      if (f.ended.empty()) {
        detail += ": no job ran on it";
      } else {
        detail += ": ended ";
        for (std::size_t i = 0; i < f.ended.size(); ++i)
          detail += (i > 0 ? ", " : "") + instance_name(p, f.ended[i].first, f.ended[i].second);
      }
      if (f.repair_s > 0) detail += "; node " + std::to_string(f.node) + " down for " + fmt_time(Seconds(f.repair_s));
      if (f.down_s > 0) detail += "; its link down for " + fmt_time(Seconds(f.down_s));
    }
    t.instants.push_back({kFailures, s.name, s.name, "failure", f.t, detail});
    if (!f.on_down && f.repair_s > 0)
      slice(kRepairs, "nodes down", "node " + std::to_string(f.node), "repair", f.t,
            std::min(f.t + f.repair_s, r.horizon_s), s.name + ": repair of " + fmt_time(Seconds(f.repair_s)));
    // A link down as a slice from the failure to its own end (downs that overlap on one node are
    // the union of their slices, on tracks "links down #2", ...).
    if (!f.on_down && f.down_s > 0)
      slice(kLinks, "links down", "node " + std::to_string(f.node), "link_down", f.t,
            std::min(f.t + f.down_s, r.horizon_s), s.name + ": link down for " + fmt_time(Seconds(f.down_s)));
  }
  return t;
}

}  // namespace ffsim::report
