// Tests of reduce: every SIMD path against the scalar reference, NaN/Inf, the threaded Reducer.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ffsim/hfreduce/error.hpp"
#include "ffsim/hfreduce/reduce.hpp"
#include "ffsim/hfreduce/thread_pool.hpp"
#include "plain_loop.hpp"
#include "test_util.hpp"

using namespace ffsim::hfreduce;
using ffsim::hfreduce::test::get;
using ffsim::hfreduce::test::kAllDtypes;
using ffsim::hfreduce::test::put;

namespace {

// Random finite values of every magnitude the dtype has (so rounding on store is exercised), from a
// fixed seed. Raw bit patterns, with NaN/Inf patterns redrawn.
std::vector<std::byte> random_buffer(DType dtype, std::size_t count, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<std::byte> bytes(count * dtype_size(dtype) + 64);
  for (std::size_t i = 0; i < count; ++i) {
    while (true) {
      const auto bits = static_cast<std::uint32_t>(random());
      if (dtype == DType::F32) {
        // keep exponents within +-2^20 so that k sums rarely overflow but still round
        const std::uint32_t exponent = 107 + (bits >> 24) % 40;
        const std::uint32_t value = (bits & 0x807FFFFFu) | (exponent << 23);
        std::memcpy(bytes.data() + 4 * i, &value, 4);
        break;
      }
      const auto half = static_cast<std::uint16_t>(bits);
      const float as_float = dtype == DType::BF16 ? bf16_to_float(BFloat16{half}) : half_to_float(Float16{half});
      if (std::isnan(as_float) || std::isinf(as_float)) continue;
      std::memcpy(bytes.data() + 2 * i, &half, 2);
      break;
    }
  }
  return bytes;
}

// Bitwise equality, except that any NaN equals any NaN (the payload of a NaN sum depends on
// operand order inside the adder, which IEEE leaves open).
bool same(DType dtype, const std::byte* a, const std::byte* b, std::size_t count, std::size_t* where) {
  const std::size_t size = dtype_size(dtype);
  for (std::size_t i = 0; i < count; ++i) {
    if (std::memcmp(a + i * size, b + i * size, size) == 0) continue;
    if (std::isnan(get(dtype, a, i)) && std::isnan(get(dtype, b, i))) continue;
    *where = i;
    return false;
  }
  return true;
}

// Widest step of any path: AVX-512 handles 256 bytes of every input per step (4 units of 64 bytes),
// 128 bf16/fp16 values.
constexpr std::size_t kWidth = 128;

}  // namespace

TEST_CASE("reduce: the scalar reference is the fp32 sum in input order, rounded once to the dtype") {
  // The reference every SIMD path is compared with, checked on its own against a sum written here:
  // each element widened to float, added in input order in float, then one conversion to the dtype
  // (float_to_bf16 / float_to_half, which dtype_test checks against exact tables and sweeps).
  const std::size_t count = 1000;
  for (DType dtype : kAllDtypes) {
    std::vector<std::vector<std::byte>> inputs;
    for (int j = 0; j < kMaxReduceInputs; ++j)
      inputs.push_back(random_buffer(dtype, count, 7000u + static_cast<std::uint32_t>(j)));
    for (int k : {1, 2, 3, 8, 16}) {
      std::vector<const void*> in;
      for (int j = 0; j < k; ++j) in.push_back(inputs[static_cast<std::size_t>(j)].data());
      std::vector<std::byte> got(count * dtype_size(dtype));
      reduce_sum(Isa::Scalar, dtype, got.data(), in, count);
      std::vector<std::byte> want(got.size());
      for (std::size_t i = 0; i < count; ++i) {
        float sum = get(dtype, inputs[0].data(), i);
        for (int j = 1; j < k; ++j) sum += get(dtype, inputs[static_cast<std::size_t>(j)].data(), i);
        put(dtype, want.data(), i, sum);  // one rounding to the dtype
      }
      std::size_t where = 0;
      INFO(dtype_name(dtype), " k=", k);
      CHECK_MESSAGE(same(dtype, want.data(), got.data(), count, &where), "first difference at element ", where);
    }
  }
}

TEST_CASE("reduce: every path equals the scalar reference for k = 1..16 and lengths 0..2 width + 1 at misaligned starts") {
  for (Isa isa : supported_isas()) {
    for (DType dtype : kAllDtypes) {
      const std::size_t size = dtype_size(dtype);
      std::vector<std::vector<std::byte>> inputs;
      for (int j = 0; j < kMaxReduceInputs; ++j) {
        inputs.push_back(random_buffer(dtype, 2 * kWidth + 8, 1000u + static_cast<std::uint32_t>(j)));
      }
      std::vector<std::byte> expected((2 * kWidth + 8) * size + 64);
      std::vector<std::byte> actual(expected.size());
      // (input offset, output offset) in elements: aligned, inputs off, output off, both off by different amounts
      const std::size_t offsets[][2] = {{0, 0}, {1, 0}, {0, 1}, {3, 5}};
      for (int k = 1; k <= kMaxReduceInputs; ++k) {
        for (const auto& offset : offsets) {
          std::vector<const void*> in;
          for (int j = 0; j < k; ++j) in.push_back(inputs[static_cast<std::size_t>(j)].data() + offset[0] * size);
          for (std::size_t length = 0; length <= 2 * kWidth + 1; ++length) {
            for (bool nontemporal : {false, true}) {
              std::byte* want = expected.data() + offset[1] * size;
              std::byte* got = actual.data() + offset[1] * size;
              reduce_sum(Isa::Scalar, dtype, want, in, length);
              std::memset(actual.data(), 0x5A, actual.size());
              reduce_sum(isa, dtype, got, in, length, nontemporal);
              std::size_t where = 0;
              INFO(isa_name(isa), " ", dtype_name(dtype), " k=", k, " length=", length, " offsets=", offset[0], ",",
                   offset[1], " nontemporal=", nontemporal);
              REQUIRE_MESSAGE(same(dtype, want, got, length, &where), "first difference at element ", where);
              // nothing beyond the output range was written
              REQUIRE(std::all_of(got + length * size, actual.data() + actual.size(),
                                  [](std::byte b) { return b == std::byte{0x5A}; }));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("reduce: every path and k = 1..16 over several steps, the output 64-byte aligned or not") {
  // Each path compiles one kernel per k; beside the lengths up to 2 steps above, lengths of 3-4
  // steps (head to the output's 64-byte boundary, whole steps, single units, masked or scalar tail)
  // with the output at every element offset within a cache line (the head's length is 0..15 fp32
  // or 0..31 bf16/fp16 values), both store kinds.
  for (Isa isa : supported_isas()) {
    for (DType dtype : kAllDtypes) {
      const std::size_t size = dtype_size(dtype);
      const std::size_t longest = 4 * kWidth + 33;
      std::vector<std::vector<std::byte>> inputs;
      for (int j = 0; j < kMaxReduceInputs; ++j)
        inputs.push_back(random_buffer(dtype, longest + 64, 4000u + static_cast<std::uint32_t>(j)));
      std::vector<std::byte> expected(longest * size + 128);
      std::vector<std::byte> actual(expected.size());
      for (int k = 1; k <= kMaxReduceInputs; ++k) {
        std::vector<const void*> in;
        for (int j = 0; j < k; ++j) in.push_back(inputs[static_cast<std::size_t>(j)].data() + 2 * size);
        for (std::size_t length : {3 * kWidth - 1, 3 * kWidth, 4 * kWidth + 17, longest}) {
          for (std::size_t offset = 0; offset < 64 / size; offset += (k % 2 == 0 ? 1 : 3)) {
            for (bool nontemporal : {false, true}) {
              // actual.data() is 16-byte aligned at least; offset in elements moves the output's
              // position in its cache line (checked as all positions for even k, every third for odd)
              std::byte* want = expected.data() + offset * size;
              std::byte* got = actual.data() + offset * size;
              reduce_sum(Isa::Scalar, dtype, want, in, length);
              std::memset(actual.data(), 0x5A, actual.size());
              reduce_sum(isa, dtype, got, in, length, nontemporal);
              std::size_t where = 0;
              INFO(isa_name(isa), " ", dtype_name(dtype), " k=", k, " length=", length, " offset=", offset,
                   " nontemporal=", nontemporal);
              REQUIRE_MESSAGE(same(dtype, want, got, length, &where), "first difference at element ", where);
              REQUIRE(std::all_of(actual.data(), got, [](std::byte b) { return b == std::byte{0x5A}; }));
              REQUIRE(std::all_of(got + length * size, actual.data() + actual.size(),
                                  [](std::byte b) { return b == std::byte{0x5A}; }));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("reduce: in place into the first or the last input for every k on every path") {
  // The output may be any input (exact aliasing). Integer-valued inputs (pattern_buffer) sum exactly
  // in every order, so the result must be the integer sum whichever input is overwritten.
  const std::size_t length = 3 * kWidth + 7;
  for (Isa isa : supported_isas()) {
    for (DType dtype : kAllDtypes) {
      for (int k = 1; k <= kMaxReduceInputs; ++k) {
        for (bool last : {false, true}) {
          for (bool nontemporal : {false, true}) {
            std::vector<std::vector<std::byte>> inputs;
            std::vector<const void*> in;
            for (int j = 0; j < k; ++j) inputs.push_back(test::pattern_buffer(dtype, j, length));
            for (auto& input : inputs) in.push_back(input.data());
            std::byte* out = inputs[last ? static_cast<std::size_t>(k - 1) : 0].data();
            reduce_sum(isa, dtype, out, in, length, nontemporal);
            INFO(isa_name(isa), " ", dtype_name(dtype), " k=", k, " into input ", last ? k - 1 : 0,
                 " nontemporal=", nontemporal);
            CHECK(test::first_wrong(dtype, out, length, k) == length);
          }
        }
      }
    }
  }
}

TEST_CASE("reduce: hfreduce-bench's plain-loop reference equals the scalar reference bit for bit") {
  // The bench compares the kernels' speed with a plain loop (src/hfreduce/bench/plain_loop.cpp,
  // -O3 -march=native); the comparison is fair only if it computes the same thing: fp32 sums in
  // input order, one rounding on store. Random values of every magnitude, k = 1..16, lengths around
  // vector widths, split over 1..3 threads (min_bytes_per_thread 64 forces parts of a cache line).
  for (int threads = 1; threads <= 3; ++threads) {
    bench::PlainLoop plain(threads, 64);
    for (DType dtype : kAllDtypes) {
      const std::size_t longest = 1000;
      std::vector<std::vector<std::byte>> inputs;
      for (int j = 0; j < kMaxReduceInputs; ++j)
        inputs.push_back(random_buffer(dtype, longest, 9000u + static_cast<std::uint32_t>(j)));
      for (int k = 1; k <= kMaxReduceInputs; ++k) {
        std::vector<const void*> in;
        for (int j = 0; j < k; ++j) in.push_back(inputs[static_cast<std::size_t>(j)].data());
        for (std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{257}, longest}) {
          std::vector<std::byte> want(longest * dtype_size(dtype));
          std::vector<std::byte> got(want.size());
          reduce_sum(Isa::Scalar, dtype, want.data(), in, length);
          plain.sum(dtype, got.data(), in, length);
          std::size_t where = 0;
          INFO("threads=", threads, " ", dtype_name(dtype), " k=", k, " length=", length);
          REQUIRE_MESSAGE(same(dtype, want.data(), got.data(), length, &where), "first difference at ", where);
        }
      }
    }
  }
}

TEST_CASE("reduce: hfreduce-bench's read bound reads every byte of every input once, on any threads") {
  // PlainLoop::read is the bench's read bound: it must read exactly the inputs' bytes. Expected, by
  // its definition (plain_loop.hpp): the exclusive or of each input's 64-bit words (native byte
  // order) and of its tail bytes, zero-extended. A byte missed or read twice (a part boundary off by
  // a word, the tail dropped) changes the result for random data. Edges: 0 bytes, a tail of 1..7,
  // exactly one word, one block and one byte past it; k = 1..16; 1..3 threads with parts of 64 bytes.
  std::vector<std::vector<unsigned char>> inputs;
  std::mt19937_64 rng(4242);
  for (int j = 0; j < kMaxReduceInputs; ++j) {
    inputs.emplace_back(1003);
    for (auto& b : inputs.back()) b = static_cast<unsigned char>(rng());
  }
  auto expected = [&](int k, std::size_t bytes) {
    std::uint64_t r = 0;
    for (int j = 0; j < k; ++j) {
      const auto& in = inputs[static_cast<std::size_t>(j)];
      std::size_t i = 0;
      for (; i + 8 <= bytes; i += 8) {
        std::uint64_t w = 0;
        std::memcpy(&w, in.data() + i, 8);
        r ^= w;
      }
      for (; i < bytes; ++i) r ^= in[i];
    }
    return r;
  };
  for (int threads = 1; threads <= 3; ++threads) {
    bench::PlainLoop plain(threads, 64);
    for (int k = 1; k <= kMaxReduceInputs; ++k) {
      std::vector<const void*> in;
      for (int j = 0; j < k; ++j) in.push_back(inputs[static_cast<std::size_t>(j)].data());
      for (std::size_t bytes : {0, 1, 7, 8, 9, 63, 64, 65, 200, 1000, 1003}) {
        INFO("threads=", threads, " k=", k, " bytes=", bytes);
        CHECK(plain.read(in, bytes) == expected(k, bytes));
      }
    }
  }
  bench::PlainLoop plain(1);
  CHECK_THROWS_AS((void)plain.read(std::vector<const void*>{}, 8), KernelError);
}

TEST_CASE("reduce: large lengths equal the scalar reference on every path") {
  for (std::size_t length : {std::size_t{1000}, std::size_t{4097}, std::size_t{100003}, std::size_t{1} << 20}) {
    for (DType dtype : kAllDtypes) {
      std::vector<std::vector<std::byte>> inputs;
      std::vector<const void*> in;
      for (int j = 0; j < 8; ++j) inputs.push_back(random_buffer(dtype, length, 77u + static_cast<std::uint32_t>(j)));
      for (auto& input : inputs) in.push_back(input.data());
      std::vector<std::byte> want(length * dtype_size(dtype));
      reduce_sum(Isa::Scalar, dtype, want.data(), in, length);
      for (Isa isa : supported_isas()) {
        for (bool nontemporal : {false, true}) {
          std::vector<std::byte> got(want.size());
          reduce_sum(isa, dtype, got.data(), in, length, nontemporal);
          std::size_t where = 0;
          INFO(isa_name(isa), " ", dtype_name(dtype), " length=", length, " nontemporal=", nontemporal);
          CHECK_MESSAGE(same(dtype, want.data(), got.data(), length, &where), "first difference at ", where);
        }
      }
    }
  }
}

TEST_CASE("reduce: the scalar reference gives exact sums of integer-valued inputs") {
  // pattern() values are integers in [-8, 8]; sums of <= 16 of them are integers of magnitude
  // <= 128, exact in every dtype, so the expected value is the integer sum itself.
  for (DType dtype : kAllDtypes) {
    for (int k = 1; k <= kMaxReduceInputs; ++k) {
      const std::size_t length = 1031;
      std::vector<std::vector<std::byte>> inputs;
      std::vector<const void*> in;
      for (int j = 0; j < k; ++j) inputs.push_back(test::pattern_buffer(dtype, j, length));
      for (auto& input : inputs) in.push_back(input.data());
      for (Isa isa : supported_isas()) {
        std::vector<std::byte> out(length * dtype_size(dtype));
        reduce_sum(isa, dtype, out.data(), in, length);
        INFO(isa_name(isa), " ", dtype_name(dtype), " k=", k);
        CHECK(test::first_wrong(dtype, out.data(), length, k) == length);
      }
    }
  }
}

TEST_CASE("reduce: arguments swapped and in place") {
  // fp32 addition is commutative, so a + b and b + a agree bit for bit on random values (k = 2).
  // For k > 2 a different order may round differently; with integer-valued inputs every order is
  // exact, so every rotation of the inputs must give the same sum.
  for (Isa isa : supported_isas()) {
    for (DType dtype : kAllDtypes) {
      const std::size_t length = 523;
      const auto a = random_buffer(dtype, length, 5);
      const auto b = random_buffer(dtype, length, 6);
      std::vector<std::byte> ab(length * dtype_size(dtype));
      std::vector<std::byte> ba(ab.size());
      const void* in_ab[] = {a.data(), b.data()};
      const void* in_ba[] = {b.data(), a.data()};
      reduce_sum(isa, dtype, ab.data(), in_ab, length);
      reduce_sum(isa, dtype, ba.data(), in_ba, length);
      std::size_t where = 0;
      CHECK_MESSAGE(same(dtype, ab.data(), ba.data(), length, &where), isa_name(isa), " ", dtype_name(dtype), " at ", where);

      std::vector<std::vector<std::byte>> inputs;
      for (int j = 0; j < 5; ++j) inputs.push_back(test::pattern_buffer(dtype, j, length));
      for (int rotation = 0; rotation < 5; ++rotation) {
        std::vector<const void*> in;
        for (int j = 0; j < 5; ++j) in.push_back(inputs[static_cast<std::size_t>((j + rotation) % 5)].data());
        std::vector<std::byte> out(length * dtype_size(dtype));
        reduce_sum(isa, dtype, out.data(), in, length);
        CHECK(test::first_wrong(dtype, out.data(), length, 5) == length);
      }
      // in place: the output is the first or the last input
      for (std::size_t target : {std::size_t{0}, std::size_t{4}}) {
        auto copy = inputs;
        std::vector<const void*> in;
        for (auto& input : copy) in.push_back(input.data());
        reduce_sum(isa, dtype, copy[target].data(), in, length, true);
        CHECK(test::first_wrong(dtype, copy[target].data(), length, 5) == length);
      }
    }
  }
}

TEST_CASE("reduce: NaN and infinity propagate as IEEE says on every path") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    const char* what;
    std::vector<float> terms;
    float expected;  // NaN means "any NaN"
  };
  // fp32 sums left to right: inf + 1 = inf; inf + (-inf) = NaN; NaN + anything = NaN;
  // -inf + 2 = -inf. bf16 and fp16 hold all these terms exactly.
  const Case cases[] = {
      {"inf + 1 + 2", {inf, 1.0f, 2.0f}, inf},
      {"1 + -inf", {1.0f, -inf}, -inf},
      {"inf + -inf", {inf, -inf}, nan},
      {"1 + NaN + 2", {1.0f, nan, 2.0f}, nan},
      {"NaN + inf", {nan, inf}, nan},
      {"3 + 4 + NaN (last)", {3.0f, 4.0f, nan}, nan},
  };
  for (Isa isa : supported_isas()) {
    for (DType dtype : kAllDtypes) {
      for (const Case& c : cases) {
        // one row of 37 elements per input (vector body plus tail), every element the same term
        const std::size_t length = 37;
        std::vector<std::vector<std::byte>> inputs;
        std::vector<const void*> in;
        for (float term : c.terms) {
          inputs.emplace_back(length * dtype_size(dtype));
          for (std::size_t i = 0; i < length; ++i) put(dtype, inputs.back().data(), i, term);
        }
        for (auto& input : inputs) in.push_back(input.data());
        std::vector<std::byte> out(length * dtype_size(dtype));
        reduce_sum(isa, dtype, out.data(), in, length);
        INFO(isa_name(isa), " ", dtype_name(dtype), " ", c.what);
        for (std::size_t i = 0; i < length; ++i) {
          const float value = get(dtype, out.data(), i);
          if (std::isnan(c.expected)) {
            REQUIRE(std::isnan(value));
          } else {
            REQUIRE(value == c.expected);
          }
        }
      }
    }
  }
}

TEST_CASE("reduce: overflow rounds to infinity and signalling NaNs come out quiet") {
  for (Isa isa : supported_isas()) {
    // fp16: 60000 + 60000 = 120000 > 65520 (halfway past the largest half) -> +inf (0x7C00).
    // bf16: 3e38 + 3e38 overflows fp32 itself -> +inf (0x7F80).
    // signalling NaNs (bf16 0x7F81, fp16 0x7C01) + 1 -> a NaN with the quiet bit set.
    const std::size_t length = 19;
    struct Case {
      DType dtype;
      std::uint16_t a;
      std::uint16_t b;
      std::uint16_t quiet_or_exact;
      bool nan;
    };
    const Case cases[] = {
        {DType::F16, float_to_half(60000.0f).bits, float_to_half(60000.0f).bits, 0x7C00, false},
        {DType::BF16, float_to_bf16(3e38f).bits, float_to_bf16(3e38f).bits, 0x7F80, false},
        {DType::BF16, 0x7F81, float_to_bf16(1.0f).bits, 0x0040, true},
        {DType::F16, 0x7C01, float_to_half(1.0f).bits, 0x0200, true},
    };
    for (const Case& c : cases) {
      std::vector<std::uint16_t> a(length, c.a);
      std::vector<std::uint16_t> b(length, c.b);
      std::vector<std::uint16_t> out(length, 0);
      const void* in[] = {a.data(), b.data()};
      reduce_sum(isa, c.dtype, out.data(), in, length);
      INFO(isa_name(isa), " ", dtype_name(c.dtype), " 0x", std::hex, c.a, " + 0x", c.b);
      for (std::uint16_t value : out) {
        if (c.nan) {
          const float widened = c.dtype == DType::BF16 ? bf16_to_float(BFloat16{value}) : half_to_float(Float16{value});
          REQUIRE(std::isnan(widened));
          REQUIRE((value & c.quiet_or_exact) != 0);
        } else {
          REQUIRE(value == c.quiet_or_exact);
        }
      }
    }
  }
}

TEST_CASE("reduce: bad arguments are errors with context") {
  std::vector<float> a(8);
  std::vector<float> out(8);
  try {
    reduce_sum(Isa::Scalar, DType::F32, out.data(), {}, 8);
    FAIL("no inputs accepted");
  } catch (const KernelError& e) {
    CHECK(e.message() == "reduce needs 1..16 inputs, got 0");
  }
  try {
    const void* in[] = {a.data(), nullptr};
    reduce_sum(Isa::Scalar, DType::F32, out.data(), in, 8);
    FAIL("null input accepted");
  } catch (const KernelError& e) {
    CHECK(e.message() == "reduce input 1 is null (8 elements)");
  }
  try {
    const void* in[] = {a.data() + 1};
    reduce_sum(Isa::Scalar, DType::F32, a.data(), in, 4);
    FAIL("partial overlap accepted");
  } catch (const KernelError& e) {
    CHECK(e.message() == "reduce input 0 partly overlaps the output (only exact aliasing is allowed)");
  }
}

TEST_CASE("reduce: HFREDUCE_ISA forces a path and rejects unknown names") {
  const char* saved = std::getenv("HFREDUCE_ISA");
  const std::string restore = saved != nullptr ? saved : "";
  setenv("HFREDUCE_ISA", "scalar", 1);
  CHECK(default_isa() == Isa::Scalar);
  setenv("HFREDUCE_ISA", "sse9", 1);
  try {
    (void)default_isa();
    FAIL("sse9 accepted");
  } catch (const KernelError& e) {
    CHECK(e.message() == "unknown ISA \"sse9\"; valid: scalar, avx2, avx512");
  }
  // Each named path is forced when this CPU has it and refused (naming what is missing) when not:
  // one branch or the other runs on every machine.
  for (Isa isa : {Isa::Avx2, Isa::Avx512}) {
    CAPTURE(isa_name(isa));
    setenv("HFREDUCE_ISA", std::string(isa_name(isa)).c_str(), 1);
    if (isa_supported(isa)) {
      CHECK(default_isa() == isa);
    } else {
      CHECK_THROWS_WITH_AS((void)default_isa(), doctest::Contains("but this CPU lacks"), KernelError);
    }
  }
  if (saved != nullptr) {
    setenv("HFREDUCE_ISA", restore.c_str(), 1);
  } else {
    unsetenv("HFREDUCE_ISA");
  }
}

TEST_CASE("reduce: Reducer with 1..4 threads equals the single-threaded path bit for bit") {
  // small min_bytes_per_thread forces splits even for short buffers, so every boundary case
  // (empty parts, parts of one cache line, a ragged last part) is hit
  for (int threads = 1; threads <= 4; ++threads) {
    for (StorePolicy stores : {StorePolicy::Regular, StorePolicy::NonTemporal, StorePolicy::Auto}) {
      Reducer reducer(ReducerOptions{threads, best_isa(), stores, 0, 64});
      for (DType dtype : kAllDtypes) {
        for (std::size_t length : {0, 1, 15, 16, 17, 63, 64, 65, 100, 1000, 4097, 65537}) {
          std::vector<std::vector<std::byte>> inputs;
          std::vector<const void*> in;
          for (int j = 0; j < 3; ++j) inputs.push_back(random_buffer(dtype, length, 31u + static_cast<std::uint32_t>(j)));
          for (auto& input : inputs) in.push_back(input.data());
          std::vector<std::byte> want(length * dtype_size(dtype) + 1);
          std::vector<std::byte> got(want.size());
          reduce_sum(Isa::Scalar, dtype, want.data(), in, length);
          reducer.sum(dtype, got.data(), in, length);
          std::size_t where = 0;
          INFO("threads=", threads, " ", dtype_name(dtype), " length=", length);
          CHECK_MESSAGE(same(dtype, want.data(), got.data(), length, &where), "first difference at ", where);
        }
      }
    }
  }
}

TEST_CASE("thread_pool: task i runs on participant i and errors are rethrown and bad counts are rejected") {
  ThreadPool pool(3);
  std::vector<int> ran(3, 0);
  // Participant 0 is the calling thread, 1 and 2 the pool's own: each index always on one thread
  // (a participant keeps its NUMA placement and its cache), three threads in all.
  std::vector<std::thread::id> on(3);
  std::vector<int> moved(3, 0);
  for (int round = 0; round < 100; ++round)
    pool.run(3, [&](int i) {
      const auto u = static_cast<std::size_t>(i);
      ++ran[u];
      if (round > 0 && on[u] != std::this_thread::get_id()) ++moved[u];
      on[u] = std::this_thread::get_id();
    });
  // 100 rounds, each task index once per round
  CHECK(ran == std::vector<int>{100, 100, 100});
  CHECK(moved == std::vector<int>{0, 0, 0});
  CHECK(on[0] == std::this_thread::get_id());
  CHECK(on[1] != on[0]);
  CHECK(on[2] != on[0]);
  CHECK(on[2] != on[1]);
  CHECK_THROWS_WITH_AS(pool.run(2, [](int i) {
    if (i == 1) throw std::runtime_error("task 1 failed");
  }),
                       "task 1 failed", std::runtime_error);
  CHECK_THROWS_AS(pool.run(4, [](int) {}), KernelError);
}

TEST_CASE("thread_pool: polling or sleeping, waits give every task set its own tasks, whatever the gaps") {
  // Task sets of 1..4 tasks in turn on a 4-participant pool, with the caller polling for the
  // workers or sleeping at once, back to back and after gaps longer than the polling time (every
  // thread asleep): a worker outside a set skips its generation, and must then take the next
  // set's count, not an older one. Each set adds its generation number to its participants'
  // slots, so a task run twice, run for the wrong set or missed changes a sum: expected sum[i] =
  // the sum of g over the sets g whose count is > i.
  for (const auto spin : {std::chrono::microseconds{0}, std::chrono::microseconds{50}, ThreadPool::kDefaultSpin}) {
    CAPTURE(spin.count());
    ThreadPool pool(4, spin);
    CHECK(pool.spin() == spin);
    std::vector<long> sum(4, 0), expected(4, 0);
    for (int g = 1; g <= 400; ++g) {
      const int tasks = 1 + (g * 7) % 4;  // 4, 3, 2, 1, 4, ... in a scrambled order
      if (g % 97 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));  // past any polling
      pool.run(tasks, [&](int i) { sum[static_cast<std::size_t>(i)] += g; });
      for (int i = 0; i < tasks; ++i) expected[static_cast<std::size_t>(i)] += g;
    }
    CHECK(sum == expected);
  }
  CHECK_THROWS_AS(ThreadPool(2, std::chrono::microseconds{-1}), KernelError);
}
