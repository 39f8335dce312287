// Tests of the strong unit types.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <type_traits>

#include "core/units.hpp"

using namespace ffsim;
using namespace ffsim::literals;

TEST_CASE("core::units: dimensions combine and cancel") {
  // 64 MiB over 400 GB/s plus 2 us: 67108864 / 400e9 + 2e-6 s
  const Seconds t = 64_MiB / 400_GBps + 2_us;
  CHECK(t.si() == doctest::Approx(67108864.0 / 400e9 + 2e-6).epsilon(1e-15).scale(ffsim::testing::kRelative));
  const Bytes b = 25_GBps * 2_s;
  CHECK(b.si() == doctest::Approx(50e9));
  // A ratio of two like quantities is a plain double.
  static_assert(std::is_same_v<decltype(1_GiB / 1_MiB), double>);
  CHECK(1_GiB / 1_MiB == doctest::Approx(1024.0));
  // bits vs bytes: 200 Gb/s = 25 GB/s.
  CHECK(200_Gbps == 25_GBps);
  // flop rate x time = flops; power x time = energy.
  static_assert(std::is_same_v<decltype(107_TFLOPS * 1_s), Flops>);
  static_assert(std::is_same_v<decltype(2.5_kW * 1_s), Joules>);
  CHECK((2.5_kW * 3600_s).si() == doctest::Approx(9e6));
}

TEST_CASE("core::units: ordering and min/max") {
  CHECK(1_MiB < 1_GiB);
  CHECK(ffsim::min(27_GBps, 37.5_GBps) == 27_GBps);
  CHECK(ffsim::max(27_GBps, 37.5_GBps) == 37.5_GBps);
  CHECK(-(1_s) < 0_s);
}
