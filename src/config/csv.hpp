// RFC 4180 records, for the CSV inputs (measured GEMM rates, measured throughputs).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

namespace ffsim::config {

/// The fields of one record of `text` from `pos`, advancing `pos` past the record's newline
/// (quoted fields may hold commas, doubled quotes and newlines).
[[nodiscard]] std::vector<std::string> csv_record(const std::string& text, std::size_t& pos);

}  // namespace ffsim::config
