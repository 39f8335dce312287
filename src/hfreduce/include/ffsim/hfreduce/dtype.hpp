// Element types of hfreduce (fp32, bf16, fp16) and their exact scalar conversions to and from fp32.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ffsim::hfreduce {

/// Element type of a reduced buffer. Sums always accumulate in fp32.
enum class DType { F32, BF16, F16 };

/// Size of one element (in bytes).
constexpr std::size_t dtype_size(DType dtype) noexcept { return dtype == DType::F32 ? 4 : 2; }

/// Registry name: "fp32", "bf16", "fp16".
std::string_view dtype_name(DType dtype) noexcept;

/// Parses a registry name; throws KernelError listing the valid names otherwise.
DType parse_dtype(std::string_view name);

/// bfloat16 storage: the upper 16 bits of an IEEE binary32.
struct BFloat16 {
  std::uint16_t bits;
};

/// IEEE binary16 storage.
struct Float16 {
  std::uint16_t bits;
};

/// bf16 -> fp32, exact (a shift; signalling NaNs stay signalling).
inline float bf16_to_float(BFloat16 value) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(value.bits) << 16);
}

/// fp32 -> bf16, round to nearest even; NaN stays NaN and is quieted (quiet bit 0x0040 set),
/// overflow rounds to infinity as IEEE says. The SIMD paths implement this same formula.
inline BFloat16 float_to_bf16(float value) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return BFloat16{static_cast<std::uint16_t>((bits >> 16) | 0x0040u)};
  }
  const std::uint32_t rounding_bias = 0x7FFFu + ((bits >> 16) & 1u);
  return BFloat16{static_cast<std::uint16_t>((bits + rounding_bias) >> 16)};
}

/// fp16 -> fp32, exact; subnormals are normalised, a NaN keeps its payload and is quieted
/// (as the F16C instruction VCVTPH2PS does).
inline float half_to_float(Float16 value) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(value.bits & 0x8000u) << 16;
  const std::uint32_t exponent = (value.bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = value.bits & 0x3FFu;
  if (exponent == 0x1Fu) {
    const std::uint32_t quiet = mantissa != 0 ? 0x00400000u : 0u;
    return std::bit_cast<float>(sign | 0x7F800000u | quiet | (mantissa << 13));
  }
  if (exponent != 0) {
    // normal: rebias 15 -> 127
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // subnormal: mantissa * 2^-24; shift until the implicit bit (0x400) appears.
  std::uint32_t shifts = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shifts;
  }
  // value = 1.m * 2^(-14 - shifts), biased exponent 127 - 14 - shifts
  return std::bit_cast<float>(sign | ((113u - shifts) << 23) | ((mantissa & 0x3FFu) << 13));
}

/// fp32 -> fp16, round to nearest even, with subnormal results, overflow to infinity and NaN
/// quieted keeping the top payload bits (bit-identical to F16C's VCVTPS2PH with RNE).
inline Float16 float_to_half(float value) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  std::uint32_t result = 0;
  if (magnitude > 0x7F800000u) {
    result = 0x7E00u | ((magnitude >> 13) & 0x3FFu);
  } else if (magnitude >= 0x47800000u) {
    // >= 2^16 (including infinity): beyond the largest half even before rounding
    result = 0x7C00u;
  } else if (magnitude >= 0x38800000u) {
    // >= 2^-14: a normal half; rebias 127 -> 15, then round the 13 dropped bits to nearest even.
    // A carry out of the mantissa bumps the exponent, and 65520 and above become infinity.
    const std::uint32_t odd = (magnitude >> 13) & 1u;
    result = (magnitude - (112u << 23) + 0xFFFu + odd) >> 13;
  } else {
    // below 2^-14: a subnormal half (units of 2^-24) or zero.
    const std::uint32_t exponent = magnitude >> 23;
    if (exponent >= 102u) {
      // value = m * 2^(exponent - 150), m with its implicit bit; in units of 2^-24 that is
      // m >> (126 - exponent), rounded to nearest even. shift is 14..24.
      const std::uint32_t m = (magnitude & 0x7FFFFFu) | 0x800000u;
      const std::uint32_t shift = 126u - exponent;
      const std::uint32_t quotient = m >> shift;
      const std::uint32_t remainder = m & ((1u << shift) - 1u);
      const std::uint32_t half_unit = 1u << (shift - 1u);
      const bool round_up = remainder > half_unit || (remainder == half_unit && (quotient & 1u) != 0);
      result = quotient + (round_up ? 1u : 0u);
    }
    // exponent < 102: below 2^-25, rounds to zero
  }
  return Float16{static_cast<std::uint16_t>(sign | result)};
}

}  // namespace ffsim::hfreduce
