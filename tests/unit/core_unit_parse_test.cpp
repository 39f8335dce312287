// Tests of the unit-string parser: every unit of every dimension and every rejection.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/unit_parse.hpp"

using namespace ffsim;

namespace {
// The expected SI value of "1<unit>" for each accepted unit, written out from the unit's definition.
struct Case {
  const char* unit;
  double si;
};
void check_all(Dimension d, std::initializer_list<Case> cases) {
  // Every accepted spelling must be covered by a case, so a unit added to the table needs a test.
  CHECK(dimension_units(d).size() == cases.size());
  for (const Case& c : cases) {
    CAPTURE(c.unit);
    CHECK(parse_quantity_si(std::string("1") + c.unit, d) == doctest::Approx(c.si).epsilon(1e-15).scale(ffsim::testing::kRelative));
    // 2.5 and a space before the unit scale linearly.
    CHECK(parse_quantity_si(std::string("2.5 ") + c.unit, d) == doctest::Approx(2.5 * c.si).epsilon(1e-15).scale(ffsim::testing::kRelative));
  }
}
}  // namespace

TEST_CASE("core::unit_parse: every size unit (SI vs binary prefixes, bytes only)") {
  check_all(Dimension::Size, {{"B", 1},       {"kB", 1e3},       {"KB", 1e3},       {"MB", 1e6},
                              {"GB", 1e9},    {"TB", 1e12},      {"PB", 1e15},      {"KiB", 1024.0},
                              {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
                              {"PiB", 1125899906842624.0}});
  // Sizes in bits ("40Gb") are refused as ambiguous (config_inline_test.cpp).
  CHECK_THROWS_AS((void)parse_size("40Gb"), ValueError);
  // 40GB is 40e9 bytes, 40GiB is 40 * 2^30.
  CHECK(parse_size("40GB").si() == 40e9);
  CHECK(parse_size("40GiB").si() == 40.0 * 1073741824.0);
  CHECK(parse_size("184MiB").si() == 184.0 * 1048576.0);
}

TEST_CASE("core::unit_parse: every bandwidth unit") {
  check_all(Dimension::Bandwidth,
            {{"B/s", 1},    {"kB/s", 1e3},        {"KB/s", 1e3},      {"MB/s", 1e6},
             {"GB/s", 1e9},       {"TB/s", 1e12},       {"KiB/s", 1024.0},    {"MiB/s", 1048576.0},
             {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0}, {"bps", 0.125}, {"kbps", 125}, {"Kbps", 125},
             {"Mbps", 125e3},     {"Gbps", 125e6},      {"Tbps", 125e9},      {"b/s", 0.125},     {"kb/s", 125},
             {"Mb/s", 125e3},     {"Gb/s", 125e6},      {"Tb/s", 125e9}});
  // 200 Gb/s HDR is 25 GB/s; "Gbps" is bits and "GB/s" bytes; "GBps" is refused as ambiguous.
  CHECK(parse_bandwidth("200Gbps").si() == 25e9);
  CHECK(parse_bandwidth("25GB/s").si() == 25e9);
  CHECK_THROWS_AS((void)parse_bandwidth("25GBps"), ValueError);
  CHECK(parse_bandwidth("9GiB/s").si() == 9.0 * 1073741824.0);
}

TEST_CASE("core::unit_parse: every time unit") {
  check_all(Dimension::Time, {{"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"ms", 1e-3},
                              {"s", 1},      {"min", 60},  {"h", 3600},  {"d", 86400}});
  CHECK(parse_time("1.5us").si() == doctest::Approx(1.5e-6).epsilon(1e-15).scale(ffsim::testing::kRelative));
  CHECK(parse_time("2ms").si() == doctest::Approx(2e-3).epsilon(1e-15).scale(ffsim::testing::kRelative));
}

TEST_CASE("core::unit_parse: every power, energy, FLOP and frequency unit") {
  check_all(Dimension::Power, {{"mW", 1e-3}, {"W", 1}, {"kW", 1e3}, {"MW", 1e6}});
  check_all(Dimension::Energy, {{"J", 1}, {"kJ", 1e3}, {"MJ", 1e6}, {"GJ", 1e9}, {"Wh", 3600}, {"kWh", 3.6e6},
                                {"MWh", 3.6e9}, {"GWh", 3.6e12}});
  check_all(Dimension::FlopRate, {{"FLOPS", 1},     {"kFLOPS", 1e3},   {"MFLOPS", 1e6},   {"GFLOPS", 1e9},
                                  {"TFLOPS", 1e12}, {"PFLOPS", 1e15},  {"EFLOPS", 1e18},  {"flop/s", 1},
                                  {"kflop/s", 1e3}, {"Mflop/s", 1e6},  {"Gflop/s", 1e9},  {"Tflop/s", 1e12},
                                  {"Pflop/s", 1e15}, {"Eflop/s", 1e18}});
  check_all(Dimension::FlopCount, {{"FLOP", 1},   {"kFLOP", 1e3}, {"MFLOP", 1e6}, {"GFLOP", 1e9},  {"TFLOP", 1e12},
                                   {"PFLOP", 1e15}, {"EFLOP", 1e18}, {"flop", 1},  {"kflop", 1e3},  {"Mflop", 1e6},
                                   {"Gflop", 1e9}, {"Tflop", 1e12}, {"Pflop", 1e15}, {"Eflop", 1e18}});
  check_all(Dimension::Frequency, {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}});
  CHECK(parse_power("2.5kW").si() == 2500.0);
  CHECK(parse_flop_rate("107TFLOPS").si() == 107e12);
}

TEST_CASE("core::unit_parse: number forms") {
  CHECK(parse_size("0").si() == 0.0);          // a bare 0 needs no unit
  CHECK(parse_size("0.0").si() == 0.0);
  CHECK(parse_size("1e3B").si() == 1000.0);    // exponent
  CHECK(parse_size("1.5E+2B").si() == 150.0);
  CHECK(parse_size(".5KiB").si() == 512.0);    // leading point
  CHECK(parse_size("+8B").si() == 8.0);
  CHECK(parse_time("-1s").si() == -1.0);       // the sign is kept; range checks belong to the caller
  CHECK(parse_size("  4KiB ").si() == 4096.0); // surrounding spaces
}

TEST_CASE("core::unit_parse: decimal prefixes are exact (the number's exponent moves, nothing is multiplied)") {
  // 16.4 x 1e6 in doubles is 16,399,999.999999998, which the CLI then rejected as "not a whole
  // number of bytes"; read as 16.4e6 it is the double 16,400,000 exactly. Each expectation is the
  // correctly rounded decimal, written as a literal.
  CHECK(parse_size("16.4MB").si() == 16400000.0);
  CHECK(parse_size("0.3GB").si() == 300000000.0);
  CHECK(parse_size("1.1kB").si() == 1100.0);
  CHECK(parse_size("4.1e2MB").si() == 410000000.0);   // the number's own exponent adds to the prefix's
  CHECK(parse_size("1.7e-3GB").si() == 1700000.0);
  CHECK(parse_bandwidth("2.3Gbps").si() == 287500000.0);  // bits: 2.3e9 / 8, the division by 8 is exact
  CHECK(parse_size("0.1MiB").si() == 0.1 * 1048576.0); // binary prefixes multiply (exact: a power of two)
  CHECK(parse_bandwidth("12.3GB/s").si() == 12300000000.0);
  CHECK(parse_bandwidth("0.7Gbps").si() == 87500000.0);
  CHECK(parse_time("0.1ms").si() == 1e-4);
  CHECK(parse_time("2.2us").si() == 2.2e-6);
  CHECK(parse_time("0.3ns").si() == 3e-10);
  CHECK(parse_time("1.5min").si() == 90.0);
  CHECK(parse_time("0.5h").si() == 1800.0);
  CHECK(parse_energy("1.1kWh").si() == 3960000.0);
  CHECK(parse_flop_rate("19.5TFLOPS").si() == 19.5e12);
  CHECK(parse_time("-2.2ms").si() == -2.2e-3);
  CHECK(parse_size("+1.1kB").si() == 1100.0);
  // Range errors are still reported for the value as written.
  CHECK_THROWS_AS((void)parse_size("1e29PB"), ValueError);
  CHECK_THROWS_AS((void)parse_time("1e-25ps"), ValueError);
  CHECK_THROWS_AS((void)parse_size("1e999999999GB"), ValueError);
}

TEST_CASE("core::unit_parse: rejections say what was expected and what was found") {
  SUBCASE("empty") {
    CHECK_THROWS_WITH_AS((void)parse_bandwidth(""), "expected a bandwidth with unit (e.g. \"200Gbps\"), got an empty string", ValueError);
    CHECK_THROWS_WITH_AS((void)parse_bandwidth("   "), "expected a bandwidth with unit (e.g. \"200Gbps\"), got an empty string", ValueError);
  }
  SUBCASE("bare number") {
    CHECK_THROWS_WITH_AS((void)parse_bandwidth("400"), "expected a bandwidth with unit (e.g. \"200Gbps\"), got \"400\" with no unit", ValueError);
  }
  SUBCASE("no number") {
    CHECK_THROWS_WITH_AS((void)parse_size("GB"), "expected a size with unit (e.g. \"40GiB\"), got \"GB\"", ValueError);
    CHECK_THROWS_WITH_AS((void)parse_size("fast"), "expected a size with unit (e.g. \"40GiB\"), got \"fast\"", ValueError);
    CHECK_THROWS_WITH_AS((void)parse_size("-"), "expected a size with unit (e.g. \"40GiB\"), got \"-\"", ValueError);
  }
  SUBCASE("NaN, infinity and hexadecimal are not numbers here") {
    CHECK_THROWS_WITH_AS((void)parse_size("nanGB"), "expected a size with unit (e.g. \"40GiB\"), got \"nanGB\"", ValueError);
    CHECK_THROWS_WITH_AS((void)parse_size("infGB"), "expected a size with unit (e.g. \"40GiB\"), got \"infGB\"", ValueError);
    CHECK_THROWS_AS((void)parse_size("0x10B"), ValueError);
  }
  SUBCASE("overflow") {
    CHECK_THROWS_WITH_AS((void)parse_size("1e400B"), "number out of range in \"1e400B\": size values must be finite", ValueError);
    // finite number, but the product with the unit overflows
    CHECK_THROWS_WITH_AS((void)parse_size("1e300PiB"), "number out of range in \"1e300PiB\": size values must be finite", ValueError);
    // finite, but beyond what the sums and ratios downstream survive (768 switches of 1e308 W)
    CHECK_THROWS_WITH_AS((void)parse_power("1e308W"),
                         "number out of range in \"1e308W\": power values must be 0 or of magnitude 1e-30 to 1e30 W", ValueError);
    CHECK_THROWS_WITH_AS((void)parse_bandwidth("1e-300Gbps"),
                         "number out of range in \"1e-300Gbps\": bandwidth values must be 0 or of magnitude 1e-30 to 1e30 B/s",
                         ValueError);
    CHECK(parse_size("1e30B").si() == 1e30);
  }
  SUBCASE("unknown unit with a suggestion") {
    CHECK_THROWS_WITH_AS((void)parse_bandwidth("25GBs"),
                         "unknown bandwidth unit \"GBs\" in \"25GBs\" (did you mean \"GB/s\"?); valid: B/s, kB/s, KB/s, "
                         "MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, bps, kbps, Kbps, Mbps, Gbps, Tbps, b/s, kb/s, Mb/s, "
                         "Gb/s, Tb/s",
                         ValueError);
    CHECK_THROWS_WITH_AS((void)parse_time("3 secs"),
                         "unknown time unit \"secs\" in \"3 secs\"; valid: ps, ns, us, \xC2\xB5s, ms, s, min, h, d",
                         ValueError);
  }
  SUBCASE("a unit of another dimension") {
    CHECK_THROWS_WITH_AS((void)parse_bandwidth("25GB"),
                         "expected a bandwidth with unit (e.g. \"200Gbps\"), got \"25GB\", which is a size", ValueError);
    CHECK_THROWS_WITH_AS((void)parse_size("1.5us"), "expected a size with unit (e.g. \"40GiB\"), got \"1.5us\", which is a time",
                         ValueError);
    CHECK_THROWS_WITH_AS((void)parse_power("5kWh"), "expected a power with unit (e.g. \"2.5kW\"), got \"5kWh\", which is an energy",
                         ValueError);
    CHECK_THROWS_WITH_AS((void)parse_flop_rate("107TFLOP"),
                         "expected a FLOP rate with unit (e.g. \"107TFLOPS\"), got \"107TFLOP\", which is a FLOP count",
                         ValueError);
  }
  SUBCASE("units are case-sensitive") {
    CHECK_THROWS_AS((void)parse_size("40gb"), ValueError);
    CHECK_THROWS_AS((void)parse_bandwidth("200GBPS"), ValueError);
  }
  SUBCASE("trailing garbage") {
    CHECK_THROWS_AS((void)parse_size("40GB extra"), ValueError);
    CHECK_THROWS_AS((void)parse_size("4.0.1GB"), ValueError);
  }
}
