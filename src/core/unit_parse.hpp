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
/// The SI base unit of a dimension as messages write it: "B", "B/s", "s", "W", ...
[[nodiscard]] std::string_view si_unit(Dimension d);
/// The accepted unit spellings of a dimension, in table order.
[[nodiscard]] std::vector<std::string> dimension_units(Dimension d);

/// The range a quantity of one kind can plausibly take: a sanity bound that catches a wrong unit
/// or a slipped exponent ("1e-30GB/s", 1 B of GPU memory), not a fitted value. A value outside it
/// is a configuration error naming the range and `why`.
struct PlausibleRange {
  double min_si;            ///< smallest plausible positive value, in SI base units
  double max_si;            ///< largest plausible value, in SI base units
  std::string_view min;     ///< `min_si` as written in messages and docs ("1 MB/s")
  std::string_view max;     ///< `max_si` as written ("100 TB/s")
  std::string_view kind;    ///< what it bounds, for messages and docs ("bandwidth")
  std::string_view why;     ///< the one-line justification
};

/// Named ranges per quantity kind (the default of each dimension, and narrower kinds).
namespace plausible {
// Every link, port, bus and memory ffsim models lies between a 1 Gb/s management Ethernet
// (125 MB/s) and HBM3e (4.8 TB/s per GPU); 1 MB/s and 100 TB/s leave 2 orders of margin each way.
inline constexpr PlausibleRange kBandwidth{1e6, 1e14, "1 MB/s", "100 TB/s", "bandwidth",
                                           "any link, bus or memory lies between 1 Gb/s Ethernet (125 MB/s) and HBM (4.8 TB/s)"};
// Buffers, chunks, steps and buckets: from one byte up to more than any one device holds.
inline constexpr PlausibleRange kSize{1.0, 1099511627776.0, "1 B", "1 TiB", "size",
                                      "a buffer, chunk or message is at least a byte and fits a node's memory"};
// Memories and drives: the smallest GPU (or emulated device) memory is gigabytes, the largest
// socket's DRAM about 6 TB; below 1 MiB is a unit slip ("40B"), above 1 PiB an exponent slip.
inline constexpr PlausibleRange kMemory{1048576.0, 1125899906842624.0, "1 MiB", "1 PiB", "memory or storage capacity",
                                        "device memories are GB, a socket's DRAM at most a few TB, a drive at most ~100 TB"};
// CPU caches: 4 KiB (below any L1 data cache in service: they are 16-64 KiB) to 16 GiB (10x AMD's
// 1.1 GiB 3D V-Cache socket).
inline constexpr PlausibleRange kCache{4096.0, 17179869184.0, "4 KiB", "16 GiB", "cache size",
                                       "L1 data caches are tens of KiB, last-level caches up to about 1 GiB per socket"};
// Latencies: a picosecond is less than a signal takes to cross a chip; 10 ms is longer than a
// round trip across a continent, far beyond any hop inside a cluster (a km of fibre is 5 us).
inline constexpr PlausibleRange kTime{1e-12, 1e-2, "1 ps", "10 ms", "latency",
                                      "a hop inside a cluster takes nanoseconds to microseconds (a km of fibre is 5 us)"};
// Power: a NIC or transceiver draws watts, a node kilowatts, a rack of GB200 NVL72 about 120 kW.
inline constexpr PlausibleRange kPower{0.1, 1e6, "100 mW", "1 MW", "power",
                                       "a device draws watts, a node kilowatts, a rack at most ~120 kW"};
// Energy (no catalog fact reads one yet): a joule to a gigawatt for four months.
inline constexpr PlausibleRange kEnergy{1.0, 1e16, "1 J", "1e16 J", "energy",
                                        "from one joule to a gigawatt for four months"};
// Compute rates of one device: every GPU since 2008 exceeds 1 GFLOPS; 1 EFLOPS is 50x the fastest
// (B200 FP4 sparse, 20 PFLOPS).
inline constexpr PlausibleRange kFlopRate{1e9, 1e18, "1 GFLOPS", "1 EFLOPS", "compute rate",
                                          "one device computes 1 GFLOPS (any GPU since 2008) to 20 PFLOPS (B200 FP4)"};
// FLOP counts: one operation to 1e30 (100,000x the largest training runs, about 1e25).
inline constexpr PlausibleRange kFlopCount{1.0, 1e30, "1 FLOP", "1e30 FLOP", "FLOP count",
                                           "the largest training runs are about 1e25 FLOP"};
// Clock frequencies: 1 MHz to 10 GHz (CPUs run at 1 to 6 GHz).
inline constexpr PlausibleRange kFrequency{1e6, 1e10, "1 MHz", "10 GHz", "clock frequency",
                                           "CPU and GPU clocks run at 1 to 6 GHz"};
}  // namespace plausible

/// The default plausible range of a dimension (kMemory and kCache are narrower kinds of size).
[[nodiscard]] const PlausibleRange& default_range(Dimension d);

/// Parses "<number>[ ]<unit>" into SI base units (bytes, bytes/s, s, W, J, flop/s, flop, Hz).
/// Rules: "Gbps"/"Gb/s" are bits, "GBps"/"GB/s" bytes; "GB" = 1e9 B and "GiB" = 2^30 B;
/// units are case-sensitive; "GBps" and sizes in bits ("40Gb") are refused as ambiguous (with
/// both readings offered); a bare number is an error unless it is 0; NaN, infinities,
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
