// AVX2 reduce kernels: k fixed at compile time (1..16), 8 fp32 lanes, 64-byte units (16 fp32, or
// 32 bf16/fp16 values in four accumulators), no software prefetch, 8-value steps and a scalar head
// and tail, optional streaming stores.
// SPDX-License-Identifier: Apache-2.0
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "reduce_kernels.hpp"

// Compiled for every target; only called after isa_supported(Isa::Avx2) (see reduce.cpp).
#define FFSIM_AVX2 __attribute__((target("avx2,f16c")))
#define FFSIM_AVX2_INLINE FFSIM_AVX2 __attribute__((always_inline)) inline

namespace ffsim::hfreduce::detail {
namespace {

// As in reduce_avx512.cpp: first()/add()/store() work on a 64-byte unit of every input (kElems
// values in kAcc accumulators of 8 lanes); load8()/store8() on 8 values for the short remainder.

struct F32 {
  static constexpr DType kType = DType::F32;
  using Storage = float;
  static constexpr int kElems = 16;
  static constexpr int kAcc = 2;
  FFSIM_AVX2_INLINE static void first(const float* p, __m256* a) {
    a[0] = _mm256_loadu_ps(p);
    a[1] = _mm256_loadu_ps(p + 8);
  }
  FFSIM_AVX2_INLINE static void add(const float* p, __m256* a) {
    a[0] = _mm256_add_ps(a[0], _mm256_loadu_ps(p));
    a[1] = _mm256_add_ps(a[1], _mm256_loadu_ps(p + 8));
  }
  template <bool NT>
  FFSIM_AVX2_INLINE static void store(float* p, const __m256* a) {
    store8<NT>(p, a[0]);
    store8<NT>(p + 8, a[1]);
  }
  FFSIM_AVX2_INLINE static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
  template <bool NT>
  FFSIM_AVX2_INLINE static void store8(float* p, __m256 v) {
    if constexpr (NT) {
      _mm256_stream_ps(p, v);
    } else {
      _mm256_storeu_ps(p, v);
    }
  }
};

// bf16 widened by unpacking against zero: for 16 bf16 values x, unpacklo_epi16(0, x) puts values
// 0-3 and 8-11 in the high halves of 32-bit lanes (exactly their fp32 value) and unpackhi values
// 4-7 and 12-15; on store each half is rounded as float_to_bf16 (RNE, NaN quieted) and packus_epi32
// of the two restores the order lane by lane. One load and two unpacks per 16 values. (The even/odd
// split of reduce_avx512.cpp, a shift and an and, measured 0.81x of this here: GCC 12 hoisted the
// shifted values of every input ahead of the sums and spilled them, 16 ymm registers being too few.)
// Every lane sums in[0], in[1], ... in order, as the scalar reference.
struct Bf16 {
  static constexpr DType kType = DType::BF16;
  using Storage = std::uint16_t;
  static constexpr int kElems = 32;
  static constexpr int kAcc = 4;
  FFSIM_AVX2_INLINE static __m256i load256(const std::uint16_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  FFSIM_AVX2_INLINE static __m256 low(__m256i x) {
    return _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), x));
  }
  FFSIM_AVX2_INLINE static __m256 high(__m256i x) {
    return _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), x));
  }
  FFSIM_AVX2_INLINE static void first(const std::uint16_t* p, __m256* a) {
    const __m256i x0 = load256(p);
    a[0] = low(x0);
    a[1] = high(x0);
    const __m256i x1 = load256(p + 16);
    a[2] = low(x1);
    a[3] = high(x1);
  }
  FFSIM_AVX2_INLINE static void add(const std::uint16_t* p, __m256* a) {
    const __m256i x0 = load256(p);
    a[0] = _mm256_add_ps(a[0], low(x0));
    a[1] = _mm256_add_ps(a[1], high(x0));
    const __m256i x1 = load256(p + 16);
    a[2] = _mm256_add_ps(a[2], low(x1));
    a[3] = _mm256_add_ps(a[3], high(x1));
  }
  // float_to_bf16 in the low half of each 32-bit lane (the high half zero).
  FFSIM_AVX2_INLINE static __m256i rounded(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i high_half = _mm256_srli_epi32(bits, 16);
    const __m256i bias = _mm256_add_epi32(_mm256_and_si256(high_half, _mm256_set1_epi32(1)), _mm256_set1_epi32(0x7FFF));
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(bits, bias), 16);
    const __m256i quiet = _mm256_or_si256(high_half, _mm256_set1_epi32(0x40));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_epi8(r, quiet, nan);
  }
  // lanes hold 0..0xFFFF: the saturating pack is exact
  FFSIM_AVX2_INLINE static __m256i merge(__m256 lo, __m256 hi) {
    return _mm256_packus_epi32(rounded(lo), rounded(hi));
  }
  template <bool NT>
  FFSIM_AVX2_INLINE static void store(std::uint16_t* p, const __m256* a) {
    store256<NT>(p, merge(a[0], a[1]));
    store256<NT>(p + 16, merge(a[2], a[3]));
  }
  template <bool NT>
  FFSIM_AVX2_INLINE static void store256(std::uint16_t* p, __m256i v) {
    if constexpr (NT) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    }
  }
  FFSIM_AVX2_INLINE static __m256 load8(const std::uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  template <bool NT>
  FFSIM_AVX2_INLINE static void store8(std::uint16_t* p, __m256 v) {
    const __m256i r = rounded(v);
    // every lane is in [0, 0xFFFF], so the saturating pack is exact
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    store128<NT>(p, packed);
  }
  template <bool NT>
  FFSIM_AVX2_INLINE static void store128(std::uint16_t* p, __m128i v) {
    if constexpr (NT) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(p), v);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v);
    }
  }
};

// fp16 via F16C (exact widening, RNE narrowing): a unit is four 16-byte quarters of 8 values.
struct F16 {
  static constexpr DType kType = DType::F16;
  using Storage = std::uint16_t;
  static constexpr int kElems = 32;
  static constexpr int kAcc = 4;
  static constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  FFSIM_AVX2_INLINE static void first(const std::uint16_t* p, __m256* a) {
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) a[q] = load8(p + 8 * q);
  }
  FFSIM_AVX2_INLINE static void add(const std::uint16_t* p, __m256* a) {
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) a[q] = _mm256_add_ps(a[q], load8(p + 8 * q));
  }
  template <bool NT>
  FFSIM_AVX2_INLINE static void store(std::uint16_t* p, const __m256* a) {
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) store8<NT>(p + 8 * q, a[q]);
  }
  FFSIM_AVX2_INLINE static __m256 load8(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  template <bool NT>
  FFSIM_AVX2_INLINE static void store8(std::uint16_t* p, __m256 v) {
    const __m128i h = _mm256_cvtps_ph(v, kRound);
    if constexpr (NT) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(p), h);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
    }
  }
};

// Units per step (64 bytes of every input each): bf16 and fp16 two (4 accumulators per unit; more
// spilled to the stack); fp32 one (two vectors per input and step; the plain loop takes one): against it
// on a Zen 3 VM (2026-12-06, k = 8, 1 thread, ordinary stores, 64 KiB-4 MiB, three runs of each
// alternated) one unit ran 1.015-1.037x and two 0.986-1.019x.
template <class V>
constexpr int kUnits = 2;
template <>
constexpr int kUnits<F32> = 1;

template <class V, int K, bool NT, int U>
FFSIM_AVX2_INLINE void sum_units(typename V::Storage* out, const std::array<const typename V::Storage*, K>& in,
                                 std::size_t i) {
  __m256 a[U][V::kAcc];
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) V::first(in[0] + i + u * V::kElems, a[u]);
  // inputs in order (K is a constant: the loop is unrolled and every pointer stays in a register)
  if constexpr (V::kAcc == 2) {
    // fp32: unrolled over the inputs, every pointer in a register
#pragma GCC unroll 16
    for (int j = 1; j < K; ++j) {
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) V::add(in[static_cast<std::size_t>(j)] + i + u * V::kElems, a[u]);
    }
  } else {
    // bf16, fp16: a loop over the inputs. Unrolled, GCC 12 hoists the widened values of every input
    // ahead of the sums and spills them (16 ymm registers): 0.75-0.85x of this loop. Every input is
    // prefetched 1 KiB ahead, one line per unit: without it these ran at 0.54-0.80x at 4 MiB
    // tensors (k = 8, just past the LLC), with it as the kernels before 2026-12-01 did.
    for (int u = 0; u < U; ++u) _mm_prefetch(reinterpret_cast<const char*>(in[0] + i + u * V::kElems) + 1024, _MM_HINT_T0);
#pragma GCC unroll 1
    for (int j = 1; j < K; ++j) {
      const auto* p = in[static_cast<std::size_t>(j)] + i;
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) _mm_prefetch(reinterpret_cast<const char*>(p + u * V::kElems) + 1024, _MM_HINT_T0);
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) V::add(p + u * V::kElems, a[u]);
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) V::template store<NT>(out + i + u * V::kElems, a[u]);
}

template <class V, int K, bool NT>
FFSIM_AVX2_INLINE void sum_eight(typename V::Storage* out, const std::array<const typename V::Storage*, K>& in,
                                 std::size_t i) {
  __m256 acc = V::load8(in[0] + i);
#pragma GCC unroll 16
  for (int j = 1; j < K; ++j) acc = _mm256_add_ps(acc, V::load8(in[static_cast<std::size_t>(j)] + i));
  V::template store8<NT>(out + i, acc);
}

// The steps of whole units from element i on; returns the first element after them. A function of
// its own: inlined into sum_fixed beside the scalar head and the 8-value tail, GCC 12 ran out of
// general registers and reloaded the input pointers from the stack and rebuilt every address with
// a lea on each step (AVX2 fp32, k = 8: 0.92-0.99x the plain loop in L1-L3 on a Zen 3 VM,
// 2026-12-06); alone, every load is one [pointer + index] operand, as in the plain loop.
template <class V, int K, bool NT>
FFSIM_AVX2 __attribute__((noinline)) std::size_t sum_steps(typename V::Storage* out,
                                                           const typename V::Storage* const* in_array, std::size_t i,
                                                           std::size_t count) {
  using S = typename V::Storage;
  std::array<const S*, K> in;
  for (int j = 0; j < K; ++j) in[static_cast<std::size_t>(j)] = in_array[j];
  constexpr int U = kUnits<V>;
  for (; i + U * V::kElems <= count; i += U * V::kElems) sum_units<V, K, NT, U>(out, in, i);
  return i;
}

template <class V, int K, bool NT>
FFSIM_AVX2 void sum_fixed(void* out_bytes, const void* const* in_bytes, std::size_t count) {
  using S = typename V::Storage;
  S* out = static_cast<S*>(out_bytes);
  const S* const* in_array = reinterpret_cast<const S* const*>(in_bytes);
  std::array<const S*, K> in;
  for (int j = 0; j < K; ++j) in[static_cast<std::size_t>(j)] = in_array[j];
  const auto address = reinterpret_cast<std::uintptr_t>(out);
  if constexpr (NT) {
    // an output not aligned to its element can never reach a 32-byte boundary: ordinary stores
    if (address % sizeof(S) != 0) return sum_fixed<V, K, false>(out_bytes, in_bytes, count);
  }
  // Scalar head up to the output's next 64-byte boundary (if its elements can reach one).
  std::size_t i = 0;
  if (address % sizeof(S) == 0) {
    i = std::min(count, (64 - address % 64) % 64 / sizeof(S));
    sum_elements<V::kType>(out, in_array, K, 0, i);
  }
  i = sum_steps<V, K, NT>(out, in_array, i, count);
  for (; i + 8 <= count; i += 8) sum_eight<V, K, NT>(out, in, i);
  sum_elements<V::kType>(out, in_array, K, i, count);
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

ReduceKernel avx2_kernel(DType dtype, int k, bool nontemporal) noexcept {
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
