// nccl-tests' all_reduce_perf table.
// SPDX-License-Identifier: Apache-2.0
#include "nccl_table.hpp"

#include <cstdio>

namespace ffsim::hfreduce::bench {

double allreduce_busbw(double algbw, int n) { return n > 0 ? algbw * 2.0 * (n - 1) / n : 0.0; }

namespace {

// nccl-tests: "%7.0f" from 10 ms up, "%7.1f" from 100 us, else "%7.2f".
std::string time_text(double us) {
  char buffer[32];
  if (us >= 10000.0) {
    std::snprintf(buffer, sizeof(buffer), "%7.0f", us);
  } else if (us >= 100.0) {
    std::snprintf(buffer, sizeof(buffer), "%7.1f", us);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%7.2f", us);
  }
  return buffer;
}

}  // namespace

std::string nccl_table(const std::string& title, int n, const std::vector<NcclRow>& rows) {
  std::string out;
  char line[512];
  auto add = [&] { out += line; };
  std::snprintf(line, sizeof(line), "# %s\n#\n", title.c_str());
  add();
  std::snprintf(line, sizeof(line), "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
                "", "", "", "", "");
  add();
  std::snprintf(line, sizeof(line), "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count",
                "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  add();
  std::snprintf(line, sizeof(line), "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  add();
  double busbw_sum = 0;
  int busbw_count = 0;
  std::size_t wrong_total = 0;
  for (const NcclRow& row : rows) {
    std::snprintf(line, sizeof(line), "%12zu  %12zu  %8s  %6s  %6i", row.bytes, row.count, "float", "sum", -1);
    add();
    for (int placement = 0; placement < 2; ++placement) {
      const double seconds = placement == 0 ? row.out_of_place_s : row.in_place_s;
      const std::size_t wrong = placement == 0 ? row.out_of_place_wrong : row.in_place_wrong;
      if (seconds <= 0) {
        std::snprintf(line, sizeof(line), "  %7s  %6s  %6s  %5s", "N/A", "N/A", "N/A", "N/A");
        add();
        continue;
      }
      const double algbw = static_cast<double>(row.bytes) / seconds / 1e9;
      const double busbw = allreduce_busbw(algbw, n);
      busbw_sum += busbw;
      ++busbw_count;
      wrong_total += wrong;
      std::snprintf(line, sizeof(line), "  %7s  %6.2f  %6.2f  %5g", time_text(seconds * 1e6).c_str(), algbw, busbw,
                    static_cast<double>(wrong));
      add();
    }
    out += "\n";
  }
  std::snprintf(line, sizeof(line), "# Out of bounds values : %zu %s\n", wrong_total, wrong_total ? "FAILED" : "OK");
  add();
  std::snprintf(line, sizeof(line), "# Avg bus bandwidth    : %g \n#\n", busbw_count ? busbw_sum / busbw_count : 0.0);
  add();
  return out;
}

}  // namespace ffsim::hfreduce::bench
