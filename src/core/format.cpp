// Human-readable formatting of quantities.
// SPDX-License-Identifier: Apache-2.0
#include "core/format.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ffsim {

std::string fmt_g(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string fmt_f(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

namespace {
std::string scaled(double v, const char* const* names, int count, double step, const char* suffix) {
  int i = 0;
  double a = std::fabs(v);
  while (i + 1 < count && a >= step) {
    a /= step;
    v /= step;
    ++i;
  }
  const int decimals = a == 0 || a >= 100 ? 0 : a >= 10 ? 1 : 2;
  return fmt_f(v, decimals) + " " + names[i] + suffix;
}
}  // namespace

std::string fmt_bytes(Bytes b) {
  static const char* const kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const double v = b.si();
  if (std::fabs(v) < 1024) return fmt_g(v, 6) + " B";
  return scaled(v, kNames, 6, 1024.0, "");
}

std::string fmt_bytes_si(Bytes b) {
  static const char* const kNames[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  return scaled(b.si(), kNames, 6, 1000.0, "");
}

std::string fmt_bandwidth(BytesPerSecond bw) {
  static const char* const kNames[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  return scaled(bw.si(), kNames, 6, 1000.0, "/s");
}

std::string fmt_time(Seconds t) {
  const double v = t.si();
  const double a = std::fabs(v);
  auto with = [](double x, const char* unit) {
    const double ax = std::fabs(x);
    const int decimals = ax >= 100 ? 1 : ax >= 10 ? 2 : 3;
    return fmt_f(x, decimals) + " " + unit;
  };
  if (a == 0) return "0 s";
  if (a < 1e-6) return with(v * 1e9, "ns");
  if (a < 1e-3) return with(v * 1e6, "us");
  if (a < 1) return with(v * 1e3, "ms");
  return with(v, "s");
}

std::string fmt_power(Watts w) {
  static const char* const kNames[] = {"W", "kW", "MW", "GW"};
  return scaled(w.si(), kNames, 4, 1000.0, "");
}

std::string fmt_flop_rate(FlopsPerSecond f) {
  static const char* const kNames[] = {"FLOPS", "kFLOPS", "MFLOPS", "GFLOPS", "TFLOPS", "PFLOPS", "EFLOPS"};
  return scaled(f.si(), kNames, 7, 1000.0, "");
}

std::string fmt_int(long long v) {
  std::string digits = std::to_string(std::llabs(v));
  std::string r;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (n && n % 3 == 0) r.insert(r.begin(), ',');
    r.insert(r.begin(), *it);
    ++n;
  }
  return v < 0 ? "-" + r : r;
}

}  // namespace ffsim
