// `ffsim calibrate --throughput CSV --gemm CSV`: the shaped compute model of each measured row,
// from the catalog's network and GPU and the fitted GEMM model, and its fit to the measurements.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <vector>

#include "calib/gemm_fit.hpp"
#include "calib/throughput_fit.hpp"
#include "config/catalog.hpp"

namespace ffsim::app {

/// [I] split-K's smallest slice of the sum over k: 256 terms (two of the 128-deep k-blocks of
/// CUTLASS's sm80 tensor-op kernels). Not fitted: without split-K a weight gradient with few output
/// tiles and a long k (the first convolutions') would run on a handful of SMs.
inline constexpr long long kSplitKMin = 256;

struct ThroughputCalibration {
  calib::ThroughputCsv csv;  ///< rows the catalog cannot model get an `excluded` reason
  std::vector<calib::ThroughputCase> cases;
  calib::ThroughputFit fit;
};

/// Models every row (excluded ones too, where the catalog has their network and GPU) and fits.
/// A row whose network or GPU the catalog lacks, or whose precision the GEMM fit has no ceiling
/// for, is excluded with that reason.
[[nodiscard]] ThroughputCalibration calibrate_throughput(const config::Catalog& cat, calib::ThroughputCsv csv,
                                                         const calib::GemmFitValues& gemm);

}  // namespace ffsim::app
