// Independent jobs on several threads.
// SPDX-License-Identifier: Apache-2.0
#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

namespace ffsim {

int hardware_threads() { return static_cast<int>(std::max(1U, std::thread::hardware_concurrency())); }

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& job) {
  std::vector<std::exception_ptr> err(n);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        job(i);
      } catch (...) {
        err[i] = std::current_exception();
      }
    }
  };
  const std::size_t extra = std::min(n, static_cast<std::size_t>(std::max(1, threads))) - (n > 0 ? 1 : 0);
  std::vector<std::thread> pool;
  pool.reserve(extra);
  for (std::size_t k = 0; k < extra; ++k) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (auto& e : err)
    if (e) std::rethrow_exception(e);
}

}  // namespace ffsim
