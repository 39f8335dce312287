// A timeline of simulated ops: the trace model that the training steps fill and report/ writes
// (Chrome/Perfetto). Plain data, below both: report/ knows no workload, train/ no writer.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ffsim::sched {

/// One event of a timeline (seconds).
struct TraceEvent {
  int node = 0;
  std::string lane;          ///< "gpu3", "gpu3 comm", "nic0", "cpu reducer"
  std::string name;
  std::string category;      ///< compute, transfer, collective
  double start = 0;
  double end = 0;
  std::string detail;        ///< optional ("4.00 MiB, limited by n0.cpu1.dram"): the event's args
};

/// A moment on a lane (a Chrome "i" event of thread scope): a failure on `ffsim ops`'s timeline.
struct TraceInstant {
  int node = 0;
  std::string lane;
  std::string name;
  std::string category;
  double t = 0;
  std::string detail;  ///< optional: the event's args
};

/// A titled timeline: a training step's, or a whole schedule's (`ffsim collective --trace`), or a
/// cluster's operations (`ffsim ops --trace`).
struct Trace {
  std::string title;
  std::vector<TraceEvent> events;
  std::vector<TraceInstant> instants;
  /// Names of the processes ("node" numbers) that are not nodes ("jobs", "failures"); the others
  /// are "node N".
  std::vector<std::pair<int, std::string>> process_names;
};

}  // namespace ffsim::sched
