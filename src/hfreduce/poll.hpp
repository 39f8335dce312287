// Polling before sleeping: how the library's waiting callers spend the first microseconds of a
// wait (ThreadPool's caller, the host backend's synchronize). Internal to the library.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <thread>

namespace ffsim::hfreduce::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready` for up to `budget`: a few rounds of the CPU's pause (the other side is usually a
// few hundred nanoseconds away), then yielding the core between polls, so that a machine with more
// busy threads than cores runs them meanwhile. Returns whether `ready` became true; the caller
// sleeps (on its condition variable) where it did not.
template <class Ready>
bool poll(const Ready& ready, std::chrono::microseconds budget) {
  if (ready()) return true;
  if (budget.count() <= 0) return false;
  for (int i = 0; i < 256; ++i) {
    cpu_relax();
    if (ready()) return true;
  }
  const auto deadline = std::chrono::steady_clock::now() + budget;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
    if (ready()) return true;
  }
  return ready();
}

}  // namespace ffsim::hfreduce::detail
