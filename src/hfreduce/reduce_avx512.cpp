// AVX-512 reduce kernels: k fixed at compile time (1..16), 16 fp32 lanes, 64-byte units (16 fp32, or
// 32 bf16/fp16 values in two accumulators), 4 units per step, no software prefetch (both by
// measurement), masked head and tail, optional streaming stores.
// SPDX-License-Identifier: Apache-2.0
// GCC 12's _mm512_undefined_*() (`__m512 __Y = __Y;`) trips -Wmaybe-uninitialized once inlined
// (GCC bug 105593, fixed in GCC 13); the value is never read.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "reduce_kernels.hpp"

// Compiled for every target; only called after isa_supported(Isa::Avx512) (see reduce.cpp).
#define FFSIM_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c")))
#define FFSIM_AVX512_INLINE FFSIM_AVX512 __attribute__((always_inline)) inline

namespace ffsim::hfreduce::detail {
namespace {

// Every element type works in units of 64 bytes of each input (one cache line when aligned):
// kElems values held in kAcc fp32 accumulators of 16 lanes. first() loads a unit into the
// accumulators, add() adds the next input's unit, store() rounds and writes; the _masked forms take
// the first n (< kElems) values only, reading and writing nothing beyond them.

struct F32 {
  using Storage = float;
  static constexpr int kElems = 16;
  static constexpr int kAcc = 1;
  FFSIM_AVX512_INLINE static void first(const float* p, __m512* a) { a[0] = _mm512_loadu_ps(p); }
  FFSIM_AVX512_INLINE static void add(const float* p, __m512* a) { a[0] = _mm512_add_ps(a[0], _mm512_loadu_ps(p)); }
  template <bool NT>
  FFSIM_AVX512_INLINE static void store(float* p, const __m512* a) {
    if constexpr (NT) {
      _mm512_stream_ps(p, a[0]);
    } else {
      _mm512_storeu_ps(p, a[0]);
    }
  }
  FFSIM_AVX512_INLINE static __mmask16 mask(std::size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  FFSIM_AVX512_INLINE static void first_masked(const float* p, std::size_t n, __m512* a) {
    a[0] = _mm512_maskz_loadu_ps(mask(n), p);
  }
  FFSIM_AVX512_INLINE static void add_masked(const float* p, std::size_t n, __m512* a) {
    a[0] = _mm512_add_ps(a[0], _mm512_maskz_loadu_ps(mask(n), p));
  }
  FFSIM_AVX512_INLINE static void store_masked(float* p, std::size_t n, const __m512* a) {
    _mm512_mask_storeu_ps(p, mask(n), a[0]);
  }
};

// bf16: one 64-byte load holds 32 values; as 16 32-bit lanes, the even-indexed value of each pair
// sits in the low half and the odd one in the high half. A bf16 is the high half of its fp32, so
// `lane << 16` is the even values and `lane & 0xFFFF0000` the odd ones, exactly: two single-uop
// integer ops per 32 values, no shuffles. Each accumulator lane still sums in[0], in[1], ... in
// order. On store each accumulator is rounded as float_to_bf16 does (RNE: + 0x7FFF + the lowest kept
// bit; NaN: quiet bit set, no rounding) and the 16-bit halves are merged back in place: the even
// values' rounded bits shifted down, the odd ones' left in the high halves.
struct Bf16 {
  using Storage = std::uint16_t;
  static constexpr int kElems = 32;
  static constexpr int kAcc = 2;
  FFSIM_AVX512_INLINE static void split(__m512i x, __m512* a) {
    a[0] = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
    a[1] = _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
  FFSIM_AVX512_INLINE static void first(const std::uint16_t* p, __m512* a) { split(_mm512_loadu_si512(p), a); }
  FFSIM_AVX512_INLINE static void add(const std::uint16_t* p, __m512* a) {
    __m512 b[2];
    split(_mm512_loadu_si512(p), b);
    a[0] = _mm512_add_ps(a[0], b[0]);
    a[1] = _mm512_add_ps(a[1], b[1]);
  }
  // float_to_bf16 in the high half of each 32-bit lane (the low half is left over).
  FFSIM_AVX512_INLINE static __m512i round_high(__m512 v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i lowest_kept = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(lowest_kept, _mm512_set1_epi32(0x7FFF)));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_or_epi32(rounded, nan, bits, _mm512_set1_epi32(0x00400000));
  }
  FFSIM_AVX512_INLINE static __m512i narrow(const __m512* a) {
    const __m512i even = _mm512_srli_epi32(round_high(a[0]), 16);
    return _mm512_mask_blend_epi16(static_cast<__mmask32>(0xAAAAAAAAu), even, round_high(a[1]));
  }
  template <bool NT>
  FFSIM_AVX512_INLINE static void store(std::uint16_t* p, const __m512* a) {
    if constexpr (NT) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(p), narrow(a));
    } else {
      _mm512_storeu_si512(p, narrow(a));
    }
  }
  FFSIM_AVX512_INLINE static __mmask32 mask(std::size_t n) { return static_cast<__mmask32>((1ull << n) - 1u); }
  FFSIM_AVX512_INLINE static void first_masked(const std::uint16_t* p, std::size_t n, __m512* a) {
    split(_mm512_maskz_loadu_epi16(mask(n), p), a);
  }
  FFSIM_AVX512_INLINE static void add_masked(const std::uint16_t* p, std::size_t n, __m512* a) {
    __m512 b[2];
    split(_mm512_maskz_loadu_epi16(mask(n), p), b);
    a[0] = _mm512_add_ps(a[0], b[0]);
    a[1] = _mm512_add_ps(a[1], b[1]);
  }
  FFSIM_AVX512_INLINE static void store_masked(std::uint16_t* p, std::size_t n, const __m512* a) {
    _mm512_mask_storeu_epi16(p, mask(n), narrow(a));
  }
};

// fp16 via the F16C-equivalent AVX-512F conversions (exact widening, RNE narrowing): a unit is two
// 32-byte halves of 16 values each.
struct F16 {
  using Storage = std::uint16_t;
  static constexpr int kElems = 32;
  static constexpr int kAcc = 2;
  static constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  FFSIM_AVX512_INLINE static __m512 widen(const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  FFSIM_AVX512_INLINE static void first(const std::uint16_t* p, __m512* a) {
    a[0] = widen(p);
    a[1] = widen(p + 16);
  }
  FFSIM_AVX512_INLINE static void add(const std::uint16_t* p, __m512* a) {
    a[0] = _mm512_add_ps(a[0], widen(p));
    a[1] = _mm512_add_ps(a[1], widen(p + 16));
  }
  template <bool NT>
  FFSIM_AVX512_INLINE static void store(std::uint16_t* p, const __m512* a) {
    const __m256i lo = _mm512_cvtps_ph(a[0], kRound);
    const __m256i hi = _mm512_cvtps_ph(a[1], kRound);
    if constexpr (NT) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p), lo);
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p + 16), hi);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + 16), hi);
    }
  }
  // The first min(n, 16) values in the low half, the rest (n - 16 when n > 16) in the high half.
  FFSIM_AVX512_INLINE static __mmask16 mask(std::size_t n, int half) {
    const std::size_t lanes = half == 0 ? std::min<std::size_t>(n, 16) : (n > 16 ? n - 16 : 0);
    return static_cast<__mmask16>((1u << lanes) - 1u);
  }
  FFSIM_AVX512_INLINE static __m512 widen_masked(const std::uint16_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
  FFSIM_AVX512_INLINE static void first_masked(const std::uint16_t* p, std::size_t n, __m512* a) {
    a[0] = widen_masked(p, mask(n, 0));
    a[1] = widen_masked(p + 16, mask(n, 1));
  }
  FFSIM_AVX512_INLINE static void add_masked(const std::uint16_t* p, std::size_t n, __m512* a) {
    a[0] = _mm512_add_ps(a[0], widen_masked(p, mask(n, 0)));
    a[1] = _mm512_add_ps(a[1], widen_masked(p + 16, mask(n, 1)));
  }
  FFSIM_AVX512_INLINE static void store_masked(std::uint16_t* p, std::size_t n, const __m512* a) {
    _mm256_mask_storeu_epi16(p, mask(n, 0), _mm512_cvtps_ph(a[0], kRound));
    _mm256_mask_storeu_epi16(p + 16, mask(n, 1), _mm512_cvtps_ph(a[1], kRound));
  }
};

// Units per step: 4, i.e. 256 bytes of every input, kept in 4 (fp32) or 8 (bf16, fp16)
// accumulators. Measured on the Zen 5 VM against 1 and 2 (docs/hfreduce.md, "Reduce kernel:
// measured"): never slower beyond the run-to-run noise, faster by a few percent at some sizes.
// No software prefetch: in L2 it cost 15-25% (prefetches take load slots, and the data is there
// already); out of cache it gained nothing that held over repeated runs but for bf16 at 2-4 MiB.
constexpr int kUnits = 4;

// Values [i, i + n) for n < V::kElems: the masked form of one unit.
template <class V, int K>
FFSIM_AVX512_INLINE void sum_masked_unit(typename V::Storage* out, const std::array<const typename V::Storage*, K>& in,
                                         std::size_t i, std::size_t n) {
  __m512 a[V::kAcc];
  V::first_masked(in[0] + i, n, a);
#pragma GCC unroll 16
  for (int j = 1; j < K; ++j) V::add_masked(in[static_cast<std::size_t>(j)] + i, n, a);
  V::store_masked(out + i, n, a);
}

// U consecutive units starting at value i: every input's U units in turn, in input order.
template <class V, int K, bool NT, int U>
FFSIM_AVX512_INLINE void sum_units(typename V::Storage* out, const std::array<const typename V::Storage*, K>& in,
                                   std::size_t i) {
  __m512 a[U][V::kAcc];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) V::first(in[0] + i + u * V::kElems, a[u]);
  // inputs in order (K is a constant: the loop is unrolled and every pointer stays in a register)
#pragma GCC unroll 16
  for (int j = 1; j < K; ++j) {
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) V::add(in[static_cast<std::size_t>(j)] + i + u * V::kElems, a[u]);
  }
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) V::template store<NT>(out + i + u * V::kElems, a[u]);
}

template <class V, int K, bool NT>
FFSIM_AVX512 void sum_fixed(void* out_bytes, const void* const* in_bytes, std::size_t count) {
  using S = typename V::Storage;
  constexpr int U = kUnits;
  S* out = static_cast<S*>(out_bytes);
  std::array<const S*, K> in;
  for (int j = 0; j < K; ++j) in[static_cast<std::size_t>(j)] = static_cast<const S*>(in_bytes[j]);
  const auto address = reinterpret_cast<std::uintptr_t>(out);
  if constexpr (NT) {
    // a streaming store must be to a whole, aligned vector: an output not aligned to its element
    // can never reach a 64-byte boundary, so it takes ordinary stores
    if (address % sizeof(S) != 0) return sum_fixed<V, K, false>(out_bytes, in_bytes, count);
  }
  // Head up to the output's next 64-byte boundary (if its elements can reach one), so that every
  // unit stores one whole cache line.
  std::size_t i = 0;
  if (address % sizeof(S) == 0) {
    i = std::min(count, (64 - address % 64) % 64 / sizeof(S));
    if (i > 0) sum_masked_unit<V, K>(out, in, 0, i);
  }
  for (; i + U * V::kElems <= count; i += U * V::kElems) sum_units<V, K, NT, U>(out, in, i);
  for (; i + V::kElems <= count; i += V::kElems) sum_units<V, K, NT, 1>(out, in, i);
  if (i < count) sum_masked_unit<V, K>(out, in, i, count - i);
  if constexpr (NT) _mm_sfence();
}

template <class V, bool NT, int... K>
constexpr std::array<ReduceKernel, sizeof...(K)> table(std::integer_sequence<int, K...>) {
  return {&sum_fixed<V, K + 1, NT>...};
}

template <class V>
ReduceKernel pick(int k, bool nontemporal) noexcept {
  static constexpr auto regular = table<V, false>(std::make_integer_sequence<int, kMaxKernelInputs>{});
  static constexpr auto streaming = table<V, true>(std::make_integer_sequence<int, kMaxKernelInputs>{});
  if (k < 1 || k > kMaxKernelInputs) return nullptr;
  return (nontemporal ? streaming : regular)[static_cast<std::size_t>(k - 1)];
}

}  // namespace

ReduceKernel avx512_kernel(DType dtype, int k, bool nontemporal) noexcept {
  switch (dtype) {
    case DType::F32:
      return pick<F32>(k, nontemporal);
    case DType::BF16:
      return pick<Bf16>(k, nontemporal);
    case DType::F16:
      return pick<F16>(k, nontemporal);
  }
  return nullptr;
}

}  // namespace ffsim::hfreduce::detail
