// stdout whose write errors are an exit code (output files: check_output_path, write_output in
// context.hpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "report/json_writer.hpp"

namespace ffsim::cli {

/// The schema of `command`'s JSON output, "ffsim.<command>/<N>" (docs/outputs.md): N counts the
/// incompatible changes of that document (a key renamed or removed, a unit or shape changed);
/// added keys keep N. What hfreduce-bench writes is "ffsim.hfreduce-bench/N" the same way.
[[nodiscard]] std::string schema_version(std::string_view command);

/// Opens `command`'s JSON document: an object whose first member is "schema_version"; the caller
/// writes the rest and the closing end_object(). Every --json output starts here.
void begin_json(report::JsonWriter& w, std::string_view command);

/// One value of a row: text, a number in SI base units, an integer, a flag, or none (null in
/// JSON, an empty cell in CSV).
using Cell = std::variant<std::string, double, long long, bool, std::nullptr_t>;
/// One row of a command's table as (column, value): the same keys, in the same order, in its JSON
/// rows and its CSV columns, so that the two outputs cannot disagree (docs/outputs.md).
using Record = std::vector<std::pair<std::string, Cell>>;

/// The rows as a JSON array of objects (after a key, or as a value).
void write_records_json(report::JsonWriter& w, const std::vector<Record>& rows);
/// The rows as RFC 4180 CSV: a header of the first row's keys, then one line per row (every row
/// must have the same keys); numbers as in JSON (shortest round trip), flags true/false.
void write_records_csv(std::ostream& os, const std::vector<Record>& rows);

/// A cell as a CSV field's text (before quoting): numbers as in JSON, flags true/false, none empty.
[[nodiscard]] std::string cell_text(const Cell& c);
/// A cell as a JSON value (a string quoted, a number as JsonWriter writes it, null).
[[nodiscard]] std::string json_cell(const Cell& c);
/// One CSV line of `cells` (RFC 4180 quoting, as write_records_csv), with its '\n'.
[[nodiscard]] std::string csv_line(const std::vector<std::string>& cells);
/// A record as one line of compact JSON, {"key": value, ...}, without a newline (`ffsim sweep`).
[[nodiscard]] std::string json_record_line(const Record& r);

/// Puts std::cout on a buffer that keeps the first write error, for the lifetime of the guard
/// (one, in run()). finish() flushes it: a command that printed to a full disk, a closed pipe's
/// reader gone (when SIGPIPE is ignored) or /dev/full fails with a message instead of exiting 0.
class StdoutGuard {
public:
  StdoutGuard();
  ~StdoutGuard();
  StdoutGuard(const StdoutGuard&) = delete;
  StdoutGuard& operator=(const StdoutGuard&) = delete;
  /// Flushes stdout; `rc` when every write succeeded, else a message on stderr and kUsage (2)
  /// in place of kOk (a failing command keeps its own code).
  int finish(int rc);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ffsim::cli
