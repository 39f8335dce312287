// Sums three buffers with an installed hfreduce and checks every element (exit 1 on a mismatch).
// SPDX-License-Identifier: Apache-2.0
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <ffsim/hfreduce/reduce.hpp>

int main() {
  namespace hf = ffsim::hfreduce;
  // 1000 elements (not a multiple of any SIMD width): a[i] = i, b[i] = 2i, c[i] = 0.5, so
  // out[i] = 3i + 0.5, exact in fp32 for i < 1000.
  constexpr std::size_t n = 1000;
  std::vector<float> a(n), b(n), c(n, 0.5F), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i);
  }
  const std::array<const void*, 3> in{a.data(), b.data(), c.data()};
  hf::reduce_sum(hf::best_isa(), hf::DType::F32, out.data(), in, n);
  for (std::size_t i = 0; i < n; ++i)
    if (out[i] != static_cast<float>(3 * i) + 0.5F) {
      std::printf("out[%zu] = %g, want %g\n", i, static_cast<double>(out[i]), 3.0 * static_cast<double>(i) + 0.5);
      return 1;
    }
  std::printf("hfreduce consumer: %zu sums of 3 buffers ok (%s)\n", n, std::string(hf::isa_name(hf::best_isa())).c_str());
  return 0;
}
