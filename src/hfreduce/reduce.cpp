// reduce: argument checks, path dispatch, the scalar reference and the multithreaded Reducer.
// SPDX-License-Identifier: Apache-2.0
#include "ffsim/hfreduce/reduce.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "ffsim/hfreduce/error.hpp"
#include "reduce_kernels.hpp"

namespace ffsim::hfreduce {
namespace detail {
namespace {

// The reference: one element at a time. Auto-vectorisation is off so the "scalar" path is what
// its name says (the SIMD paths are the vectorised ones, and the benchmark prints both).
template <DType D, int K>
__attribute__((optimize("no-tree-vectorize"))) void scalar_sum(void* out, const void* const* in, std::size_t count) {
  using Storage = typename Element<D>::Storage;
  sum_elements<D>(static_cast<Storage*>(out), reinterpret_cast<const Storage* const*>(in), K, 0, count);
}

template <DType D, int... K>
constexpr std::array<ReduceKernel, sizeof...(K)> scalar_table(std::integer_sequence<int, K...>) {
  return {&scalar_sum<D, K + 1>...};
}

template <DType D>
ReduceKernel scalar_pick(int k) noexcept {
  static constexpr auto kernels = scalar_table<D>(std::make_integer_sequence<int, kMaxKernelInputs>{});
  if (k < 1 || k > kMaxKernelInputs) return nullptr;
  return kernels[static_cast<std::size_t>(k - 1)];
}

}  // namespace

static_assert(kMaxKernelInputs == kMaxReduceInputs, "every path compiles a kernel per k");

ReduceKernel scalar_kernel(DType dtype, int k, bool /*nontemporal*/) noexcept {
  switch (dtype) {
    case DType::F32:
      return scalar_pick<DType::F32>(k);
    case DType::BF16:
      return scalar_pick<DType::BF16>(k);
    case DType::F16:
      return scalar_pick<DType::F16>(k);
  }
  return nullptr;
}

}  // namespace detail

namespace {

detail::ReduceKernel kernel_for(Isa isa, DType dtype, int k, bool nontemporal) {
  switch (isa) {
    case Isa::Scalar:
      return detail::scalar_kernel(dtype, k, nontemporal);
    case Isa::Avx2:
      return detail::avx2_kernel(dtype, k, nontemporal);
    case Isa::Avx512:
      return detail::avx512_kernel(dtype, k, nontemporal);
  }
  return nullptr;
}

void check_arguments(DType dtype, const void* out, std::span<const void* const> in, std::size_t count) {
  const int k = static_cast<int>(in.size());
  if (k < 1 || k > kMaxReduceInputs) {
    FFSIM_KERNEL_THROW(KernelError, "reduce needs 1..", kMaxReduceInputs, " inputs, got ", in.size());
  }
  if (count == 0) return;
  if (out == nullptr) FFSIM_KERNEL_THROW(KernelError, "reduce of ", count, " elements into a null output");
  const std::size_t bytes = count * dtype_size(dtype);
  const auto out_begin = reinterpret_cast<std::uintptr_t>(out);
  for (int j = 0; j < k; ++j) {
    const void* input = in[static_cast<std::size_t>(j)];
    if (input == nullptr) FFSIM_KERNEL_THROW(KernelError, "reduce input ", j, " is null (", count, " elements)");
    const auto begin = reinterpret_cast<std::uintptr_t>(input);
    const bool overlaps = begin < out_begin + bytes && out_begin < begin + bytes;
    if (overlaps && begin != out_begin) {
      FFSIM_KERNEL_THROW(KernelError, "reduce input ", j, " partly overlaps the output (only exact aliasing is allowed)");
    }
  }
}

}  // namespace

void reduce_sum(Isa isa, DType dtype, void* out, std::span<const void* const> in, std::size_t count,
                bool nontemporal) {
  check_arguments(dtype, out, in, count);
  const std::string missing = isa_missing_features(isa);
  if (!missing.empty()) FFSIM_KERNEL_THROW(KernelError, "reduce path ", isa_name(isa), " needs ", missing);
  if (count == 0) return;
  kernel_for(isa, dtype, static_cast<int>(in.size()), nontemporal)(out, in.data(), count);
}

Reducer::Reducer(ReducerOptions options)
    : options_(options), isa_(options.isa ? *options.isa : default_isa()) {
  const std::string missing = isa_missing_features(isa_);
  if (!missing.empty()) FFSIM_KERNEL_THROW(KernelError, "reduce path ", isa_name(isa_), " needs ", missing);
  if (options_.threads < 0) FFSIM_KERNEL_THROW(KernelError, "reducer threads must be >= 0, got ", options_.threads);
  const int threads = options_.threads == 0 ? usable_cpu_count() : options_.threads;
  pool_ = std::make_unique<ThreadPool>(threads);
}

namespace {

// Splits count elements into at most `limit` contiguous parts whose boundaries are multiples of
// `align` elements; returns the number of parts and writes part p as [begin(p), begin(p+1)).
struct Split {
  std::size_t count;
  std::size_t align;
  int parts;
  std::size_t begin(int part) const noexcept {
    const std::size_t blocks = (count + align - 1) / align;
    const std::size_t first = blocks * static_cast<std::size_t>(part) / static_cast<std::size_t>(parts);
    return std::min(count, first * align);
  }
};

Split split_for(std::size_t count, std::size_t element_bytes, std::size_t min_bytes, int threads) {
  const std::size_t align = 64 / element_bytes;  // cache-line boundaries between threads
  const std::size_t bytes = count * element_bytes;
  const std::size_t wanted = std::max<std::size_t>(1, bytes / std::max<std::size_t>(1, min_bytes));
  const int parts = static_cast<int>(std::min<std::size_t>(wanted, static_cast<std::size_t>(threads)));
  return Split{count, align, parts};
}

}  // namespace

void Reducer::sum(DType dtype, void* out, std::span<const void* const> in, std::size_t count) {
  check_arguments(dtype, out, in, count);
  if (count == 0) return;
  const std::size_t element_bytes = dtype_size(dtype);
  const std::size_t traffic = (in.size() + 1) * count * element_bytes;
  const bool nontemporal = options_.stores == StorePolicy::NonTemporal ||
                           (options_.stores == StorePolicy::Auto && traffic >= options_.nontemporal_min_bytes);
  const int k = static_cast<int>(in.size());
  const detail::ReduceKernel kernel = kernel_for(isa_, dtype, k, nontemporal);
  const Split split = split_for(count, element_bytes, options_.min_bytes_per_thread, pool_->size());
  if (split.parts == 1) {
    // one part: run it here, without the pool's hand-off (the pipeline's small chunks)
    kernel(out, in.data(), count);
    return;
  }
  pool_->run(split.parts, [&](int part) {
    const std::size_t begin = split.begin(part);
    const std::size_t end = split.begin(part + 1);
    if (begin == end) return;
    const void* shifted[kMaxReduceInputs];
    for (int j = 0; j < k; ++j) {
      shifted[j] = static_cast<const std::byte*>(in[static_cast<std::size_t>(j)]) + begin * element_bytes;
    }
    kernel(static_cast<std::byte*>(out) + begin * element_bytes, shifted, end - begin);
  });
}

void Reducer::first_touch(void* data, std::size_t bytes) {
  if (bytes == 0) return;
  const Split split = split_for(bytes, 1, options_.min_bytes_per_thread, pool_->size());
  pool_->run(split.parts, [&](int part) {
    const std::size_t begin = split.begin(part);
    const std::size_t end = split.begin(part + 1);
    std::memset(static_cast<std::byte*>(data) + begin, 0, end - begin);
  });
}

}  // namespace ffsim::hfreduce
