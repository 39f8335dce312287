// Internal: the per-path reduce kernels and the scalar element helpers they share.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

#include "ffsim/hfreduce/dtype.hpp"

namespace ffsim::hfreduce::detail {

/// Most inputs a kernel sums (reduce.hpp's kMaxReduceInputs; reduce.cpp checks they agree).
inline constexpr int kMaxKernelInputs = 16;

/// out[i] = in[0][i] + ... + in[k-1][i] for i < count, fp32 accumulation, for the k (and store kind)
/// the kernel was picked for: every path compiles one kernel per k = 1..kMaxKernelInputs, so that
/// the inputs' pointers stay in registers and the loop over them is unrolled.
using ReduceKernel = void (*)(void* out, const void* const* in, std::size_t count);

/// The kernel of a path for dtype, k inputs (1..kMaxKernelInputs) and streaming (nontemporal) or
/// ordinary stores; nullptr when k is out of range. The scalar path ignores nontemporal.
ReduceKernel scalar_kernel(DType dtype, int k, bool nontemporal) noexcept;
ReduceKernel avx2_kernel(DType dtype, int k, bool nontemporal) noexcept;
ReduceKernel avx512_kernel(DType dtype, int k, bool nontemporal) noexcept;

/// One element of the scalar reference, shared by every path's head and tail loops.
template <DType D>
struct Element;

template <>
struct Element<DType::F32> {
  using Storage = float;
  static float load(const float* p, std::size_t i) noexcept { return p[i]; }
  static void store(float* p, std::size_t i, float v) noexcept { p[i] = v; }
};

template <>
struct Element<DType::BF16> {
  using Storage = std::uint16_t;
  static float load(const std::uint16_t* p, std::size_t i) noexcept { return bf16_to_float(BFloat16{p[i]}); }
  static void store(std::uint16_t* p, std::size_t i, float v) noexcept { p[i] = float_to_bf16(v).bits; }
};

template <>
struct Element<DType::F16> {
  using Storage = std::uint16_t;
  static float load(const std::uint16_t* p, std::size_t i) noexcept { return half_to_float(Float16{p[i]}); }
  static void store(std::uint16_t* p, std::size_t i, float v) noexcept { p[i] = float_to_half(v).bits; }
};

/// Scalar sum of elements [begin, end): the reference order in[0] + in[1] + ... + in[k-1].
template <DType D>
inline void sum_elements(typename Element<D>::Storage* out, const typename Element<D>::Storage* const* in, int k,
                         std::size_t begin, std::size_t end) noexcept {
  using E = Element<D>;
  for (std::size_t i = begin; i < end; ++i) {
    float acc = E::load(in[0], i);
    for (int j = 1; j < k; ++j) acc += E::load(in[j], i);
    E::store(out, i, acc);
  }
}

}  // namespace ffsim::hfreduce::detail
