// The plain-loop reference of hfreduce-bench: a fixed-k loop left to the compiler (-O3 -march=native).
// SPDX-License-Identifier: Apache-2.0
#include "plain_loop.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "ffsim/hfreduce/error.hpp"

namespace ffsim::hfreduce::bench {
namespace {

// How each dtype is loaded into and stored from float: the plain per-element conversions.
struct F32 {
  using Storage = float;
  static float load(float v) { return v; }
  static float store(float v) { return v; }
};
struct Bf16 {
  using Storage = std::uint16_t;
  static float load(std::uint16_t v) { return bf16_to_float(BFloat16{v}); }
  static std::uint16_t store(float v) { return float_to_bf16(v).bits; }
};
struct F16 {
  using Storage = _Float16;
  static float load(_Float16 v) { return static_cast<float>(v); }
  static _Float16 store(float v) { return static_cast<_Float16>(v); }
};

// The loop itself. `ivdep` says what the caller guarantees (no partial overlap), so that GCC
// vectorises it without run-time alias checks, which it gives up on past 10 pointer pairs (k > 9).
template <class T, int K>
void plain_sum(void* out_bytes, const void* const* in_bytes, std::size_t count) {
  using S = typename T::Storage;
  S* out = static_cast<S*>(out_bytes);
  const S* in[K];
  for (int j = 0; j < K; ++j) in[j] = static_cast<const S*>(in_bytes[j]);
#pragma GCC ivdep
  for (std::size_t i = 0; i < count; ++i) {
    float acc = T::load(in[0][i]);
    for (int j = 1; j < K; ++j) acc += T::load(in[j][i]);
    out[i] = T::store(acc);
  }
}

// The read bound's loop: k streams of 64-bit words, one accumulator each (no chain between the
// inputs, so the loads are the only limit), then the tail bytes.
template <int K>
std::uint64_t plain_read(const void* const* in_bytes, std::size_t bytes) {
  const std::size_t words = bytes / 8;
  std::uint64_t x[K] = {};
  const std::uint64_t* in[K];
  for (int j = 0; j < K; ++j) in[j] = static_cast<const std::uint64_t*>(in_bytes[j]);
  for (std::size_t i = 0; i < words; ++i)
    for (int j = 0; j < K; ++j) x[j] ^= in[j][i];
  std::uint64_t r = 0;
  for (int j = 0; j < K; ++j) {
    r ^= x[j];
    const auto* tail = static_cast<const unsigned char*>(in_bytes[j]) + words * 8;
    for (std::size_t b = 0; b < bytes - words * 8; ++b) r ^= tail[b];
  }
  return r;
}
using Read = std::uint64_t (*)(const void* const*, std::size_t);
template <int... K>
constexpr std::array<Read, sizeof...(K)> reads(std::integer_sequence<int, K...>) {
  return {&plain_read<K + 1>...};
}

using Loop = void (*)(void*, const void* const*, std::size_t);

template <class T, int... K>
constexpr std::array<Loop, sizeof...(K)> loops(std::integer_sequence<int, K...>) {
  return {&plain_sum<T, K + 1>...};
}

Loop pick(DType dtype, int k) {
  static constexpr auto f32 = loops<F32>(std::make_integer_sequence<int, 16>{});
  static constexpr auto bf16 = loops<Bf16>(std::make_integer_sequence<int, 16>{});
  static constexpr auto f16 = loops<F16>(std::make_integer_sequence<int, 16>{});
  FFSIM_KERNEL_CHECK(k >= 1 && k <= 16, "the plain loop sums 1..16 inputs, got ", k);
  const auto index = static_cast<std::size_t>(k - 1);
  switch (dtype) {
    case DType::F32:
      return f32[index];
    case DType::BF16:
      return bf16[index];
    case DType::F16:
      return f16[index];
  }
  FFSIM_KERNEL_THROW(KernelError, "the plain loop has no dtype ", static_cast<int>(dtype));
}

}  // namespace

PlainLoop::PlainLoop(int threads, std::size_t min_bytes_per_thread)
    : min_bytes_per_thread_(std::max<std::size_t>(1, min_bytes_per_thread)), pool_(threads) {}

void PlainLoop::sum(DType dtype, void* out, std::span<const void* const> in, std::size_t count) {
  const Loop loop = pick(dtype, static_cast<int>(in.size()));
  if (count == 0) return;
  const std::size_t element = dtype_size(dtype);
  const std::size_t wanted = std::max<std::size_t>(1, count * element / min_bytes_per_thread_);
  const int parts = static_cast<int>(std::min<std::size_t>(wanted, static_cast<std::size_t>(pool_.size())));
  if (parts == 1) {
    loop(out, in.data(), count);
    return;
  }
  // part p: whole 64-byte blocks [blocks * p / parts, blocks * (p + 1) / parts), clipped to count
  const std::size_t align = 64 / element;
  const std::size_t blocks = (count + align - 1) / align;
  auto begin = [&](int part) {
    return std::min(count, blocks * static_cast<std::size_t>(part) / static_cast<std::size_t>(parts) * align);
  };
  pool_.run(parts, [&](int part) {
    const std::size_t first = begin(part);
    const std::size_t last = begin(part + 1);
    if (first == last) return;
    const void* shifted[16];
    for (std::size_t j = 0; j < in.size(); ++j) shifted[j] = static_cast<const std::byte*>(in[j]) + first * element;
    loop(static_cast<std::byte*>(out) + first * element, shifted, last - first);
  });
}

std::uint64_t PlainLoop::read(std::span<const void* const> in, std::size_t bytes) {
  static constexpr auto table = reads(std::make_integer_sequence<int, 16>{});
  FFSIM_KERNEL_CHECK(!in.empty() && in.size() <= 16, "the read bound reads 1..16 inputs, got ", in.size());
  const Read loop = table[in.size() - 1];
  if (bytes == 0) return 0;
  const std::size_t wanted = std::max<std::size_t>(1, bytes / min_bytes_per_thread_);
  const int parts = static_cast<int>(std::min<std::size_t>(wanted, static_cast<std::size_t>(pool_.size())));
  if (parts == 1) return loop(in.data(), bytes);
  // part p: whole 64-byte blocks, as sum() splits (a part starts on a word: the words stay the same)
  const std::size_t blocks = (bytes + 63) / 64;
  auto begin = [&](int part) {
    return std::min(bytes, blocks * static_cast<std::size_t>(part) / static_cast<std::size_t>(parts) * 64);
  };
  std::array<std::uint64_t, 256> got{};
  FFSIM_KERNEL_CHECK(parts <= static_cast<int>(got.size()), "the read bound splits over at most 256 threads, got ",
                     parts);
  pool_.run(parts, [&](int part) {
    const std::size_t first = begin(part);
    const std::size_t last = begin(part + 1);
    if (first == last) return;
    const void* shifted[16];
    for (std::size_t j = 0; j < in.size(); ++j) shifted[j] = static_cast<const std::byte*>(in[j]) + first;
    got[static_cast<std::size_t>(part)] = loop(shifted, last - first);
  });
  std::uint64_t r = 0;
  for (int part = 0; part < parts; ++part) r ^= got[static_cast<std::size_t>(part)];
  return r;
}

}  // namespace ffsim::hfreduce::bench
