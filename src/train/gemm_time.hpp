// A GEMM's time from its shape on a GPU of `sms` streaming multiprocessors: the output is cut into
// tiles, the tiles run in waves of one tile per SM, and each wave takes the time of one tile's
// multiply-adds at the SM's share of the peak rate, divided by a ceiling (the fraction of peak a
// full wave reaches), plus a fixed cost per wave and per GEMM. Fitted by `ffsim calibrate --gemm`
// (src/calib/gemm_fit.hpp); the training step model does not use it yet.
// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace ffsim::train {

/// The output tile one SM computes at a time. [I] 128x128: CUTLASS's and cuBLAS's usual tensor-core
/// tile on A100 (cutlass_80_tensorop_*gemm_128x128_*, sm80_xmma_gemm_*_128x128*); the fit chooses
/// among a few (gemm_fit.hpp) and says which.
struct GemmTile {
  long long m = 128, n = 128;
};

struct GemmShape {
  long long batch = 1, m = 0, n = 0, k = 0;
  [[nodiscard]] double flops() const {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

struct GemmParams {
  double ceiling = 1;          ///< fraction of the peak rate a full wave of tiles reaches, (0, 1]
  double wave_overhead_s = 0;  ///< fixed time per wave (a tile's prologue and epilogue), seconds
  double launch_s = 0;         ///< fixed time per GEMM (launch, tail), seconds
  GemmTile tile;
};

/// batch x ceil(m / tile.m) x ceil(n / tile.n).
[[nodiscard]] long long gemm_tiles(const GemmShape& s, const GemmTile& t);
/// ceil(tiles / sms): a shape of sms + 1 tiles takes 2 waves.
[[nodiscard]] long long gemm_waves(long long tiles, int sms);
/// waves x (2 tile.m tile.n k / (ceiling x peak / sms) + wave_overhead) + launch, in seconds.
/// `peak_flops` is the GPU's dense peak at the GEMM's precision (FLOP/s).
[[nodiscard]] double gemm_time(const GemmShape& s, int sms, double peak_flops, const GemmParams& p);
/// The seconds one wave's multiply-adds take at the full peak: 2 tile.m tile.n k sms / peak.
[[nodiscard]] double gemm_wave_compute_s(const GemmShape& s, int sms, double peak_flops, const GemmTile& t);

}  // namespace ffsim::train
