// Hashing helpers shared by the engine's and the platform's open-addressing tables.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

namespace ffsim::core {

/// The first half of MurmurHash3's 64-bit finalizer (fmix64: xor-shift, multiply, xor-shift): keys
/// hashed by multiplications have low bits that see only the inputs' low bits; mixed, the low bits
/// a power-of-two table takes as its slot depend on every input bit.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t h) noexcept {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

}  // namespace ffsim::core
