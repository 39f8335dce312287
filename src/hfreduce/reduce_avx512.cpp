// AVX-512 reduce kernels: 16 fp32 lanes, 4 vectors per step, masked head/tail, optional streaming stores.
// SPDX-License-Identifier: Apache-2.0
// GCC 12's _mm512_undefined_*() (`__m512 __Y = __Y;`) trips -Wmaybe-uninitialized once inlined
// (GCC bug 105593, fixed in GCC 13); the value is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "reduce_kernels.hpp"

// Compiled for every target; only called after isa_supported(Isa::Avx512) (see reduce.cpp).
#define FFSIM_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c")))
#define FFSIM_AVX512_INLINE FFSIM_AVX512 __attribute__((always_inline)) inline

namespace ffsim::hfreduce::detail {
namespace {

constexpr int kLanes = 16;

struct F32 {
  using Storage = float;
  FFSIM_AVX512_INLINE static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  FFSIM_AVX512_INLINE static __m512 load_masked(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
  FFSIM_AVX512_INLINE static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  FFSIM_AVX512_INLINE static void stream(float* p, __m512 v) { _mm512_stream_ps(p, v); }
  FFSIM_AVX512_INLINE static void store_masked(float* p, __mmask16 m, __m512 v) { _mm512_mask_storeu_ps(p, m, v); }
};

// bf16 <-> fp32 by shifting; rounding as float_to_bf16 (RNE, NaN quieted) on 32-bit integer lanes.
struct Bf16 {
  using Storage = std::uint16_t;
  FFSIM_AVX512_INLINE static __m512 widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  FFSIM_AVX512_INLINE static __m256i narrow(__m512 v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i high = _mm512_srli_epi32(bits, 16);
    const __m512i bias = _mm512_add_epi32(_mm512_and_si512(high, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7FFF));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, bias), 16);
    const __m512i quiet = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet));
  }
  FFSIM_AVX512_INLINE static __m512 load(const std::uint16_t* p) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  FFSIM_AVX512_INLINE static __m512 load_masked(const std::uint16_t* p, __mmask16 m) {
    return widen(_mm256_maskz_loadu_epi16(m, p));
  }
  FFSIM_AVX512_INLINE static void store(std::uint16_t* p, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), narrow(v));
  }
  FFSIM_AVX512_INLINE static void stream(std::uint16_t* p, __m512 v) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), narrow(v));
  }
  FFSIM_AVX512_INLINE static void store_masked(std::uint16_t* p, __mmask16 m, __m512 v) {
    _mm256_mask_storeu_epi16(p, m, narrow(v));
  }
};

// fp16 via the F16C-equivalent AVX-512F conversions (exact widening, RNE narrowing).
struct F16 {
  using Storage = std::uint16_t;
  static constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  FFSIM_AVX512_INLINE static __m512 load(const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  FFSIM_AVX512_INLINE static __m512 load_masked(const std::uint16_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
  FFSIM_AVX512_INLINE static void store(std::uint16_t* p, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, kRound));
  }
  FFSIM_AVX512_INLINE static void stream(std::uint16_t* p, __m512 v) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, kRound));
  }
  FFSIM_AVX512_INLINE static void store_masked(std::uint16_t* p, __mmask16 m, __m512 v) {
    _mm256_mask_storeu_epi16(p, m, _mm512_cvtps_ph(v, kRound));
  }
};

// Elements [i, i + n) with masked vectors; n may exceed one vector.
template <class V>
FFSIM_AVX512_INLINE void sum_masked(typename V::Storage* out, const typename V::Storage* const* in, int k,
                                    std::size_t i, std::size_t n) {
  while (n > 0) {
    const std::size_t lanes = std::min<std::size_t>(n, kLanes);
    const auto mask = static_cast<__mmask16>((1u << lanes) - 1u);
    __m512 acc = V::load_masked(in[0] + i, mask);
    for (int j = 1; j < k; ++j) acc = _mm512_add_ps(acc, V::load_masked(in[j] + i, mask));
    V::store_masked(out + i, mask, acc);
    i += lanes;
    n -= lanes;
  }
}

template <class V>
FFSIM_AVX512 void sum_avx512(void* out_bytes, const void* const* in_bytes, int k, std::size_t count,
                             bool nontemporal) {
  using S = typename V::Storage;
  S* out = static_cast<S*>(out_bytes);
  const S* const* in = reinterpret_cast<const S* const*>(in_bytes);
  std::size_t i = 0;
  const auto address = reinterpret_cast<std::uintptr_t>(out);
  if (nontemporal && address % sizeof(S) != 0) nontemporal = false;  // cannot reach a 64-byte boundary
  if (nontemporal) {
    const std::size_t head = std::min(count, (64 - address % 64) % 64 / sizeof(S));
    sum_masked<V>(out, in, k, 0, head);
    i = head;
  }
  for (; i + 4 * kLanes <= count; i += 4 * kLanes) {
    __m512 a0 = V::load(in[0] + i);
    __m512 a1 = V::load(in[0] + i + kLanes);
    __m512 a2 = V::load(in[0] + i + 2 * kLanes);
    __m512 a3 = V::load(in[0] + i + 3 * kLanes);
    for (int j = 1; j < k; ++j) {
      const S* p = in[j] + i;
      a0 = _mm512_add_ps(a0, V::load(p));
      a1 = _mm512_add_ps(a1, V::load(p + kLanes));
      a2 = _mm512_add_ps(a2, V::load(p + 2 * kLanes));
      a3 = _mm512_add_ps(a3, V::load(p + 3 * kLanes));
    }
    if (nontemporal) {
      V::stream(out + i, a0);
      V::stream(out + i + kLanes, a1);
      V::stream(out + i + 2 * kLanes, a2);
      V::stream(out + i + 3 * kLanes, a3);
    } else {
      V::store(out + i, a0);
      V::store(out + i + kLanes, a1);
      V::store(out + i + 2 * kLanes, a2);
      V::store(out + i + 3 * kLanes, a3);
    }
  }
  for (; i + kLanes <= count; i += kLanes) {
    __m512 acc = V::load(in[0] + i);
    for (int j = 1; j < k; ++j) acc = _mm512_add_ps(acc, V::load(in[j] + i));
    if (nontemporal) {
      V::stream(out + i, acc);
    } else {
      V::store(out + i, acc);
    }
  }
  sum_masked<V>(out, in, k, i, count - i);
  if (nontemporal) _mm_sfence();
}

}  // namespace

ReduceKernel avx512_kernel(DType dtype) noexcept {
  switch (dtype) {
    case DType::F32:
      return &sum_avx512<F32>;
    case DType::BF16:
      return &sum_avx512<Bf16>;
    case DType::F16:
      return &sum_avx512<F16>;
  }
  return nullptr;
}

}  // namespace ffsim::hfreduce::detail
