// Progress of long simulations on a terminal: what the engines report, what a command shows.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace ffsim::progress {

/// Whether a Meter listens (engines report nothing otherwise; one relaxed load).
[[nodiscard]] bool active();
/// A simulation starts with `ops` operations to run (the fluid engine: its schedule's size).
void add_work(std::uint64_t ops);
/// `ops` more operations of the runs started so far have started (engines report in batches).
void did_work(std::uint64_t ops);
/// A run measured by its simulated time (ops: the time reached over the horizon), in [0, 1]; once
/// reported, shown instead of the operations counted (see line).
void set_fraction(double fraction);

/// "[####....]": `width` marks, done / total of them filled (a full bar where total is 0).
[[nodiscard]] std::string bar(double done, double total, int width);

/// A time for people: "4.8 s", "52 s", "3 min 10 s", "2 h 5 min".
[[nodiscard]] std::string duration(double seconds);

/// The meter's delay before its first line: FFSIM_PROGRESS_DELAY_MS where set (tests set 0), else
/// `fallback`.
[[nodiscard]] std::chrono::milliseconds delay_from_env(std::chrono::milliseconds fallback);

/// What a Meter shows, from the counters: pure, so that tests can check the line.
/// `elapsed` seconds since the meter opened; `total` operations of the runs started, `done` of them;
/// `fraction` of a run's simulated time (0: none reported), which comes first where reported (ops
/// simulates its jobs' steps, then its horizon).
[[nodiscard]] std::string line(const std::string& label, double elapsed, std::uint64_t done, std::uint64_t total,
                               double fraction = 0);

/// Opened by a command that may run long (a simulated collective at scale, a training step, ops):
/// while it lives and `on` (stderr is a terminal and no --quiet), a thread of its own redraws one
/// line on `out` every 200 ms from `delay` on: a bar of the operations run against those of the
/// runs started so far, their rate and the ETA (a run that starts later adds to the total, so the
/// bar may step back), or the share of the simulated time a run reported (ops), or, before any
/// report, the elapsed time. Reports from forked children (the SimGrid engine's runs, ops) count.
/// Closed, it draws its last state and clears the line. Nothing at all when off; one meter at a
/// time. FFSIM_PROGRESS_DELAY_MS overrides `delay` (delay_from_env).
class Meter {
public:
  Meter(bool on, std::string label, std::ostream& out,
        std::chrono::milliseconds delay = std::chrono::milliseconds(500));
  ~Meter();
  Meter(const Meter&) = delete;
  Meter& operator=(const Meter&) = delete;
  /// What the line starts with ("simulating 10000 GPUs (1/1)").
  void set_label(std::string label);

private:
  void draw();
  bool on_;
  std::ostream& out_;
  std::chrono::milliseconds delay_;
  std::chrono::steady_clock::time_point t0_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false, shown_ = false;
  std::size_t width_ = 0;
  std::string label_;
  std::thread thread_;
};

}  // namespace ffsim::progress
