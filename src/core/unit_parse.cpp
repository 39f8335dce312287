// The one parser of unit strings.
// SPDX-License-Identifier: Apache-2.0
#include "core/unit_parse.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim {
namespace {

struct Unit {
  std::string_view name;
  double factor;  // multiplier to SI base units
};

// factor = mult x 10^pow10, with pow10 the largest power (from 10^18 down) that leaves one of the
// tables' exact multipliers (1, 1/8 for bits, 60 for minutes, 36 for hours and Wh, 864 for days):
// the number is then read with its decimal exponent moved by pow10, so that "16.4MB" is 16,400,000
// bytes exactly (16.4 x 1e6 in doubles is 16,399,999.999999998) and "0.1ms" the double nearest
// 1e-4, and mult multiplies the correctly rounded value. Binary prefixes (powers of two) match no
// power of ten and multiply as before: exact already.
struct Decimal {
  int pow10;
  double mult;
};
constexpr Decimal decimal_part(double factor) {
  Decimal d{0, factor};
  for (int e = 18; e >= -12; --e) {
    double p = 1;
    for (int i = 0; i < (e < 0 ? -e : e); ++i) p *= 10;
    const double m = e < 0 ? factor * p : factor / p;
    // m must be one of the exact multipliers the tables use.
    if (m == 1 || m == 0.125 || m == 60 || m == 36 || m == 864) return Decimal{e, m};
  }
  return d;
}

constexpr double kKi = 1024.0;
constexpr double kMi = kKi * kKi;
constexpr double kGi = kMi * kKi;
constexpr double kTi = kGi * kKi;
constexpr double kPi = kTi * kKi;

// Sizes: bytes with SI or binary prefixes. Bits ("Gb") are not a size here: nothing ffsim reads as
// a size (memories, caches, buffers, messages) is given in bits by its sources, so "40Gb" is a
// typo for "40GB" far more often than 5 GB, and is refused as ambiguous (see kAmbiguous below).
constexpr std::array kSizeUnits{
    Unit{"B", 1.0},      Unit{"kB", 1e3},      Unit{"KB", 1e3},      Unit{"MB", 1e6},     Unit{"GB", 1e9},
    Unit{"TB", 1e12},    Unit{"PB", 1e15},     Unit{"KiB", kKi},     Unit{"MiB", kMi},    Unit{"GiB", kGi},
    Unit{"TiB", kTi},    Unit{"PiB", kPi},
};
// Bandwidths: "B/s" is bytes, "bps"/"b/s" bits (IEC 80000-13: B a byte, b a bit; "bps" is the
// networking convention for bit rates). "GBps" is not accepted: it differs from "Gbps" by the case
// of one letter and a factor of 8 (see kAmbiguous below).
constexpr std::array kBandwidthUnits{
    Unit{"B/s", 1.0},       Unit{"kB/s", 1e3},      Unit{"KB/s", 1e3},     Unit{"MB/s", 1e6},     Unit{"GB/s", 1e9},
    Unit{"TB/s", 1e12},     Unit{"KiB/s", kKi},     Unit{"MiB/s", kMi},    Unit{"GiB/s", kGi},    Unit{"TiB/s", kTi},
    Unit{"bps", 0.125},     Unit{"kbps", 1e3 / 8},  Unit{"Kbps", 1e3 / 8}, Unit{"Mbps", 1e6 / 8}, Unit{"Gbps", 1e9 / 8},
    Unit{"Tbps", 1e12 / 8}, Unit{"b/s", 0.125},     Unit{"kb/s", 1e3 / 8}, Unit{"Mb/s", 1e6 / 8}, Unit{"Gb/s", 1e9 / 8},
    Unit{"Tb/s", 1e12 / 8},
};
constexpr std::array kTimeUnits{
    Unit{"ps", 1e-12}, Unit{"ns", 1e-9},   Unit{"us", 1e-6},    Unit{"\xC2\xB5s", 1e-6},  // µs
    Unit{"ms", 1e-3},  Unit{"s", 1.0},     Unit{"min", 60.0},   Unit{"h", 3600.0},
    Unit{"d", 86400.0},
};
constexpr std::array kPowerUnits{Unit{"mW", 1e-3}, Unit{"W", 1.0}, Unit{"kW", 1e3}, Unit{"MW", 1e6}};
constexpr std::array kEnergyUnits{Unit{"J", 1.0},      Unit{"kJ", 1e3},     Unit{"MJ", 1e6},
                                  Unit{"GJ", 1e9},     Unit{"Wh", 3600.0},  Unit{"kWh", 3.6e6},
                                  Unit{"MWh", 3.6e9},  Unit{"GWh", 3.6e12}};
constexpr std::array kFlopRateUnits{
    Unit{"FLOPS", 1.0},     Unit{"kFLOPS", 1e3},     Unit{"MFLOPS", 1e6},     Unit{"GFLOPS", 1e9},
    Unit{"TFLOPS", 1e12},   Unit{"PFLOPS", 1e15},    Unit{"EFLOPS", 1e18},    Unit{"flop/s", 1.0},
    Unit{"kflop/s", 1e3},   Unit{"Mflop/s", 1e6},    Unit{"Gflop/s", 1e9},    Unit{"Tflop/s", 1e12},
    Unit{"Pflop/s", 1e15},  Unit{"Eflop/s", 1e18},
};
constexpr std::array kFlopCountUnits{
    Unit{"FLOP", 1.0},  Unit{"kFLOP", 1e3},  Unit{"MFLOP", 1e6},  Unit{"GFLOP", 1e9},  Unit{"TFLOP", 1e12},
    Unit{"PFLOP", 1e15}, Unit{"EFLOP", 1e18}, Unit{"flop", 1.0},  Unit{"kflop", 1e3},  Unit{"Mflop", 1e6},
    Unit{"Gflop", 1e9}, Unit{"Tflop", 1e12}, Unit{"Pflop", 1e15}, Unit{"Eflop", 1e18},
};
constexpr std::array kFrequencyUnits{Unit{"Hz", 1.0}, Unit{"kHz", 1e3}, Unit{"MHz", 1e6}, Unit{"GHz", 1e9}};

constexpr std::array kAllDimensions{Dimension::Size,     Dimension::Bandwidth, Dimension::Time,
                                    Dimension::Power,    Dimension::Energy,    Dimension::FlopRate,
                                    Dimension::FlopCount, Dimension::Frequency};

template <std::size_t N>
std::pair<const Unit*, std::size_t> as_span(const std::array<Unit, N>& a) {
  return {a.data(), N};
}

std::pair<const Unit*, std::size_t> units_of(Dimension d) {
  switch (d) {
    case Dimension::Size: return as_span(kSizeUnits);
    case Dimension::Bandwidth: return as_span(kBandwidthUnits);
    case Dimension::Time: return as_span(kTimeUnits);
    case Dimension::Power: return as_span(kPowerUnits);
    case Dimension::Energy: return as_span(kEnergyUnits);
    case Dimension::FlopRate: return as_span(kFlopRateUnits);
    case Dimension::FlopCount: return as_span(kFlopCountUnits);
    case Dimension::Frequency: return as_span(kFrequencyUnits);
  }
  return {nullptr, 0};
}

std::optional<double> find_unit(std::string_view name, Dimension d) {
  auto [p, n] = units_of(d);
  for (std::size_t i = 0; i < n; ++i)
    if (p[i].name == name) return p[i].factor;
  return std::nullopt;
}

std::string dq(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string expected(Dimension d) {
  return "expected " + a_dimension(d) + " with unit (e.g. " + dq(dimension_example(d)) + ")";
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// Magnitudes accepted in SI base units (0 aside): far beyond any machine (1e30 B, W, FLOP, s), and
// narrow enough that sums, products and ratios of a few quantities stay finite downstream.
constexpr double kMinMagnitude = 1e-30;
constexpr double kMaxMagnitude = 1e30;

// The SI base unit of a dimension: its table's unit of factor 1 ("B", "Bps", "s", ...).
std::string_view base_unit(Dimension d) {
  auto [p, n] = units_of(d);
  for (std::size_t i = 0; i < n; ++i)
    if (p[i].factor == 1.0) return p[i].name;
  return "";
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// "\"400GB/s\" or \"400Gbps\"" (each spelling after `number`).
std::string quoted_list(const std::vector<std::string>& units, std::string_view number) {
  std::string r;
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (i) r += i + 1 == units.size() ? " or " : ", ";
    r += dq(std::string(number) + units[i]);
  }
  return r;
}

// Spellings refused because they read two ways that differ by a factor of 8: "GBps" (bytes, but
// one letter's case from "Gbps", bits) and a size in bits ("40Gb" for "40GB"). The message offers
// both readings; "" when `unit` is not one of them.
std::string ambiguous(std::string_view unit, std::string_view number, std::string_view text, Dimension d) {
  const std::string u(unit);
  if (d == Dimension::Bandwidth && u.size() >= 3 && u.compare(u.size() - 3, 3, "Bps") == 0) {
    const std::string prefix = u.substr(0, u.size() - 3);
    std::vector<std::string> readings;
    std::vector<std::string> what;
    if (find_unit(prefix + "B/s", d)) {
      readings.push_back(prefix + "B/s");
      what.push_back("bytes");
    }
    if (find_unit(prefix + "bps", d)) {
      readings.push_back(prefix + "bps");
      what.push_back("bits");
    }
    if (readings.empty()) return "";
    std::string r = "ambiguous bandwidth unit " + dq(unit) + " in " + dq(text) + ": did you mean ";
    for (std::size_t i = 0; i < readings.size(); ++i)
      r += (i ? " or " : "") + dq(std::string(number) + readings[i]) + " (" + what[i] + " per second)";
    return r + "? (\"B/s\" is bytes, \"bps\" and \"b/s\" bits)";
  }
  if (d == Dimension::Size && !u.empty() && u.back() == 'b') {
    const std::string prefix = u.substr(0, u.size() - 1);
    std::vector<std::string> readings;
    if (find_unit(prefix + "B", d)) readings.push_back(prefix + "B");
    if (!prefix.empty() && find_unit(std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(prefix[0])))) + "iB", d))
      readings.push_back(std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(prefix[0])))) + "iB");
    if (readings.empty()) return "";
    return "ambiguous size unit " + dq(unit) + " in " + dq(text) + ": did you mean " + quoted_list(readings, number) +
           "? (\"b\" is a bit; sizes are written in bytes: \"B\", \"GB\" = 1e9 B, \"GiB\" = 2^30 B)";
  }
  return "";
}

}  // namespace

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::Size: return "size";
    case Dimension::Bandwidth: return "bandwidth";
    case Dimension::Time: return "time";
    case Dimension::Power: return "power";
    case Dimension::Energy: return "energy";
    case Dimension::FlopRate: return "FLOP rate";
    case Dimension::FlopCount: return "FLOP count";
    case Dimension::Frequency: return "frequency";
  }
  return "quantity";
}

std::string a_dimension(Dimension d) {
  const std::string n(dimension_name(d));
  return (n[0] == 'e' ? "an " : "a ") + n;
}

std::string_view dimension_example(Dimension d) {
  switch (d) {
    case Dimension::Size: return "40GiB";
    case Dimension::Bandwidth: return "200Gbps";
    case Dimension::Time: return "1.5us";
    case Dimension::Power: return "2.5kW";
    case Dimension::Energy: return "3.6MJ";
    case Dimension::FlopRate: return "107TFLOPS";
    case Dimension::FlopCount: return "12TFLOP";
    case Dimension::Frequency: return "2.5GHz";
  }
  return "";
}

const PlausibleRange& default_range(Dimension d) {
  switch (d) {
    case Dimension::Size: return plausible::kSize;
    case Dimension::Bandwidth: return plausible::kBandwidth;
    case Dimension::Time: return plausible::kTime;
    case Dimension::Power: return plausible::kPower;
    case Dimension::Energy: return plausible::kEnergy;
    case Dimension::FlopRate: return plausible::kFlopRate;
    case Dimension::FlopCount: return plausible::kFlopCount;
    case Dimension::Frequency: return plausible::kFrequency;
  }
  return plausible::kSize;
}

std::string_view si_unit(Dimension d) { return base_unit(d); }

std::vector<std::string> dimension_units(Dimension d) {
  auto [p, n] = units_of(d);
  std::vector<std::string> r;
  for (std::size_t i = 0; i < n; ++i) r.emplace_back(p[i].name);
  return r;
}

double parse_quantity_si(std::string_view text, Dimension d) {
  std::string_view s = text;
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  if (s.empty()) throw ValueError(expected(d) + ", got an empty string");

  // The number: [sign] digits [. digits] [e [sign] digits]. Written out by hand so that
  // "nan", "inf" and hexadecimal forms, which from_chars would accept, are rejected.
  std::size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  bool any_digit = false;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; any_digit = true; }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; any_digit = true; }
  }
  if (!any_digit) throw ValueError(expected(d) + ", got " + dq(text));
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      i = j;
    }
  }
  const std::string_view number = s.substr(0, i);
  double value = 0.0;
  const char* first = number.data();
  if (*first == '+') ++first;
  const auto res = std::from_chars(first, number.data() + number.size(), value);
  if (res.ec == std::errc::result_out_of_range || !std::isfinite(value))
    throw ValueError("number out of range in " + dq(text) + ": " + std::string(dimension_name(d)) +
                     " values must be finite");
  if (res.ec != std::errc() || res.ptr != number.data() + number.size())
    throw ValueError(expected(d) + ", got " + dq(text));

  std::string_view unit = s.substr(i);
  while (!unit.empty() && is_space(unit.front())) unit.remove_prefix(1);
  if (unit.empty()) {
    if (value == 0.0) return 0.0;
    throw ValueError(expected(d) + ", got " + dq(text) + " with no unit");
  }
  if (auto f = find_unit(unit, d)) {
    double si = value * *f;
    if (const Decimal dec = decimal_part(*f); dec.pow10 != 0) {
      // The same number read with its exponent moved (out-of-range shifts keep the product above,
      // whose range errors are the ones to report).
      std::string shifted(number.substr(number.front() == '+' ? 1 : 0));
      long exp10 = 0;
      bool exp_ok = true;
      if (const auto epos = shifted.find_first_of("eE"); epos != std::string::npos) {
        const std::string digits = shifted.substr(epos + 1);
        exp_ok = digits.size() <= 6;  // sign and up to 5 digits: beyond, the value is out of range anyway
        if (exp_ok) exp10 = std::stol(digits);
        shifted.resize(epos);
      }
      if (exp_ok) {
        shifted += "e" + std::to_string(exp10 + dec.pow10);
        double exact = 0;
        const auto r = std::from_chars(shifted.data(), shifted.data() + shifted.size(), exact);
        if (r.ec == std::errc() && r.ptr == shifted.data() + shifted.size() && std::isfinite(exact) &&
            (exact != 0 || value == 0))
          si = exact * dec.mult;
      }
    }
    if (!std::isfinite(si))
      throw ValueError("number out of range in " + dq(text) + ": " + std::string(dimension_name(d)) +
                       " values must be finite");
    if (si != 0.0 && (std::fabs(si) < kMinMagnitude || std::fabs(si) > kMaxMagnitude))
      throw ValueError("number out of range in " + dq(text) + ": " + std::string(dimension_name(d)) +
                       " values must be 0 or of magnitude 1e-30 to 1e30 " + std::string(base_unit(d)));
    return si;
  }
  if (const std::string why = ambiguous(unit, number, text, d); !why.empty()) throw ValueError(why);
  for (Dimension other : kAllDimensions) {
    if (other != d && find_unit(unit, other))
      throw ValueError(expected(d) + ", got " + dq(text) + ", which is " + a_dimension(other));
  }
  // Units are case-sensitive ("Gb/s" and "GB/s" differ by 8x), so a spelling that matches units
  // only without case names them all; else the nearest spelling by edit distance.
  std::vector<std::string> same_letters, per_second;
  for (const auto& u : dimension_units(d))
    if (lower(u) == lower(unit)) same_letters.push_back(u);
  if (d == Dimension::Bandwidth)  // "400Gb" for "400Gb/s"
    for (const char* suffix : {"/s", "ps"})
      if (find_unit(std::string(unit) + suffix, d)) per_second.push_back(std::string(unit) + suffix);
  const std::string hint =
      !same_letters.empty() ? " (did you mean " + quoted_list(same_letters, "") + "? units are case-sensitive)"
      : !per_second.empty() ? " (did you mean " + quoted_list(per_second, "") + "?)"
                            : did_you_mean(unit, dimension_units(d));
  throw ValueError("unknown " + std::string(dimension_name(d)) + " unit " + dq(unit) + " in " + dq(text) + hint +
                   "; valid: " + join(dimension_units(d)));
}

Bytes parse_size(std::string_view t) { return Bytes(parse_quantity_si(t, Dimension::Size)); }
BytesPerSecond parse_bandwidth(std::string_view t) { return BytesPerSecond(parse_quantity_si(t, Dimension::Bandwidth)); }
Seconds parse_time(std::string_view t) { return Seconds(parse_quantity_si(t, Dimension::Time)); }
Watts parse_power(std::string_view t) { return Watts(parse_quantity_si(t, Dimension::Power)); }
Joules parse_energy(std::string_view t) { return Joules(parse_quantity_si(t, Dimension::Energy)); }
FlopsPerSecond parse_flop_rate(std::string_view t) { return FlopsPerSecond(parse_quantity_si(t, Dimension::FlopRate)); }
Flops parse_flop_count(std::string_view t) { return Flops(parse_quantity_si(t, Dimension::FlopCount)); }
Hertz parse_frequency(std::string_view t) { return Hertz(parse_quantity_si(t, Dimension::Frequency)); }

}  // namespace ffsim
