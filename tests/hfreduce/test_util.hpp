// Helpers of the hfreduce tests: typed element access, integer-valued patterns, rank threads.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "ffsim/hfreduce/dtype.hpp"

namespace ffsim::hfreduce::test {

inline constexpr DType kAllDtypes[] = {DType::F32, DType::BF16, DType::F16};

/// Reads element i of a dtype buffer as fp32 (exact).
inline float get(DType dtype, const void* data, std::size_t i) {
  if (dtype == DType::F32) {
    float value;
    std::memcpy(&value, static_cast<const std::byte*>(data) + 4 * i, 4);
    return value;
  }
  std::uint16_t bits;
  std::memcpy(&bits, static_cast<const std::byte*>(data) + 2 * i, 2);
  return dtype == DType::BF16 ? bf16_to_float(BFloat16{bits}) : half_to_float(Float16{bits});
}

/// Writes value (rounded to nearest even) as element i of a dtype buffer.
inline void put(DType dtype, void* data, std::size_t i, float value) {
  if (dtype == DType::F32) {
    std::memcpy(static_cast<std::byte*>(data) + 4 * i, &value, 4);
    return;
  }
  const std::uint16_t bits = dtype == DType::BF16 ? float_to_bf16(value).bits : float_to_half(value).bits;
  std::memcpy(static_cast<std::byte*>(data) + 2 * i, &bits, 2);
}

/// An integer in [-8, 8] that depends on the contributor and the index. Sums of up to 16 such
/// values stay within [-128, 128], which bf16 (8 significant bits), fp16 and fp32 hold exactly, so
/// any summation order gives the exact integer sum.
inline int pattern(int contributor, std::size_t i) {
  return static_cast<int>((static_cast<std::size_t>(contributor) * 7 + i * 13 + i / 5) % 17) - 8;
}

/// The exact sum of pattern(c, i) over contributors 0..n-1.
inline int pattern_sum(int contributors, std::size_t i) {
  int sum = 0;
  for (int c = 0; c < contributors; ++c) sum += pattern(c, i);
  return sum;
}

/// Bytes of a dtype buffer filled with pattern(contributor, i).
inline std::vector<std::byte> pattern_buffer(DType dtype, int contributor, std::size_t count) {
  std::vector<std::byte> bytes(count * dtype_size(dtype));
  for (std::size_t i = 0; i < count; ++i) put(dtype, bytes.data(), i, static_cast<float>(pattern(contributor, i)));
  return bytes;
}

/// Index of the first element that is not the exact pattern sum over contributors; count if none.
inline std::size_t first_wrong(DType dtype, const void* data, std::size_t count, int contributors) {
  for (std::size_t i = 0; i < count; ++i) {
    if (get(dtype, data, i) != static_cast<float>(pattern_sum(contributors, i))) return i;
  }
  return count;
}

/// Runs body(rank) on ranks threads and rethrows the first exception after all have joined.
inline void run_ranks(int ranks, const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace ffsim::hfreduce::test
