// A persistent pool of worker threads that runs one static fork-join task set at a time.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ffsim::hfreduce {

/// size() participants: the calling thread (participant 0) plus size() - 1 persistent workers.
/// Task i always runs on participant i, so a partition of a buffer keeps landing on the same
/// thread (and, when libnuma reports more than one node, on the same node: worker i is bound to
/// node i * nodes / size()). Concurrent run() calls are serialised.
///
/// Waiting: the caller, once its own task is done, polls for the workers for up to `spin` (first
/// with the CPU's pause, then yielding its core to whatever else is runnable) before it sleeps on a
/// condition variable; the workers sleep as soon as they have nothing to do. A fork-join whose
/// caller sleeps pays a second wake-up, the caller's, after the workers' own: on the 2-vCPU VMs
/// these sessions measure on each took tens of microseconds (hfreduce-bench, 2-thread memcpy of
/// 288 KiB: 38-54 us sleeping, 7-8 us polling, where one thread takes 2.2 us; a 2-thread k = 8
/// fp32 reduce of 256 KiB 53-64 us -> 26-27 us; 2026-12-07, docs/hfreduce.md "The pool's waits").
/// Workers that poll too were measured and not kept: the pollers of a process's idle pools took
/// the vCPU from the working pool's threads (the bench's kernel against the plain loop, each with
/// its pool, at 2 threads and 256 KiB-4 MiB: 0.57-0.93 in a whole run, 0.84-1.05 with only the
/// caller polling).
class ThreadPool {
public:
  /// How long the caller polls for the workers before it sleeps (default; 0: sleep at once, as
  /// the pool did until 2026-12-07). Longer than the wake-ups measured above; the caller has
  /// nothing else to do meanwhile.
  static constexpr std::chrono::microseconds kDefaultSpin{100};

  /// threads >= 1 participants in all.
  explicit ThreadPool(int threads, std::chrono::microseconds spin = kDefaultSpin);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  int size() const noexcept { return threads_; }
  std::chrono::microseconds spin() const noexcept { return spin_; }

  /// Runs task(i) for i in [0, tasks), task i on participant i, and returns when all are done.
  /// tasks must be in [0, size()]. The first exception a task throws is rethrown here.
  void run(int tasks, const std::function<void(int)>& task);

private:
  void worker_main(int participant);

  const int threads_;
  const std::chrono::microseconds spin_;
  std::mutex run_mutex_;
  std::mutex mutex_;  // guards sleepers_, caller_sleeping_, error_, and the sleeping side of the atomics
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  // The task set: its generation (bits 16 and up) and its task count (the low 16 bits) in one
  // word, so that a worker reads the count of the generation it sees, never of a later one.
  std::atomic<std::uint64_t> state_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  int sleepers_ = 0;
  bool caller_sleeping_ = false;
  const std::function<void(int)>* task_ = nullptr;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

}  // namespace ffsim::hfreduce
