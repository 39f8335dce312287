// nccl-tests `all_reduce_perf` logs (the text nccl-tests prints), read and checked into
// calib::NcclTestsLog.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "calib/nccl_tests.hpp"

namespace ffsim::config {

/// True if `text` looks like nccl-tests output (its "# nThread" header before any JSON).
[[nodiscard]] bool is_nccl_tests_log(const std::string& text);

/// Parses an all_reduce_perf log. Checks, each a ConfigError "file:LINE: expected ...": the header,
/// a device line per rank (nThread x nGpus per process), the table's 13 columns, sizes that equal
/// count x the type's size, algbw = size / time and busbw = algbw x 2(n-1)/n (the allreduce's
/// factor; another test's log fails here) to the digits printed, no wrong elements, sizes in
/// increasing order, at least 2 rows.
[[nodiscard]] calib::NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file);
[[nodiscard]] calib::NcclTestsLog load_nccl_tests(const std::string& path);

}  // namespace ffsim::config
