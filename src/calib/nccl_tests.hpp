// nccl-tests `all_reduce_perf` logs (the text nccl-tests prints) as measurements of a cluster's
// allreduce, and the fit of NCCL's ring on them (`ffsim calibrate LOG --node ...`);
// config/nccl_tests_reader.hpp reads the logs.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace ffsim::calib {

/// One row of the table: a size, out-of-place and in-place.
struct NcclTestsRow {
  int line = 0;  ///< 1-based line in the log, for messages
  double bytes = 0;
  long long count = 0;
  std::string type, redop;
  double time_s[2] = {0, 0};     ///< out-of-place, in-place (seconds)
  double algbw_Bps[2] = {0, 0};  ///< as printed (GB/s x 1e9)
  double busbw_Bps[2] = {0, 0};
};

struct NcclTestsLog {
  std::string file;
  int threads = 0, gpus_per_thread = 0;  ///< "# nThread N nGpus G"
  int ranks = 0;                         ///< the "#  Rank" device lines
  std::vector<std::string> hosts;        ///< distinct host names, in order of first appearance
  std::vector<int> ranks_per_host;
  std::vector<std::string> devices;      ///< device name of each rank ("NVIDIA A100-SXM4-80GB")
  std::vector<NcclTestsRow> rows;
  double avg_busbw_Bps = 0;              ///< "# Avg bus bandwidth" (0 if absent)
};

/// NCCL's ring allreduce on n ranks: time = 2(n-1) x step latency + 2(n-1)/n x bytes / bus bandwidth.
struct NcclRingFit {
  double bus_bandwidth = 0;  ///< B/s
  double step_latency = 0;   ///< s
  int points = 0;
  double rms = 0, max_abs = 0;  ///< relative residuals
  std::string latency_status, bandwidth_status;
};
[[nodiscard]] double nccl_ring_time(int ranks, double bytes, double bus_bandwidth, double step_latency);
/// Weighted (relative) linear least squares of the ring's time over every row, both placements.
[[nodiscard]] NcclRingFit fit_nccl_ring(const NcclTestsLog& log);

}  // namespace ffsim::calib
