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
/// Waiting: a worker waiting for the next task set, and the caller waiting for the workers, poll
/// for up to `spin` (first with the CPU's pause, then yielding the core to whatever else is
/// runnable) before they sleep on a condition variable. A fork-join that finds its threads
/// asleep pays the kernel's wake-up of each, which on the 2-vCPU VMs these sessions measure on
/// took 30-55 us (hfreduce-bench, 2-thread memcpy of 18-72 KiB: 43-46 us where one thread takes
/// 0.13-0.6 us; models/measured/epyc-zen5-2c-vm-2026-12-0{6,7}.json), more than a reduce of a
/// 1 MiB chunk. OpenMP runtimes poll before sleeping for the same reason (libgomp's
/// GOMP_SPINCOUNT, Intel's KMP_BLOCKTIME).
class ThreadPool {
 public:
   /// How long a waiting participant polls before it sleeps (default; 0: sleep at once, as the
   /// pool did until 2026-12-07). Longer than the wake-ups measured above, short enough that a
   /// pool left idle gives its cores back within a tenth of a millisecond.
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
  std::mutex mutex_;  // guards sleepers_, caller_sleeping_, error_; the sleeping side of the atomics
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
