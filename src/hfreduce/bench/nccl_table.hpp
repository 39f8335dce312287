// nccl-tests' all_reduce_perf table, printed by hfreduce-bench for its allreduce stages.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ffsim::hfreduce::bench {

/// nccl-tests' bus bandwidth of an allreduce over n ranks: algbw x 2(n - 1) / n (each rank sends
/// and receives 2(n - 1)/n of the buffer in a bandwidth-optimal allreduce; nccl-tests PERFORMANCE.md).
double allreduce_busbw(double algbw, int n);

/// One size: out-of-place and in-place times in seconds (<= 0: not measured, printed N/A) and the
/// elements that differed from the exact sum in the check run.
struct NcclRow {
  std::size_t bytes = 0;
  std::size_t count = 0;
  double out_of_place_s = 0;
  double in_place_s = 0;
  std::size_t out_of_place_wrong = 0;
  std::size_t in_place_wrong = 0;
};

/// The table exactly as nccl-tests' all_reduce_perf prints it (src/common.cu, v2.13 formats):
/// "#  size count type redop root | time algbw busbw #wrong (out-of-place) | (in-place)", type
/// float, redop sum, root -1, times in us, bandwidths in GB/s (1e9 B/s), then "# Out of bounds
/// values" and "# Avg bus bandwidth" (the mean busbw over both columns, as nccl-tests does).
/// `title` goes in a comment line above it; n is the rank count busbw is taken over.
std::string nccl_table(const std::string& title, int n, const std::vector<NcclRow>& rows);

}  // namespace ffsim::hfreduce::bench
