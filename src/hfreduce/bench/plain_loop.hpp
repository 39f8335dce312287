// The plain loop hfreduce-bench measures the reduce kernels against (the "plain_loop" reference).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ffsim/hfreduce/dtype.hpp"
#include "ffsim/hfreduce/thread_pool.hpp"

namespace ffsim::hfreduce::bench {

/// out[i] = in[0][i] + in[1][i] + ... + in[k-1][i], written the way one would without SIMD
/// intrinsics: one loop over i with k a template parameter (1..16, picked at run time), each element
/// loaded, converted to float, added in input order and converted back, in a translation unit of its
/// own built with -O3 -march=native -ffp-contract=off (src/hfreduce/CMakeLists.txt). What the
/// compiler makes of that is the reference; its results equal reduce_sum's bit for bit (reduce_test).
/// bf16 converts with dtype.hpp's inline bf16_to_float / float_to_bf16, fp16 with the compiler's
/// _Float16 conversions (F16C). Ordinary stores only.
///
/// The output is split as Reducer splits it: into min(threads, bytes / min_bytes_per_thread) (at
/// least 1) contiguous parts on 64-byte boundaries, part i on participant i of a pool of its own
/// with `threads` participants; one part runs on the calling thread.
class PlainLoop {
 public:
  explicit PlainLoop(int threads, std::size_t min_bytes_per_thread = std::size_t{64} << 10);

  /// count elements of dtype; 1 <= in.size() <= 16, no partial overlap (as reduce_sum; unchecked).
  void sum(DType dtype, void* out, std::span<const void* const> in, std::size_t count);

  /// Reads `bytes` bytes of every input and nothing else: the exclusive or of their 64-bit words
  /// (a tail shorter than a word: each byte on its own, zero-extended), one accumulator per input,
  /// in the same translation unit and split over the threads as sum() (parts of whole 64-byte
  /// blocks). hfreduce-bench times it beside the kernels as the read bound: a reduce of k inputs
  /// cannot finish before its k inputs have been read, so (k + 1) x bytes over this time bounds its
  /// traffic rate, whatever its stores cost. Returns the exclusive or of every input (the same on
  /// any number of threads: reduce_test checks it against a byte-by-byte loop).
  std::uint64_t read(std::span<const void* const> in, std::size_t bytes);

  int threads() const noexcept { return pool_.size(); }

 private:
  std::size_t min_bytes_per_thread_;
  ThreadPool pool_;
};

}  // namespace ffsim::hfreduce::bench
