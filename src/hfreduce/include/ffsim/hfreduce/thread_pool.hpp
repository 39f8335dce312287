// A persistent pool of worker threads that runs one static fork-join task set at a time.
// SPDX-License-Identifier: Apache-2.0
#pragma once

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
class ThreadPool {
 public:
  /// threads >= 1 participants in all.
  explicit ThreadPool(int threads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  int size() const noexcept { return threads_; }

  /// Runs task(i) for i in [0, tasks), task i on participant i, and returns when all are done.
  /// tasks must be in [0, size()]. The first exception a task throws is rethrown here.
  void run(int tasks, const std::function<void(int)>& task);

 private:
  void worker_main(int participant);

  const int threads_;
  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  std::uint64_t generation_ = 0;
  int tasks_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  const std::function<void(int)>* task_ = nullptr;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

}  // namespace ffsim::hfreduce
