// `ffsim validate --compute MODEL`: a calibrated shaped compute model (a compute_model entry with a
// "shaped" block, written by `ffsim calibrate --throughput ... -o`) against the measurements its
// file names: refitted on them, its values must come back (else the file is stale: exit 3); then
// the error of each dataset in the fit and held out (leave one dataset out), for the GEMM rates
// and the training throughputs.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "cli/context.hpp"

namespace ffsim::cli {

/// `model`: a catalog compute_model name, or a .json file holding one.
[[nodiscard]] int run_validate_compute(Context& ctx, const std::string& model, bool json);

}  // namespace ffsim::cli
