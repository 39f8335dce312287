// ThreadPool: generation-counted fork-join over persistent workers, NUMA-bound when nodes > 1.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/thread_pool.hpp"

#include "ffsim/hfreduce/cpu.hpp"
#include "ffsim/hfreduce/error.hpp"

#ifdef FFSIM_HFREDUCE_HAS_NUMA
#include <numa.h>
#endif

namespace ffsim::hfreduce {

ThreadPool::ThreadPool(int threads) : threads_(threads) {
  FFSIM_KERNEL_CHECK(threads >= 1, "a thread pool needs at least 1 participant, got ", threads);
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  for (int participant = 1; participant < threads; ++participant) {
    workers_.emplace_back([this, participant] { worker_main(participant); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::run(int tasks, const std::function<void(int)>& task) {
  FFSIM_KERNEL_CHECK(tasks >= 0 && tasks <= size(), "tasks must be in [0, ", size(), "], got ", tasks);
  if (tasks == 0) return;
  std::lock_guard run_lock(run_mutex_);
  if (tasks == 1) {
    task(0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    task_ = &task;
    tasks_ = tasks;
    pending_ = tasks - 1;
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  std::exception_ptr own_error;
  try {
    task(0);
  } catch (...) {
    own_error = std::current_exception();
  }
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  task_ = nullptr;
  if (own_error) std::rethrow_exception(own_error);
  if (error_) std::rethrow_exception(error_);
}

void ThreadPool::worker_main(int participant) {
#ifdef FFSIM_HFREDUCE_HAS_NUMA
  const int nodes = numa_node_count();
  if (nodes > 1) (void)numa_run_on_node(participant * nodes / size());
#endif
  std::uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  while (true) {
    start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (participant >= tasks_) continue;
    const std::function<void(int)>* task = task_;
    lock.unlock();
    std::exception_ptr error;
    try {
      (*task)(participant);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !error_) error_ = error;
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

}  // namespace ffsim::hfreduce
