// A GEMM's time from its shape on a GPU of `sms` streaming multiprocessors: the output is cut into
// tiles, the tiles run in waves of one tile per SM, and each wave takes the time of one tile's
// multiply-adds at the SM's share of the peak rate, divided by a ceiling (the fraction of peak a
// full wave reaches), plus a fixed cost per wave and per GEMM. Fitted by `ffsim calibrate --gemm`
// (src/calib/gemm_fit.hpp); the shaped compute model (train/shaped_compute.hpp) times every layer's
// products with it.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

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
  /// Split-K: a GEMM of fewer tiles than SMs cuts its sum over k into up to sms / tiles slices of at
  /// least this many terms, each a tile of its own (0: never). The GEMM fit does not use it.
  long long split_k_min = 0;
};

/// [I] CUTLASS's sm80 tensor-op tile sizes: 128x128, 256x128, 128x256, 128x64, 64x128, 256x64, 64x64.
[[nodiscard]] std::vector<GemmTile> sm80_gemm_tiles();

/// The time of the fastest of `tiles` for the shape (each with p's other parameters): a library
/// picks, among its kernels, the one its heuristics expect to be fastest ([I] cuBLAS and cuDNN
/// aim at that; not checked kernel by kernel).
[[nodiscard]] double gemm_time_best_tile(const GemmShape& s, int sms, double peak_flops, const GemmParams& p,
                                         const std::vector<GemmTile>& tiles);

/// batch x ceil(m / tile.m) x ceil(n / tile.n).
[[nodiscard]] long long gemm_tiles(const GemmShape& s, const GemmTile& t);
/// ceil(tiles / sms): a shape of sms + 1 tiles takes 2 waves.
[[nodiscard]] long long gemm_waves(long long tiles, int sms);
/// The slices of k split-K makes: min(sms / tiles, k / split_k_min), at least 1.
[[nodiscard]] long long gemm_k_splits(const GemmShape& s, int sms, const GemmParams& p);
/// waves x (2 tile.m tile.n k / (ceiling x peak / sms) + wave_overhead) + launch, in seconds; with
/// split-K, tiles x splits run in the waves and each slice sums k / splits terms.
/// `peak_flops` is the GPU's dense peak at the GEMM's precision (FLOP/s).
[[nodiscard]] double gemm_time(const GemmShape& s, int sms, double peak_flops, const GemmParams& p);
/// The seconds one wave's multiply-adds take at the full peak: 2 tile.m tile.n k sms / peak.
[[nodiscard]] double gemm_wave_compute_s(const GemmShape& s, int sms, double peak_flops, const GemmTile& t);

}  // namespace ffsim::train
