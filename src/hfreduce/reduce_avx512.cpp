// AVX-512 reduce kernels: 16 fp32 lanes, 256 bytes of every input per step (4 fp32 or 8 bf16/fp16
// vectors), software prefetch, masked head/tail, optional streaming stores.
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
// Software prefetch distance into every input (bytes): measured on the 2-core Zen 5 VM, 1 KiB ahead
// lifted the bf16/fp16 kernels from 0.70-0.80 to about the fp32 kernel's ratio (docs/hfreduce.md).
constexpr int kPrefetch = 1024;

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
  // U vectors per step: 256 bytes of every input (four cache lines) whatever the element size.
  constexpr int U = static_cast<int>(256 / (kLanes * sizeof(S)));
  for (; i + U * kLanes <= count; i += U * kLanes) {
    __m512 a[U];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) _mm_prefetch(reinterpret_cast<const char*>(in[0] + i) + kPrefetch + 64 * c, _MM_HINT_T0);
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) a[u] = V::load(in[0] + i + u * kLanes);
    for (int j = 1; j < k; ++j) {
      const S* p = in[j] + i;
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) _mm_prefetch(reinterpret_cast<const char*>(p) + kPrefetch + 64 * c, _MM_HINT_T0);
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) a[u] = _mm512_add_ps(a[u], V::load(p + u * kLanes));
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
