// Sum of k buffers into one (fp32, bf16, fp16; fp32 accumulation), scalar reference and SIMD paths.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>

#include "ffsim/hfreduce/cpu.hpp"
#include "ffsim/hfreduce/dtype.hpp"
#include "ffsim/hfreduce/thread_pool.hpp"

namespace ffsim::hfreduce {

/// Most buffers one reduce sums.
inline constexpr int kMaxReduceInputs = 16;

/// How the reduce writes its output.
enum class StorePolicy {
  Auto,         ///< non-temporal when the call moves at least ReducerOptions::nontemporal_min_bytes
  Regular,      ///< ordinary stores (the output stays in cache)
  NonTemporal,  ///< streaming stores past the cache (no read-for-ownership of the output)
};

/// Single-threaded sum on one path: out[i] = in[0][i] + in[1][i] + ... + in[k-1][i] for i < count.
/// Every path accumulates in fp32 in exactly this order (no FMA) and rounds once to dtype on store
/// (round to nearest even; NaN stays NaN), so all paths give bit-identical results. out may equal
/// any in[j] (in place); other overlaps are not allowed. k must be in [1, kMaxReduceInputs].
/// Throws KernelError on bad arguments or when the CPU cannot run isa.
void reduce_sum(Isa isa, DType dtype, void* out, std::span<const void* const> in, std::size_t count,
                bool nontemporal = false);

/// Options of a Reducer.
struct ReducerOptions {
  int threads = 0;                  ///< participants; 0 = every usable CPU
  std::optional<Isa> isa;           ///< unset = default_isa() (HFREDUCE_ISA or the best path)
  StorePolicy stores = StorePolicy::Auto;
  /// Under StorePolicy::Auto, non-temporal stores are used when a call reads and writes at least
  /// this many bytes ((k + 1) x output bytes). On the Zen 5 VM (docs/hfreduce.md, "Reduce kernel:
  /// measured") streaming stores beat ordinary ones from about 2 MiB moved when the reduce runs
  /// alone, but in the pipeline the sum is read next (H2D, the tree) and ordinary stores leave it
  /// in the cache: the threshold stays above a default pipeline chunk's sum (8 x 4 MiB in, 4 out),
  /// which the pipeline was not re-measured without.
  std::size_t nontemporal_min_bytes = std::size_t{64} << 20;
  /// Smallest share of output (in bytes) worth handing to one more thread.
  std::size_t min_bytes_per_thread = std::size_t{64} << 10;
};

/// Multithreaded sum over a persistent thread pool; the output is split into contiguous,
/// cache-line aligned ranges, one per participant (same split every call, so first-touched
/// pages stay with their thread). Results equal reduce_sum's bit for bit.
class Reducer {
 public:
  explicit Reducer(ReducerOptions options = {});

  /// out = sum of in[j] over j, count elements of dtype; see reduce_sum for the contract.
  void sum(DType dtype, void* out, std::span<const void* const> in, std::size_t count);

  /// Writes zeros to bytes at data with the same split as sum() (first touch on each thread).
  void first_touch(void* data, std::size_t bytes);

  Isa isa() const noexcept { return isa_; }
  int threads() const noexcept { return pool_->size(); }
  const ReducerOptions& options() const noexcept { return options_; }

 private:
  ReducerOptions options_;
  Isa isa_;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace ffsim::hfreduce
