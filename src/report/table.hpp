// Text tables (default output), CSV and the row data behind them.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ffsim::report {

/// A table of strings with a header row; numeric-looking cells are right-aligned.
class Table {
public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  /// Appends a row; it must have as many cells as the header.
  void add(std::vector<std::string> row);
  /// A horizontal rule before the next row (text output only).
  void rule();
  [[nodiscard]] std::size_t rows() const { return rows_.size(); }
  [[nodiscard]] const std::vector<std::string>& header() const { return header_; }
  [[nodiscard]] const std::vector<std::vector<std::string>>& data() const { return rows_; }

  /// Aligned columns, two spaces apart, a dashed line under the header.
  void print(std::ostream& os, const std::string& indent = "") const;
  /// RFC 4180 CSV (cells quoted when they contain a comma, quote or newline).
  void print_csv(std::ostream& os) const;
  /// Rows become columns: the first column's cells become the header (after `corner`), and each
  /// other column a row headed by its header cell. A side-by-side table (one quantity per row,
  /// one design per column) so becomes one record per design with one quantity, and so one
  /// unit, per column (what CSV readers expect).
  [[nodiscard]] Table transposed(const std::string& corner) const;

private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> rules_;
};

}  // namespace ffsim::report
