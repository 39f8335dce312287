// Measured GEMM rates (a CSV such as shared/reference/compute/gemm_a100.csv) read into
// calib::GemmCsv, and the catalog's GPU facts the GEMM model needs (calib::GemmGpu).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "calib/gemm_fit.hpp"

namespace ffsim::config {

class Catalog;

/// Header: source,gpu,dtype,M,N,K,tflops,... (RFC 4180 quoting). ConfigError "file:LINE: ..." for a
/// missing column, a non-positive size or rate, an unknown dtype. Rows whose kind says "secondary
/// copy" are kept but excluded (their figure is another row's).
[[nodiscard]] calib::GemmCsv parse_gemm_csv(const std::string& text, const std::string& file);
[[nodiscard]] calib::GemmCsv load_gemm_csv(const std::string& path);

/// UsageError for an unknown model or one without an "sms" fact.
[[nodiscard]] calib::GemmGpu gemm_gpu(const Catalog& cat, const std::string& name);

}  // namespace ffsim::config
