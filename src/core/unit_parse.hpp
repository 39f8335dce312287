// The one parser of unit strings ("200Gbps", "25GB/s", "40GiB", "1.5us", "2.5kW", "107TFLOPS"),
// modelled on SimGrid's xbt_parse_units.cpp: units are parsed once, at the boundary.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace ffsim {

/// What a unit string measures.
enum class Dimension { Size, Bandwidth, Time, Power, Energy, FlopRate, FlopCount, Frequency };

/// "size", "bandwidth", ... (for messages).
[[nodiscard]] std::string_view dimension_name(Dimension d);
/// "a size", "an energy", ... (for messages).
[[nodiscard]] std::string a_dimension(Dimension d);
/// An example value for messages: "40GiB", "200Gbps", "1.5us", ...
[[nodiscard]] std::string_view dimension_example(Dimension d);
/// The accepted unit spellings of a dimension, in table order.
[[nodiscard]] std::vector<std::string> dimension_units(Dimension d);

/// Parses "<number>[ ]<unit>" into SI base units (bytes, bytes/s, s, W, J, flop/s, flop, Hz).
/// Rules: "Gbps"/"Gb/s" are bits, "GBps"/"GB/s" bytes; "GB" = 1e9 B and "GiB" = 2^30 B;
/// units are case-sensitive; a bare number is an error unless it is 0; NaN, infinities,
/// values that overflow a double and magnitudes outside 1e-30 to 1e30 SI units (0 aside) are
/// errors. The sign is kept: range checks are the caller's. Throws ValueError with a message
/// that says what was expected and what was found.
[[nodiscard]] double parse_quantity_si(std::string_view text, Dimension d);

[[nodiscard]] Bytes parse_size(std::string_view text);
[[nodiscard]] BytesPerSecond parse_bandwidth(std::string_view text);
[[nodiscard]] Seconds parse_time(std::string_view text);
[[nodiscard]] Watts parse_power(std::string_view text);
[[nodiscard]] Joules parse_energy(std::string_view text);
[[nodiscard]] FlopsPerSecond parse_flop_rate(std::string_view text);
[[nodiscard]] Flops parse_flop_count(std::string_view text);
[[nodiscard]] Hertz parse_frequency(std::string_view text);

}  // namespace ffsim
