// nccl-tests all_reduce_perf logs: the fit of NCCL's ring on them (the reader is
// config/nccl_tests_reader.cpp).
// SPDX-License-Identifier: Apache-2.0
#include "calib/nccl_tests.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "calib/lsq.hpp"

namespace ffsim::calib {

namespace {

std::string num(double v, int digits = 6) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

}  // namespace

double nccl_ring_time(int ranks, double bytes, double bus_bandwidth, double step_latency) {
  const double n = ranks;
  return 2 * (n - 1) * step_latency + 2 * (n - 1) / n * bytes / bus_bandwidth;
}

NcclRingFit fit_nccl_ring(const NcclTestsLog& log) {
  const double n = log.ranks;
  std::vector<std::vector<double>> a;
  std::vector<double> b, w;
  for (const auto& r : log.rows)
    for (double t : r.time_s) {
      a.push_back({2 * (n - 1), 2 * (n - 1) / n * r.bytes});
      b.push_back(t);
      w.push_back(1 / t);
    }
  NcclRingFit f;
  f.points = static_cast<int>(b.size());
  auto x = linear_least_squares(a, b, w);
  f.latency_status = "fitted";
  if (x[0] < 0) {  // a latency is not negative: the bandwidth alone
    std::vector<std::vector<double>> a1;
    for (const auto& row : a) a1.push_back({row[1]});
    x = {0.0, linear_least_squares(a1, b, w)[0]};
    f.latency_status = "at zero: these points would take a negative one";
  }
  f.step_latency = x[0];
  f.bus_bandwidth = x[1] > 0 ? 1 / x[1] : 0;
  f.bandwidth_status = "fitted";
  // What each term is worth where it is best seen: the largest size for the bandwidth, the smallest for the latency.
  const double lo = log.rows.front().bytes, hi = log.rows.back().bytes;
  const double bw_share = (x[1] * 2 * (n - 1) / n * hi) / (x[0] * 2 * (n - 1) + x[1] * 2 * (n - 1) / n * hi);
  const double lat_share = (x[0] * 2 * (n - 1)) / (x[0] * 2 * (n - 1) + x[1] * 2 * (n - 1) / n * lo);
  if (!(bw_share >= 0.5))
    f.bandwidth_status = "weakly pinned: even the largest size spends less than half its time on bandwidth (" +
                         num(100 * bw_share, 3) + "%)";
  if (f.latency_status == "fitted" && !(lat_share >= 0.5))
    f.latency_status = "weakly pinned: even the smallest size spends less than half its time on latency (" +
                       num(100 * lat_share, 3) + "%)";
  double sq = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double model = x[0] * a[i][0] + x[1] * a[i][1];
    const double res = (model - b[i]) / b[i];
    sq += res * res;
    f.max_abs = std::max(f.max_abs, std::fabs(res));
  }
  f.rms = std::sqrt(sq / static_cast<double>(b.size()));
  return f;
}

}  // namespace ffsim::calib
