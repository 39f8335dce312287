// Internal: FNV-1a, a small stable hash for descriptions and tag fingerprints (same on every rank).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string_view>

namespace ffsim::hfreduce::detail {

inline std::uint64_t fnv1a(std::string_view text) noexcept {
  std::uint64_t hash = 1469598103934665603ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace ffsim::hfreduce::detail
