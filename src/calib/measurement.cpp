// Measurement files written by hfreduce-bench: what the fits take of them (the reader is
// config/measurement_reader.cpp).
// SPDX-License-Identifier: Apache-2.0
#include "calib/measurement.hpp"

#include <algorithm>
#include <limits>

namespace ffsim::calib {

double median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace ffsim::calib
