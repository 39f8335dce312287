// parallel_for: every job once, on several threads, errors as a run one after the other meets them.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/parallel.hpp"

using namespace ffsim;

TEST_CASE("core::parallel_for: each index once, whatever the thread count") {
  CHECK(hardware_threads() >= 1);
  for (std::size_t n : {0, 1, 2, 7, 100}) {
    for (int threads : {1, 2, 3, 8, 200}) {
      CAPTURE(n);
      CAPTURE(threads);
      std::vector<std::atomic<int>> seen(n);
      parallel_for(n, threads, [&](std::size_t i) { ++seen[i]; });
      for (std::size_t i = 0; i < n; ++i) CHECK(seen[i].load() == 1);
    }
  }
}

TEST_CASE("core::parallel_for: the lowest failing index's error, after every job ran") {
  // Jobs 3 and 8 of 10 fail; whichever thread meets them first, the error is job 3's, the one a
  // loop from 0 would have thrown, and the other jobs still ran (their effects are the caller's).
  for (int threads : {1, 2, 4}) {
    CAPTURE(threads);
    std::vector<std::atomic<int>> ran(10);
    try {
      parallel_for(10, threads, [&](std::size_t i) {
        ++ran[i];
        if (i == 8) throw std::runtime_error("job 8");
        if (i == 3) throw std::invalid_argument("job 3");
      });
      FAIL("no error");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()) == "job 3");
    }
    for (auto& r : ran) CHECK(r.load() == 1);
  }
}
