// Random numbers for the failure processes, identical on every platform: std::mt19937_64's output
// is fixed by the standard, but std::*_distribution's algorithms are not, so the distributions are
// written here (inverse CDF from 53 uniform bits; Lemire-style rejection for indices).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace ffsim::ops {

/// SplitMix64 (Steele, Lea, Flood 2014): spreads a seed and a stream number into a 64-bit state.
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Rng {
public:
  /// Stream `stream` of seed `seed`: different streams are independent generators.
  Rng(std::uint64_t seed, std::uint64_t stream) : eng_(splitmix64(seed ^ splitmix64(stream + 1))) {}
  /// Uniform in (0, 1]: (k + 1) / 2^53 for k uniform in [0, 2^53).
  double uniform_open0() { return static_cast<double>((eng_() >> 11) + 1) * 0x1.0p-53; }
  /// Exponential with rate `rate` (> 0): -ln(U) / rate, U uniform in (0, 1].
  double exponential(double rate) { return -std::log(uniform_open0()) / rate; }
  /// Uniform integer in [0, n), n > 0, without modulo bias: values below 2^64 mod n are rejected.
  std::uint64_t index(std::uint64_t n) {
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    for (;;) {
      const std::uint64_t x = eng_();
      if (x >= threshold) return x % n;
    }
  }

private:
  std::mt19937_64 eng_;
};

}  // namespace ffsim::ops
