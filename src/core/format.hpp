// Human-readable formatting of quantities for tables and messages.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "core/units.hpp"

namespace ffsim {

/// printf-style "%.<digits>g" without locale surprises.
[[nodiscard]] std::string fmt_g(double v, int digits = 6);
/// Fixed notation with `decimals` digits after the point.
[[nodiscard]] std::string fmt_f(double v, int decimals);
/// Binary prefixes: "184 MiB", "1.5 GiB", "0 B".
[[nodiscard]] std::string fmt_bytes(Bytes b);
/// Decimal prefixes: "40.0 GB", "15.4 TB".
[[nodiscard]] std::string fmt_bytes_si(Bytes b);
/// Decimal prefixes in bytes per second: "7.32 GB/s".
[[nodiscard]] std::string fmt_bandwidth(BytesPerSecond bw);
/// "12.3 ms", "4.5 us", "2.10 s".
[[nodiscard]] std::string fmt_time(Seconds t);
/// "2.5 kW".
[[nodiscard]] std::string fmt_power(Watts w);
/// "107 TFLOPS".
[[nodiscard]] std::string fmt_flop_rate(FlopsPerSecond f);
/// Thousands separators: 11600 -> "11,600".
[[nodiscard]] std::string fmt_int(long long v);

}  // namespace ffsim
