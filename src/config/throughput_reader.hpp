// Measured training throughputs (a CSV such as models/measured/a100-public-throughputs.csv, written
// by scripts/compute-throughputs.py from shared/reference/compute) read into calib::ThroughputCsv.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "calib/throughput_fit.hpp"

namespace ffsim::config {

/// Header: dataset,source,model,gpu,precision,batch,seq,optimizer,attention,throughput,unit,excluded
/// (and optionally note), RFC 4180 quoting. ConfigError "file: line N: ..." for a missing column, a
/// non-positive batch or throughput, an unknown precision, optimizer, attention or unit. Rows with
/// an `excluded` reason are kept (their errors are shown) but not fitted; they may leave the other
/// columns empty.
[[nodiscard]] calib::ThroughputCsv parse_throughput_csv(const std::string& text, const std::string& file);
[[nodiscard]] calib::ThroughputCsv load_throughput_csv(const std::string& path);

}  // namespace ffsim::config
