// ThreadPool: generation-counted fork-join over persistent workers, NUMA-bound when nodes > 1;
// the caller polls for the workers before it sleeps (see thread_pool.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/thread_pool.hpp"

#include "ffsim/hfreduce/cpu.hpp"
#include "ffsim/hfreduce/error.hpp"
#include "poll.hpp"

#ifdef FFSIM_HFREDUCE_HAS_NUMA
#include <numa.h>
#endif

namespace ffsim::hfreduce {

namespace {

constexpr std::uint64_t kTaskBits = 16;
constexpr std::uint64_t kTaskMask = (std::uint64_t{1} << kTaskBits) - 1;

using detail::poll;

}  // namespace

ThreadPool::ThreadPool(int threads, std::chrono::microseconds spin) : threads_(threads), spin_(spin) {
  FFSIM_KERNEL_CHECK(threads >= 1, "a thread pool needs at least 1 participant, got ", threads);
  FFSIM_KERNEL_CHECK(static_cast<std::uint64_t>(threads) <= kTaskMask, "a thread pool takes at most ", kTaskMask,
                     " participants, got ", threads);
  FFSIM_KERNEL_CHECK(spin.count() >= 0, "a thread pool's polling time must be >= 0 us, got ", spin.count());
  workers_.reserve(static_cast<std::size_t>(threads - 1));
  for (int participant = 1; participant < threads; ++participant) {
    workers_.emplace_back([this, participant] { worker_main(participant); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_.store(true, std::memory_order_release);
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
  // No worker is inside a task here (the last run returned once every one of its tasks had), so
  // task_ and pending_ are the caller's until the new state is published.
  task_ = &task;
  pending_.store(tasks - 1, std::memory_order_relaxed);
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    error_ = nullptr;
    const std::uint64_t generation = (state_.load(std::memory_order_relaxed) >> kTaskBits) + 1;
    state_.store((generation << kTaskBits) | static_cast<std::uint64_t>(tasks), std::memory_order_release);
    wake = sleepers_ > 0;  // a worker that sleeps has counted itself under this mutex first
  }
  if (wake) start_cv_.notify_all();
  std::exception_ptr own_error;
  try {
    task(0);
  } catch (...) {
    own_error = std::current_exception();
  }
  const auto done = [this] { return pending_.load(std::memory_order_acquire) == 0; };
  std::unique_lock lock(mutex_, std::defer_lock);
  if (poll(done, spin_)) {
    lock.lock();  // for error_
  } else {
    lock.lock();
    caller_sleeping_ = true;
    done_cv_.wait(lock, done);
    caller_sleeping_ = false;
  }
  task_ = nullptr;
  if (own_error) std::rethrow_exception(own_error);
  if (error_) std::rethrow_exception(error_);
}

void ThreadPool::worker_main(int participant) {
#ifdef FFSIM_HFREDUCE_HAS_NUMA
  const int nodes = numa_node_count();
  if (nodes > 1) (void)numa_run_on_node(participant * nodes / size());
#endif
  std::uint64_t seen = 0;  // the generation last seen
  const auto ready = [&] {
    return stop_.load(std::memory_order_acquire) || (state_.load(std::memory_order_acquire) >> kTaskBits) != seen;
  };
  while (true) {
    if (!ready()) {  // the workers do not poll (thread_pool.hpp)
      std::unique_lock lock(mutex_);
      ++sleepers_;
      start_cv_.wait(lock, ready);
      --sleepers_;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    const std::uint64_t state = state_.load(std::memory_order_acquire);
    seen = state >> kTaskBits;
    // A worker that is not in this set may skip a generation (the caller does not wait for it);
    // one that is holds the caller in run() until it is done, so task_ stays this set's.
    if (participant >= static_cast<int>(state & kTaskMask)) continue;
    try {
      (*task_)(participant);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // The caller reads pending_ under the mutex before it sleeps: taking it here means it either
      // saw 0 or is waiting and is woken.
      std::lock_guard lock(mutex_);
      if (caller_sleeping_) done_cv_.notify_one();
    }
  }
}

}  // namespace ffsim::hfreduce
