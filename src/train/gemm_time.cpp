// SPDX-License-Identifier: Apache-2.0
#include "train/gemm_time.hpp"

#include "core/error.hpp"

namespace ffsim::train {

long long gemm_tiles(const GemmShape& s, const GemmTile& t) {
  FFSIM_ASSERT(t.m > 0 && t.n > 0, "a GEMM tile has positive sides");
  return s.batch * ((s.m + t.m - 1) / t.m) * ((s.n + t.n - 1) / t.n);
}

long long gemm_waves(long long tiles, int sms) {
  FFSIM_ASSERT(sms > 0, "a GPU has at least one SM");
  return (tiles + sms - 1) / sms;
}

double gemm_wave_compute_s(const GemmShape& s, int sms, double peak_flops, const GemmTile& t) {
  return 2.0 * static_cast<double>(t.m) * static_cast<double>(t.n) * static_cast<double>(s.k) * sms / peak_flops;
}

double gemm_time(const GemmShape& s, int sms, double peak_flops, const GemmParams& p) {
  FFSIM_ASSERT(p.ceiling > 0, "a GEMM ceiling is a positive fraction of the peak");
  const double waves = static_cast<double>(gemm_waves(gemm_tiles(s, p.tile), sms));
  return waves * (gemm_wave_compute_s(s, sms, peak_flops, p.tile) / p.ceiling + p.wave_overhead_s) + p.launch_s;
}

}  // namespace ffsim::train
