// AVX2 reduce kernels: 8 fp32 lanes, 128 bytes of every input per step, software prefetch, scalar
// head/tail, optional streaming stores.
// SPDX-License-Identifier: Apache-2.0
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "reduce_kernels.hpp"

// Compiled for every target; only called after isa_supported(Isa::Avx2) (see reduce.cpp).
#define FFSIM_AVX2 __attribute__((target("avx2,f16c")))
#define FFSIM_AVX2_INLINE FFSIM_AVX2 __attribute__((always_inline)) inline

namespace ffsim::hfreduce::detail {
namespace {

constexpr int kLanes = 8;
// Software prefetch distance into every input (bytes), as in reduce_avx512.cpp.
constexpr int kPrefetch = 1024;

// Prefetches the `lines` cache lines that start kPrefetch bytes after p.
FFSIM_AVX2_INLINE void prefetch_ahead(const void* p, int lines) {
  for (int c = 0; c < lines; ++c) _mm_prefetch(static_cast<const char*>(p) + kPrefetch + 64 * c, _MM_HINT_T0);
}

struct F32 {
  static constexpr DType kType = DType::F32;
  using Storage = float;
  FFSIM_AVX2_INLINE static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  FFSIM_AVX2_INLINE static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  FFSIM_AVX2_INLINE static void stream(float* p, __m256 v) { _mm256_stream_ps(p, v); }
};

// bf16 <-> fp32 by shifting; rounding as float_to_bf16 (RNE, NaN quieted) on 32-bit integer lanes.
struct Bf16 {
  static constexpr DType kType = DType::BF16;
  using Storage = std::uint16_t;
  FFSIM_AVX2_INLINE static __m128i narrow(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(bits, 16);
    const __m256i bias = _mm256_add_epi32(_mm256_and_si256(high, _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7FFF));
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
    const __m256i quiet = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i result = _mm256_blendv_epi8(rounded, quiet, nan);
    // every lane is in [0, 0xFFFF], so the saturating pack is exact
    return _mm_packus_epi32(_mm256_castsi256_si128(result), _mm256_extracti128_si256(result, 1));
  }
  FFSIM_AVX2_INLINE static __m256 load(const std::uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  FFSIM_AVX2_INLINE static void store(std::uint16_t* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), narrow(v));
  }
  FFSIM_AVX2_INLINE static void stream(std::uint16_t* p, __m256 v) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(p), narrow(v));
  }
};

// fp16 via F16C (exact widening, RNE narrowing).
struct F16 {
  static constexpr DType kType = DType::F16;
  using Storage = std::uint16_t;
  static constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  FFSIM_AVX2_INLINE static __m256 load(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  FFSIM_AVX2_INLINE static void store(std::uint16_t* p, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, kRound));
  }
  FFSIM_AVX2_INLINE static void stream(std::uint16_t* p, __m256 v) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, kRound));
  }
};

template <class V>
FFSIM_AVX2 void sum_avx2(void* out_bytes, const void* const* in_bytes, int k, std::size_t count, bool nontemporal) {
  using S = typename V::Storage;
  S* out = static_cast<S*>(out_bytes);
  const S* const* in = reinterpret_cast<const S* const*>(in_bytes);
  std::size_t i = 0;
  const auto address = reinterpret_cast<std::uintptr_t>(out);
  if (nontemporal && address % sizeof(S) != 0) nontemporal = false;  // cannot reach a 64-byte boundary
  if (nontemporal) {
    const std::size_t head = std::min(count, (64 - address % 64) % 64 / sizeof(S));
    sum_elements<V::kType>(out, in, k, 0, head);
    i = head;
  }
  // U vectors per step: 128 bytes of every input (two cache lines) whatever the element size.
  constexpr int U = static_cast<int>(128 / (kLanes * sizeof(S)));
  for (; i + U * kLanes <= count; i += U * kLanes) {
    __m256 a[U];
    prefetch_ahead(in[0] + i, 2);
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) a[u] = V::load(in[0] + i + u * kLanes);
    for (int j = 1; j < k; ++j) {
      const S* p = in[j] + i;
      prefetch_ahead(p, 2);
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) a[u] = _mm256_add_ps(a[u], V::load(p + u * kLanes));
    }
    if (nontemporal) {
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) V::stream(out + i + u * kLanes, a[u]);
    } else {
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) V::store(out + i + u * kLanes, a[u]);
    }
  }
  for (; i + kLanes <= count; i += kLanes) {
    __m256 acc = V::load(in[0] + i);
    for (int j = 1; j < k; ++j) acc = _mm256_add_ps(acc, V::load(in[j] + i));
    if (nontemporal) {
      V::stream(out + i, acc);
    } else {
      V::store(out + i, acc);
    }
  }
  sum_elements<V::kType>(out, in, k, i, count);
  if (nontemporal) _mm_sfence();
}

// bf16 with the widening done by unpacking against zero: for 16 bf16 values x, unpacklo_epi16(0, x)
// puts elements 0-3 and 8-11 in the high halves of 32-bit lanes (exactly their fp32 value) and
// unpackhi elements 4-7 and 12-15; packus_epi32 of the two rounded halves restores the order lane by
// lane. One load and two unpacks per 16 inputs instead of two loads, two widenings and two shifts,
// which is what kept the AVX2 bf16 path below the memory bound. Each lane still sums in[0], in[1], ...
// in order, as the scalar reference.
// The bf16 bits of v (RNE, NaN quieted, as Bf16::narrow) in the low half of each 32-bit lane.
FFSIM_AVX2_INLINE __m256i bf16_rounded_lanes(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i high = _mm256_srli_epi32(bits, 16);
  const __m256i bias = _mm256_add_epi32(_mm256_and_si256(high, _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7FFF));
  const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
  const __m256i quiet = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  return _mm256_blendv_epi8(r, quiet, nan);
}

FFSIM_AVX2 void sum_avx2_bf16(void* out_bytes, const void* const* in_bytes, int k, std::size_t count, bool nontemporal) {
  using S = std::uint16_t;
  S* out = static_cast<S*>(out_bytes);
  const S* const* in = reinterpret_cast<const S* const*>(in_bytes);
  std::size_t i = 0;
  const auto address = reinterpret_cast<std::uintptr_t>(out);
  if (nontemporal && address % sizeof(S) != 0) nontemporal = false;
  if (nontemporal) {
    const std::size_t head = std::min(count, (64 - address % 64) % 64 / sizeof(S));
    sum_elements<DType::BF16>(out, in, k, 0, head);
    i = head;
  }
  const __m256i zero = _mm256_setzero_si256();
  // 64 values (128 bytes, two cache lines) of every input per step: 4 loads, 8 fp32 accumulators.
  constexpr int X = 4;
  for (; i + 16 * X <= count; i += 16 * X) {
    __m256 lo[X], hi[X];
    prefetch_ahead(in[0] + i, 2);
#pragma GCC unroll 4
    for (int x = 0; x < X; ++x) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in[0] + i + 16 * x));
      lo[x] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, v));
      hi[x] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, v));
    }
    for (int j = 1; j < k; ++j) {
      prefetch_ahead(in[j] + i, 2);
#pragma GCC unroll 4
      for (int x = 0; x < X; ++x) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in[j] + i + 16 * x));
        lo[x] = _mm256_add_ps(lo[x], _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, v)));
        hi[x] = _mm256_add_ps(hi[x], _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, v)));
      }
    }
#pragma GCC unroll 4
    for (int x = 0; x < X; ++x) {
      // lanes hold 0..0xFFFF: the saturating pack is exact
      const __m256i y = _mm256_packus_epi32(bf16_rounded_lanes(lo[x]), bf16_rounded_lanes(hi[x]));
      if (nontemporal)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i + 16 * x), y);
      else
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + 16 * x), y);
    }
  }
  for (; i + kLanes <= count; i += kLanes) {
    __m256 acc = Bf16::load(in[0] + i);
    for (int j = 1; j < k; ++j) acc = _mm256_add_ps(acc, Bf16::load(in[j] + i));
    if (nontemporal) {
      Bf16::stream(out + i, acc);
    } else {
      Bf16::store(out + i, acc);
    }
  }
  sum_elements<DType::BF16>(out, in, k, i, count);
  if (nontemporal) _mm_sfence();
}

}  // namespace

ReduceKernel avx2_kernel(DType dtype) noexcept {
  switch (dtype) {
    case DType::F32:
      return &sum_avx2<F32>;
    case DType::BF16:
      return &sum_avx2_bf16;
    case DType::F16:
      return &sum_avx2<F16>;
  }
  return nullptr;
}

}  // namespace ffsim::hfreduce::detail
