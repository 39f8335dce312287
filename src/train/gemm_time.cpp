// SPDX-License-Identifier: Apache-2.0
#include "train/gemm_time.hpp"

#include <algorithm>

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

long long gemm_k_splits(const GemmShape& s, int sms, const GemmParams& p) {
  const long long tiles = gemm_tiles(s, p.tile);
  if (p.split_k_min <= 0 || tiles >= sms) return 1;
  return std::max(1LL, std::min(sms / tiles, s.k / p.split_k_min));
}

double gemm_time(const GemmShape& s, int sms, double peak_flops, const GemmParams& p) {
  FFSIM_ASSERT(p.ceiling > 0, "a GEMM ceiling is a positive fraction of the peak");
  const long long splits = gemm_k_splits(s, sms, p);
  const double waves = static_cast<double>(gemm_waves(gemm_tiles(s, p.tile) * splits, sms));
  GemmShape slice = s;
  slice.k = (s.k + splits - 1) / splits;
  return waves * (gemm_wave_compute_s(slice, sms, peak_flops, p.tile) / p.ceiling + p.wave_overhead_s) + p.launch_s;
}

std::vector<GemmTile> sm80_gemm_tiles() {
  return {{128, 128}, {256, 128}, {128, 256}, {128, 64}, {64, 128}, {256, 64}, {64, 64}};
}

double gemm_time_best_tile(const GemmShape& s, int sms, double peak_flops, const GemmParams& p,
                           const std::vector<GemmTile>& tiles) {
  FFSIM_ASSERT(!tiles.empty(), "a tile to try");
  double best = 0;
  for (const GemmTile& t : tiles) {
    GemmParams q = p;
    q.tile = t;
    const double x = gemm_time(s, sms, peak_flops, q);
    if (t.m == tiles.front().m && t.n == tiles.front().n)
      best = x;
    else
      best = std::min(best, x);
  }
  return best;
}

}  // namespace ffsim::train
