// Tests of the scalar fp32 <-> bf16/fp16 conversions against independent derivations and F16C.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ffsim/hfreduce/cpu.hpp"
#include "ffsim/hfreduce/dtype.hpp"
#include "ffsim/hfreduce/error.hpp"

using namespace ffsim::hfreduce;

namespace {

float from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// An independent bf16 rounding: pick the nearer of the two bf16 neighbours of |value| (truncation,
// and one step further from zero) in double arithmetic; on a tie the one with an even last bit.
// Past the largest bf16 the next step is 2^128, which IEEE rounding treats as infinity.
std::uint16_t bf16_by_neighbours(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto toward_zero = static_cast<std::uint16_t>(bits >> 16);
  const auto away = static_cast<std::uint16_t>(toward_zero + 1);
  const double magnitude = std::fabs(static_cast<double>(value));
  const double low = std::fabs(static_cast<double>(bf16_to_float(BFloat16{toward_zero})));
  const float next = bf16_to_float(BFloat16{away});
  const double high = std::isinf(next) ? std::ldexp(1.0, 128) : std::fabs(static_cast<double>(next));
  if (magnitude - low < high - magnitude) return toward_zero;
  if (high - magnitude < magnitude - low) return away;
  return (toward_zero & 1u) == 0 ? toward_zero : away;
}

__attribute__((target("f16c"))) std::uint16_t f16c_round(float value) {
  const __m128i half = _mm_cvtps_ph(_mm_set1_ps(value), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return static_cast<std::uint16_t>(_mm_extract_epi16(half, 0));
}

__attribute__((target("f16c"))) std::uint32_t f16c_widen(std::uint16_t half) {
  return std::bit_cast<std::uint32_t>(_mm_cvtss_f32(_mm_cvtph_ps(_mm_set1_epi16(static_cast<short>(half)))));
}

}  // namespace

TEST_CASE("dtype: names round-trip and unknown names list the valid ones") {
  for (DType dtype : {DType::F32, DType::BF16, DType::F16}) CHECK(parse_dtype(dtype_name(dtype)) == dtype);
  try {
    (void)parse_dtype("fp8");
    FAIL("fp8 was accepted");
  } catch (const KernelError& e) {
    CHECK(e.message() == "unknown dtype \"fp8\"; valid: fp32, bf16, fp16");
  }
}

TEST_CASE("dtype: bf16 rounds to nearest even") {
  // 1 + 2^-8 lies halfway between bf16 1.0 (0x3F80) and 1 + 2^-7 (0x3F81): the even one, 0x3F80.
  CHECK(float_to_bf16(1.0f + 0x1p-8f).bits == 0x3F80);
  // 1 + 3 * 2^-8 lies halfway between 0x3F81 and 0x3F82: even is 0x3F82.
  CHECK(float_to_bf16(1.0f + 3 * 0x1p-8f).bits == 0x3F82);
  // just above the first halfway point rounds up: 1 + 2^-8 + 2^-23 -> 0x3F81.
  CHECK(float_to_bf16(1.0f + 0x1p-8f + 0x1p-23f).bits == 0x3F81);
  // the largest finite fp32 is above bf16's largest (0x7F7F) by more than half a step: +inf.
  CHECK(float_to_bf16(std::numeric_limits<float>::max()).bits == 0x7F80);
  CHECK(float_to_bf16(-std::numeric_limits<float>::infinity()).bits == 0xFF80);
  // A signalling NaN (quiet bit 22 clear, payload in the top bits) stays NaN, quieted: 0x7F81 -> 0x7FC1.
  CHECK(float_to_bf16(from_bits(0x7F810000u)).bits == 0x7FC1);
  // A NaN whose payload lives only in the low 16 bits must not turn into infinity.
  CHECK(float_to_bf16(from_bits(0x7F800001u)).bits == 0x7FC0);
}

TEST_CASE("dtype: bf16 rounding equals the nearest-neighbour derivation on a sweep of fp32 values") {
  // Every 4099th bit pattern (about a million, covering every exponent, both signs, and low bits
  // near the halfway point), finite ones only; NaNs are covered above.
  int checked = 0;
  for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << 32); bits += 4099) {
    const float value = from_bits(static_cast<std::uint32_t>(bits));
    if (std::isnan(value) || std::isinf(value)) continue;
    REQUIRE_MESSAGE(float_to_bf16(value).bits == bf16_by_neighbours(value), "bits 0x", std::hex, bits);
    ++checked;
  }
  CHECK(checked > 1000000);
}

TEST_CASE("dtype: fp16 conversions equal F16C on every half and a sweep of floats") {
  if (!isa_supported(Isa::Avx2)) {
    MESSAGE("skipped: this CPU has no F16C to compare with");
    return;
  }
  for (std::uint32_t half = 0; half < 65536; ++half) {
    const auto h = static_cast<std::uint16_t>(half);
    REQUIRE_MESSAGE(std::bit_cast<std::uint32_t>(half_to_float(Float16{h})) == f16c_widen(h), "half 0x", std::hex, half);
  }
  for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << 32); bits += 997) {
    const float value = from_bits(static_cast<std::uint32_t>(bits));
    REQUIRE_MESSAGE(float_to_half(value).bits == f16c_round(value), "bits 0x", std::hex, bits);
  }
}

TEST_CASE("dtype: fp16 edge values") {
  // 65504 is the largest half (0x7BFF); 65520 is halfway to 65536 (the next, unrepresentable
  // step) and rounds to even = infinity; just below it stays 65504.
  CHECK(float_to_half(65504.0f).bits == 0x7BFF);
  CHECK(float_to_half(65520.0f).bits == 0x7C00);
  CHECK(float_to_half(65519.996f).bits == 0x7BFF);
  // 2^-24 is the smallest subnormal (0x0001); 2^-25 is halfway to zero and rounds to even = 0;
  // 3 * 2^-25 is halfway between 1 and 2 units and rounds to 2.
  CHECK(float_to_half(0x1p-24f).bits == 0x0001);
  CHECK(float_to_half(0x1p-25f).bits == 0x0000);
  CHECK(float_to_half(3 * 0x1p-25f).bits == 0x0002);
  CHECK(half_to_float(Float16{0x0001}) == 0x1p-24f);
  CHECK(half_to_float(Float16{0x8000}) == -0.0f);
  CHECK(std::signbit(half_to_float(Float16{0x8000})));
  // signalling half NaN 0x7C01 widens to a quiet fp32 NaN
  CHECK(std::isnan(half_to_float(Float16{0x7C01})));
  CHECK((std::bit_cast<std::uint32_t>(half_to_float(Float16{0x7C01})) & 0x00400000u) != 0);
}
