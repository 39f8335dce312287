// `ffsim sweep <scenario> --command NAME`: a grid over any scenario keys (JSON pointers), each point
// run through the command's own service, one CSV/JSON row per result; invalid points are rows with
// the reason; resumable; split across threads and MPI ranks with byte-identical output.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "cli/sweep_mpi.hpp"
#include "config/scenario_doc.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/progress.hpp"
#include "core/spell.hpp"
#include "report/json_writer.hpp"

namespace ffsim::cli {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxPoints = 1000000;
constexpr std::size_t kMaxValues = 100000;

struct SweepArgs {
  std::string scenario;
  std::string command;
  std::vector<std::string> sets, ranges;
  std::vector<std::string> command_args;
  bool zip = false;
  std::string csv, json;
  int threads = 1;
  bool quiet = false;
  CLI::App* sub = nullptr;
};

// One knob: a JSON pointer and its values, as JSON text (for the document and the JSON rows) and as
// a CSV cell (the same, strings without their quotes).
struct Knob {
  std::string pointer;
  std::string given;  ///< "--set /cluster/nodes=1,2" (for messages)
  std::vector<std::string> json, cells;
};

bool is_json_number(const std::string& s) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t b = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > b;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0')
    ++i;
  else if (!digits())
    return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

std::pair<std::string, std::string> split_knob(const std::string& text, const std::string& option,
                                               const std::string& form) {
  const auto eq = text.find('=');
  if (text.empty() || text[0] != '/' || eq == std::string::npos || eq == 1 || eq + 1 == text.size())
    throw UsageError(option + ": expected " + form + ", a JSON pointer into the scenario and its values, got \"" +
                     text + "\"");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

void add_value(Knob& k, std::string json, std::string cell) {
  if (std::find(k.json.begin(), k.json.end(), json) != k.json.end())
    throw UsageError(k.given + ": " + cell + " appears twice (its rows would repeat); give each value once");
  k.json.push_back(std::move(json));
  k.cells.push_back(std::move(cell));
  if (k.json.size() > kMaxValues)
    throw UsageError(k.given + ": more than " + fmt_int(static_cast<long long>(kMaxValues)) + " values");
}

// --set /ptr=V1,V2,...: a number, true, false or null is that JSON value; "text" (quoted) or any
// other text is a string ("184MiB").
Knob parse_set(const std::string& text) {
  const auto [ptr, spec] = split_knob(text, "--set", "POINTER=V1,V2,... (e.g. /cluster/nodes=16,32,64)");
  Knob k{ptr, "--set " + text, {}, {}};
  std::size_t start = 0;
  while (true) {
    const auto comma = spec.find(',', start);
    const std::string v = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (v.empty())
      throw UsageError(k.given + ": empty value in \"" + spec +
                       "\" (expected a comma-separated list without empty items)");
    if (is_json_number(v) || v == "true" || v == "false" || v == "null") {
      add_value(k, v, v);
    } else if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
      const std::string inner = v.substr(1, v.size() - 2);
      if (inner.find_first_of("\"\\") != std::string::npos)
        throw UsageError(k.given + ": a quoted value holds no quote or backslash, got " + v);
      add_value(k, report::JsonWriter::quote(inner), inner);
    } else {
      add_value(k, report::JsonWriter::quote(v), v);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return k;
}

double range_number(const std::string& s, const Knob& k, const char* what) {
  if (!is_json_number(s)) throw UsageError(k.given + ": expected a number for " + what + ", got \"" + s + "\"");
  return std::strtod(s.c_str(), nullptr);
}

// --range /ptr=START:STOP:STEP: START, START + STEP, ... up to STOP (included when hit).
Knob parse_range(const std::string& text) {
  const auto [ptr, spec] = split_knob(text, "--range", "POINTER=START:STOP:STEP (e.g. /cluster/nodes=2:10:2)");
  Knob k{ptr, "--range " + text, {}, {}};
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto c = spec.find(':', start);
    parts.push_back(spec.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  if (parts.size() != 3)
    throw UsageError(k.given + ": expected START:STOP:STEP (three numbers), got \"" + spec +
                     "\"; a list of values is --set " + ptr + "=V1,V2,...");
  const double a = range_number(parts[0], k, "START"), b = range_number(parts[1], k, "STOP"),
               step = range_number(parts[2], k, "STEP");
  if (!(step > 0)) throw UsageError(k.given + ": STEP must be positive, got " + parts[2]);
  if (b < a)
    throw UsageError(k.given + ": STOP (" + parts[1] + ") is below START (" + parts[0] +
                     "); write START:STOP:STEP with START <= STOP");
  const double span = (b - a) / step;
  if (span >= static_cast<double>(kMaxValues))
    throw UsageError(k.given + ": more than " + fmt_int(static_cast<long long>(kMaxValues)) + " values");
  const auto n = static_cast<std::size_t>(std::floor(span + 1e-9)) + 1;
  const bool integral = a == std::floor(a) && step == std::floor(step) && std::fabs(b) < 9e15;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = a + static_cast<double>(i) * step;  // no accumulated rounding
    const std::string t = integral ? std::to_string(static_cast<long long>(x)) : report::JsonWriter::number(x);
    add_value(k, t, t);
  }
  return k;
}

// The points in grid order: the cartesian product (the first knob varies slowest), or with --zip
// the i-th value of every knob.
std::vector<std::vector<std::size_t>> grid_points(const std::vector<Knob>& knobs, bool zip) {
  std::vector<std::vector<std::size_t>> pts;
  if (zip) {
    for (const auto& k : knobs)
      if (k.json.size() != knobs.front().json.size())
        throw UsageError("--zip: every knob needs as many values; " + knobs.front().given + " has " +
                         std::to_string(knobs.front().json.size()) + ", " + k.given + " has " +
                         std::to_string(k.json.size()));
    for (std::size_t i = 0; i < knobs.front().json.size(); ++i) pts.emplace_back(knobs.size(), i);
    return pts;
  }
  double total = 1;
  for (const auto& k : knobs) total *= static_cast<double>(k.json.size());
  if (total > static_cast<double>(kMaxPoints))
    throw UsageError("the grid has " + fmt_g(total, 4) + " points, more than " +
                     fmt_int(static_cast<long long>(kMaxPoints)) +
                     "; sweep fewer values (or --zip lists of equal length)");
  std::vector<std::size_t> idx(knobs.size(), 0);
  while (true) {
    pts.push_back(idx);
    std::size_t d = knobs.size();
    while (d > 0) {
      --d;
      if (++idx[d] < knobs[d].json.size()) break;
      idx[d] = 0;
      if (d == 0) return pts;
    }
    if (knobs.empty()) return pts;
  }
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

// The fields of one CSV line (RFC 4180, without its newline).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        f.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        f.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      f.emplace_back();
    } else {
      f.back() += c;
    }
  }
  return f;
}

// The text of one point: its CSV lines, and its JSON rows one per line (each without the comma).
struct PointText {
  std::string csv;
  std::vector<std::string> json;
  bool ok = true;
};

std::string pack(const PointText& t) {
  std::string s = t.ok ? "1" : "0";
  s += std::to_string(t.csv.size()) + ":" + t.csv;
  for (const auto& j : t.json) s += std::to_string(j.size()) + ":" + j;
  return s;
}

PointText unpack(const std::string& s) {
  PointText t;
  t.ok = s[0] == '1';
  std::size_t i = 1;
  bool first = true;
  while (i < s.size()) {
    const auto colon = s.find(':', i);
    const std::size_t n = std::stoull(s.substr(i, colon - i));
    std::string part = s.substr(colon + 1, n);
    i = colon + 1 + n;
    if (first)
      t.csv = std::move(part);
    else
      t.json.push_back(std::move(part));
    first = false;
  }
  return t;
}

// What a sweep writes: the header lines, then each point's rows in grid order.
class Outputs {
public:
  Outputs(const SweepArgs& a, std::string csv_header, std::string json_header, std::vector<std::string> csv_keys,
          std::vector<std::string> json_keys)
      : a_(a),
        csv_header_(std::move(csv_header)),
        json_header_(std::move(json_header)),
        csv_keys_(std::move(csv_keys)),
        json_keys_(std::move(json_keys)) {}

  // Reads what the files already hold: the number of leading grid points whose rows are all there.
  std::size_t resume(std::size_t points) {
    if (a_.csv.empty() && a_.json.empty()) return 0;  // stdout: nothing to resume
    std::size_t done = points;
    csv_stream_ = !a_.csv.empty() && is_stream(a_.csv);
    json_stream_ = !a_.json.empty() && is_stream(a_.json);
    if (!a_.csv.empty() && !csv_stream_) done = std::min(done, resume_csv(points));
    if (!a_.json.empty() && !json_stream_) done = std::min(done, resume_json(points));
    if (csv_stream_ || json_stream_) done = 0;  // a stream holds nothing to resume
    // Keep exactly the rows of the points done (a killed run may have left more in one file, or a
    // part of a point).
    if (!a_.csv.empty()) {
      csv_text_ = csv_header_;
      for (std::size_t p = 0; p < done; ++p) csv_text_ += csv_points_[p];
      if (csv_stream_)
        open_stream();
      else
        rewrite_csv();
    }
    if (!a_.json.empty()) {
      json_rows_.clear();
      for (std::size_t p = 0; p < done; ++p)
        for (const auto& r : json_points_[p]) json_rows_.push_back(r);
      if (!json_stream_) write_json();
    }
    return done;
  }

  void add(const PointText& t) {
    if (!a_.csv.empty()) {
      csv_text_ += t.csv;
      std::fwrite(t.csv.data(), 1, t.csv.size(), csv_file_);
      if (std::fflush(csv_file_) != 0 || std::ferror(csv_file_))
        throw UsageError("--csv: cannot write " + a_.csv + ": " + std::strerror(errno));
    } else if (a_.json.empty()) {
      std::cout << t.csv;
      std::cout.flush();
    }
    if (!a_.json.empty()) {
      for (const auto& j : t.json) json_rows_.push_back(j);
      const auto now = std::chrono::steady_clock::now();
      if (!json_stream_ && now - last_json_ > std::chrono::milliseconds(500)) write_json();
    }
  }

  void start_stdout() {
    if (a_.csv.empty() && a_.json.empty()) std::cout << csv_header_;
  }

  void finish() {
    if (!a_.json.empty()) write_json();
    if (csv_file_) {
      std::fclose(csv_file_);
      csv_file_ = nullptr;
    }
  }

  ~Outputs() {
    if (csv_file_) std::fclose(csv_file_);
  }
  Outputs(const Outputs&) = delete;
  Outputs& operator=(const Outputs&) = delete;

private:
  // A terminal, a pipe, /dev/stdout: written as the rows come (CSV) or once at the end (JSON),
  // never read back nor replaced.
  static bool is_stream(const std::string& path) {
    if (path == "/dev/stdout" || path == "/dev/stderr" || path.rfind("/dev/fd/", 0) == 0) return true;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    return !ec && fs::exists(st) && !fs::is_regular_file(st);
  }

  void open_stream() {
    csv_file_ = std::fopen(a_.csv.c_str(), "w");
    if (!csv_file_) throw UsageError("--csv: cannot open " + a_.csv + ": " + std::strerror(errno));
    std::fwrite(csv_text_.data(), 1, csv_text_.size(), csv_file_);
    std::fflush(csv_file_);
  }

  [[noreturn]] void different(const std::string& option, const std::string& file, const std::string& why) const {
    throw UsageError(option + ": " + file + " holds the output of a different sweep (" + why +
                     "); it is left as it is: give another file, or delete it to start this sweep afresh");
  }

  // The rows of `line_keys` (the knob cells of each row, then its row count) grouped into points,
  // checked against the grid: the number of whole points there.
  template <class Rows>
  std::size_t group(const std::string& option, const std::string& file, const Rows& rows, std::size_t points,
                    const std::function<std::vector<std::string>(std::size_t)>& key_of,
                    const std::function<std::vector<std::string>(std::size_t)>& expected,
                    const std::function<long long(std::size_t)>& count_of, std::vector<std::string>* csv_out,
                    std::vector<std::vector<std::string>>* json_out) {
    std::size_t i = 0, p = 0;
    while (i < rows.size()) {
      if (p >= points) different(option, file, "it has rows past this grid's " + std::to_string(points) + " points");
      const std::vector<std::string> k = key_of(i);
      if (k != expected(p))
        different(option, file,
                  "its row " + std::to_string(i + 1) + " is for " + join(k) + ", and this grid's point " +
                      std::to_string(p + 1) + " is " + join(expected(p)));
      const long long n = count_of(i);
      if (n < 1) different(option, file, "its row " + std::to_string(i + 1) + " has no valid point_rows");
      if (i + static_cast<std::size_t>(n) > rows.size()) break;  // the point's last rows are missing
      for (long long r = 1; r < n; ++r)
        if (key_of(i + static_cast<std::size_t>(r)) != k)
          different(option, file, "point " + std::to_string(p + 1) + " has fewer rows than its point_rows says");
      std::string csv;
      std::vector<std::string> js;
      for (long long r = 0; r < n; ++r) {
        if (csv_out) csv += rows[i + static_cast<std::size_t>(r)] + "\n";
        if (json_out) js.push_back(rows[i + static_cast<std::size_t>(r)]);
      }
      if (csv_out) csv_out->push_back(std::move(csv));
      if (json_out) json_out->push_back(std::move(js));
      i += static_cast<std::size_t>(n);
      ++p;
    }
    return p;
  }

public:
  /// The knob values of point p: as CSV cells, as JSON texts.
  std::function<std::vector<std::string>(std::size_t)> csv_key, json_key;

private:
  std::size_t resume_csv(std::size_t points) {
    std::string text;
    std::error_code ec;
    if (fs::exists(a_.csv, ec)) text = config::Document::read_file(a_.csv);
    std::size_t done = 0;
    if (!text.empty()) {
      // Whole lines only (a cut header, a prefix of this sweep's, is a sweep not begun): a kill may have cut the last
      // one.
      const auto last_nl = text.rfind('\n');
      if (last_nl == std::string::npos && csv_header_.compare(0, text.size(), text) != 0)
        different("--csv", a_.csv,
                  "it begins \"" + text.substr(0, 200) + "\", and this sweep's header \"" +
                      csv_header_.substr(0, csv_header_.size() - 1) + "\"");
      if (last_nl == std::string::npos) return 0;
      text = text.substr(0, last_nl + 1);
      if (text.compare(0, csv_header_.size(), csv_header_) != 0) {
        const std::string first = text.substr(0, text.find('\n'));
        different("--csv", a_.csv,
                  "its header is \"" + first.substr(0, 200) + "\", this sweep's \"" +
                      csv_header_.substr(0, csv_header_.size() - 1) + "\"");
      }
      std::vector<std::string> lines;
      std::size_t at = csv_header_.size();
      while (at < text.size()) {
        const auto nl = text.find('\n', at);
        lines.push_back(text.substr(at, nl - at));
        at = nl + 1;
      }
      std::vector<std::vector<std::string>> fields;
      for (const auto& l : lines) fields.push_back(csv_fields(l));
      const std::size_t nk = csv_keys_.size();
      done = group(
          "--csv", a_.csv, lines, points,
          [&](std::size_t i) {
            const auto& f = fields[i];
            return std::vector<std::string>(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(std::min(nk, f.size())));
          },
          csv_key,
          [&](std::size_t i) -> long long {
            const auto& f = fields[i];
            if (f.size() < nk + 3) return 0;
            try {
              return std::stoll(f[nk + 2]);
            } catch (const std::exception&) {
              return 0;
            }
          },
          &csv_points_, nullptr);
    }
    return done;
  }

  void rewrite_csv() {
    // The kept rows, whole, then append from there (write_output: a temporary file renamed over).
    write_output("--csv", a_.csv, [&](std::ostream& os) { os << csv_text_; });
    csv_file_ = std::fopen(a_.csv.c_str(), "ab");
    if (!csv_file_) throw UsageError("--csv: cannot open " + a_.csv + ": " + std::strerror(errno));
  }

  std::size_t resume_json(std::size_t points) {
    std::string text;
    std::error_code ec;
    if (fs::exists(a_.json, ec)) text = config::Document::read_file(a_.json);
    if (text.empty()) return 0;
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < text.size()) {
      const auto nl = text.find('\n', at);
      if (nl == std::string::npos) break;
      lines.push_back(text.substr(at, nl - at));
      at = nl + 1;
    }
    if (lines.empty() && json_header_.compare(0, text.size(), text) == 0) return 0;  // a cut first line
    if (lines.empty() || lines.front() + "\n" != json_header_)
      different("--json", a_.json,
                "its first line is \"" + (lines.empty() ? text.substr(0, 200) : lines.front().substr(0, 200)) +
                    "\", this sweep's \"" + json_header_.substr(0, json_header_.size() - 1) + "\"");
    std::vector<std::string> rows;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      std::string l = lines[i];
      if (l == "]}") break;
      if (!l.empty() && l.back() == ',') l.pop_back();
      rows.push_back(l);
    }
    const std::size_t nk = json_keys_.size();
    // A row begins with the knobs' members: {"/p": v, ...}; its key is that text, member by member.
    auto key_of = [&](std::size_t i) {
      std::vector<std::string> k;
      const std::string& r = rows[i];
      std::size_t pos = 1;
      for (std::size_t m = 0; m < nk; ++m) {
        const std::string name = report::JsonWriter::quote(json_keys_[m]) + ": ";
        if (r.compare(pos, name.size(), name) != 0) return std::vector<std::string>{r.substr(0, 120)};
        pos += name.size();
        // The value runs to the next ", \"" (values are numbers, flags, null or strings without quotes).
        std::size_t end = pos;
        if (end < r.size() && r[end] == '"') {
          end = r.find('"', end + 1);
          end = end == std::string::npos ? r.size() : end + 1;
        } else {
          while (end < r.size() && r[end] != ',' && r[end] != '}') ++end;
        }
        k.push_back(r.substr(pos, end - pos));
        pos = end + 2;
      }
      return k;
    };
    auto count_of = [&](std::size_t i) -> long long {
      const std::string tag = "\"point_rows\": ";
      const auto p = rows[i].find(tag);
      if (p == std::string::npos) return 0;
      try {
        return std::stoll(rows[i].substr(p + tag.size()));
      } catch (const std::exception&) {
        return 0;
      }
    };
    return group("--json", a_.json, rows, points, key_of, json_key, count_of, nullptr, &json_points_);
  }

  void write_json() {
    write_output("--json", a_.json, [&](std::ostream& os) {
      os << json_header_;
      for (std::size_t i = 0; i < json_rows_.size(); ++i)
        os << json_rows_[i] << (i + 1 < json_rows_.size() ? ",\n" : "\n");
      os << "]}\n";
    });
    last_json_ = std::chrono::steady_clock::now();
  }

  const SweepArgs& a_;
  std::string csv_header_, json_header_;
  std::vector<std::string> csv_keys_, json_keys_;
  std::vector<std::string> csv_points_;
  std::vector<std::vector<std::string>> json_points_;
  std::string csv_text_;
  std::vector<std::string> json_rows_;
  std::FILE* csv_file_ = nullptr;
  bool csv_stream_ = false, json_stream_ = false;
  std::chrono::steady_clock::time_point last_json_{};
};

// A progress bar on a terminal: points done, rate, ETA (stderr; nothing when it is not a terminal).
class Progress {
public:
  Progress(bool on, std::size_t total) : on_(on), total_(total), t0_(std::chrono::steady_clock::now()) {}
  void update(std::size_t done, bool force = false) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double el = std::chrono::duration<double>(now - t0_).count();
    const double rate = el > 0 ? static_cast<double>(done) / el : 0;
    std::string bar = "\r  sweep " + progress::bar(static_cast<double>(done), static_cast<double>(total_), 30) + " " +
                      std::to_string(done) + "/" + std::to_string(total_) + " points, " + fmt_g(rate, 3) + " points/s";
    if (done > 0 && done < total_) bar += ", ETA " + progress::duration(static_cast<double>(total_ - done) / rate);
    std::cerr << bar << "   " << std::flush;
    shown_ = true;
  }
  void clear() {
    if (on_ && shown_) std::cerr << "\r" << std::string(90, ' ') << "\r" << std::flush;
  }

private:
  bool on_;
  std::size_t total_;
  std::chrono::steady_clock::time_point t0_, last_{};
  bool shown_ = false;
};

using Setup = void (*)(CLI::App&, Context&);

const std::vector<std::pair<std::string, Setup>>& sweepable() {
  static const std::vector<std::pair<std::string, Setup>> c{{"collective", setup_collective},
                                                            {"net", setup_net},
                                                            {"ops", setup_ops},
                                                            {"plan", setup_plan},
                                                            {"train", setup_train}};
  return c;
}

std::vector<std::string> sweepable_names() {
  std::vector<std::string> n;
  for (const auto& [name, s] : sweepable()) n.push_back(name);
  return n;
}

int run_sweep(Context& ctx, SweepArgs& a) {
  // MPI: ranks split the grid; rank 0 reads and writes the files.
  if (sweep_mpi::launched() && sweep_mpi::launched_size() > 1 && !sweep_mpi::built_with_mpi())
    throw UsageError("this ffsim was built without MPI (FFSIM_MPI=OFF or no MPI found), and mpirun started " +
                     std::to_string(sweep_mpi::launched_size()) +
                     " copies that would each run the whole grid and write the same files; run it without mpirun "
                     "(--threads N splits the grid on one machine), or rebuild with MPI");
  // The command, parsed as its own command line would be: its options are checked once, here.
  Setup setup = nullptr;
  for (const auto& [name, s] : sweepable())
    if (name == a.command) setup = s;
  if (!setup)
    throw UsageError("--command: expected one of " + join(sweepable_names()) + "; got \"" + a.command + "\"" +
                     did_you_mean(a.command, sweepable_names()));
  Context inner;
  CLI::App parser{"ffsim", "ffsim"};
  setup(parser, inner);
  {
    std::vector<std::string> argv{a.command, a.scenario};
    argv.insert(argv.end(), a.command_args.begin(), a.command_args.end());
    std::reverse(argv.begin(), argv.end());
    try {
      parser.parse(argv);
    } catch (const CLI::ParseError& e) {
      throw UsageError("--command " + a.command + " " + join(a.command_args, " ") + ": " + e.what());
    }
  }
  if (!inner.sweep) throw std::logic_error("the command " + a.command + " set no sweep hook");
  const SweepHook hook = *inner.sweep;
  try {
    hook.check();
  } catch (const UsageError& e) {
    throw UsageError("--command " + a.command + ": " + e.what());
  }

  // The knobs, in the order given, each checked against the scenario.
  std::vector<Knob> knobs;
  {
    std::size_t si = 0, ri = 0;
    const auto* set_opt = a.sub->get_option("--set");
    const auto* range_opt = a.sub->get_option("--range");
    for (const CLI::Option* o : a.sub->parse_order()) {
      if (o == set_opt)
        knobs.push_back(parse_set(a.sets.at(si++)));
      else if (o == range_opt)
        knobs.push_back(parse_range(a.ranges.at(ri++)));
    }
  }
  if (knobs.empty())
    throw UsageError(
        "a sweep needs at least one knob: --set POINTER=V1,V2,... or --range POINTER=START:STOP:STEP (e.g. --set "
        "/cluster/nodes=16,32,64)");
  for (std::size_t i = 0; i < knobs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (knobs[i].pointer == knobs[j].pointer)
        throw UsageError(knobs[i].given + ": " + knobs[i].pointer + " is swept twice (also by " + knobs[j].given +
                         "); give its values once");
  if (!a.csv.empty()) check_output_path("--csv", a.csv, {a.scenario, ctx.calibration});
  if (!a.json.empty()) check_output_path("--json", a.json, {a.scenario, ctx.calibration});
  if (!a.csv.empty() && !a.json.empty() && fs::weakly_canonical(a.csv) == fs::weakly_canonical(a.json))
    throw UsageError("--csv and --json name the same file " + a.csv + "; give two files");
  if (a.threads > 1) {
    // Points side by side need an engine that is safe on threads (the SimGrid engine is not; ops
    // runs each simulation on SimGrid in a forked process, and forking a process whose other
    // threads may hold locks is not safe).
    if (a.command == "ops")
      throw UsageError(
          "--threads: ops runs its simulations on SimGrid, one at a time; drop --threads (mpirun -np N splits the "
          "grid across processes)");
    for (std::size_t i = 0; i + 1 < a.command_args.size(); ++i)
      if (a.command_args[i] == "--engine" && a.command_args[i + 1] == "simgrid")
        throw UsageError(
            "--threads: the SimGrid engine runs one simulation at a time; drop --threads (mpirun -np N splits "
            "the grid across processes)");
  }

  ctx.use_scenarios({a.scenario});
  const config::Document base = config::load_scenario(a.scenario);
  for (const auto& k : knobs) {
    try {
      (void)base.with_value(k.pointer, k.json.front());
    } catch (const ValueError& e) {
      throw UsageError(k.given + ": " + a.scenario + " has no " + k.pointer + ": " + e.what() +
                       "; a sweep sets keys the scenario has (add the key with its default value to sweep it)");
    }
  }
  const auto points = grid_points(knobs, a.zip);
  const std::vector<std::string> columns = hook.columns();
  (void)ctx.catalog();  // built once, before the threads share it

  // The header: the knobs' pointers, status, reason, point_rows, then the command's columns.
  std::vector<std::string> head;
  for (const auto& k : knobs) head.push_back(k.pointer);
  std::vector<std::string> keys = head;
  for (const char* c : {"status", "reason", "point_rows"}) head.emplace_back(c);
  for (const auto& c : columns) {
    if (std::find(head.begin(), head.end(), c) != head.end())
      throw UsageError("a knob's pointer " + c + " is also a column of " + a.command + "'s rows");
    head.push_back(c);
  }
  std::string knob_list, arg_list;
  for (std::size_t i = 0; i < knobs.size(); ++i)
    knob_list += (i ? ", " : "") + report::JsonWriter::quote(knobs[i].given);
  for (std::size_t i = 0; i < a.command_args.size(); ++i)
    arg_list += (i ? ", " : "") + report::JsonWriter::quote(a.command_args[i]);
  const std::string json_header = "{\"schema_version\": " + report::JsonWriter::quote(schema_version("sweep")) +
                                  ", \"scenario\": " + report::JsonWriter::quote(a.scenario) +
                                  ", \"command\": " + report::JsonWriter::quote(a.command) + ", \"args\": [" +
                                  arg_list + "], \"knobs\": [" + knob_list +
                                  "], \"zip\": " + (a.zip ? "true" : "false") + ", \"rows\": [\n";

  auto text_of = [&](std::size_t p) {
    const auto& idx = points[p];
    PointText t;
    std::vector<Record> recs;
    std::string reason;
    try {
      config::Document doc = base;
      for (std::size_t k = 0; k < knobs.size(); ++k) doc = doc.with_value(knobs[k].pointer, knobs[k].json[idx[k]]);
      recs = hook.rows(ctx, doc, 1);
      if (recs.empty()) throw SimulationError("the command gave no rows");
    } catch (const ConfigError& e) {
      reason = e.what();
    } catch (const ValueError& e) {
      reason = e.what();
    } catch (const UsageError& e) {
      reason = e.what();
    } catch (const SimulationError& e) {
      reason = std::string("simulation failed: ") + e.what();
    }
    t.ok = reason.empty();
    const std::size_t n = t.ok ? recs.size() : 1;
    for (std::size_t r = 0; r < n; ++r) {
      std::vector<std::string> cells;
      std::string js = "{";
      for (std::size_t k = 0; k < knobs.size(); ++k) {
        cells.push_back(knobs[k].cells[idx[k]]);
        js += report::JsonWriter::quote(knobs[k].pointer) + ": " + knobs[k].json[idx[k]] + ", ";
      }
      cells.emplace_back(t.ok ? "ok" : "invalid");
      cells.push_back(one_line(reason));
      cells.push_back(std::to_string(n));
      js += std::string("\"status\": ") + (t.ok ? "\"ok\"" : "\"invalid\"") +
            ", \"reason\": " + (t.ok ? std::string("null") : report::JsonWriter::quote(one_line(reason))) +
            ", \"point_rows\": " + std::to_string(n);
      for (std::size_t c = 0; c < columns.size(); ++c) {
        if (t.ok && (c >= recs[r].size() || recs[r][c].first != columns[c]))
          throw std::logic_error(a.command + "'s sweep row has column " +
                                 (c < recs[r].size() ? recs[r][c].first : "none") + " where " + columns[c] +
                                 " was announced");
        cells.push_back(t.ok ? cell_text(recs[r][c].second) : std::string());
        js += ", " + report::JsonWriter::quote(columns[c]) + ": " +
              (t.ok ? json_cell(recs[r][c].second) : std::string("null"));
      }
      t.csv += csv_line(cells);
      t.json.push_back(js + "}");
    }
    return t;
  };

  sweep_mpi::start();
  struct Finish {
    ~Finish() { sweep_mpi::finish(); }
  } finish_mpi;
  const int rank = sweep_mpi::rank(), ranks = sweep_mpi::size();

  // Rank 0: what the files hold already.
  std::optional<Outputs> out;
  long long done = 0;
  if (rank == 0) {
    out.emplace(a, csv_line(head), json_header, keys, keys);
    out->csv_key = [&](std::size_t p) {
      std::vector<std::string> k;
      for (std::size_t i = 0; i < knobs.size(); ++i) k.push_back(knobs[i].cells[points[p][i]]);
      return k;
    };
    out->json_key = [&](std::size_t p) {
      std::vector<std::string> k;
      for (std::size_t i = 0; i < knobs.size(); ++i) k.push_back(knobs[i].json[points[p][i]]);
      return k;
    };
    try {
      done = static_cast<long long>(out->resume(points.size()));
    } catch (...) {
      (void)sweep_mpi::broadcast(-1);
      throw;
    }
    out->start_stdout();
  }
  done = sweep_mpi::broadcast(done);
  if (done < 0) return kUsage;  // rank 0 said why
  const auto first = static_cast<std::size_t>(done);

  // This rank's points: every ranks-th point from the first not done.
  std::vector<std::size_t> mine;
  for (std::size_t p = first; p < points.size(); ++p)
    if ((p - first) % static_cast<std::size_t>(ranks) == static_cast<std::size_t>(rank)) mine.push_back(p);

  std::mutex mu;
  std::condition_variable cv;
  std::map<std::size_t, PointText> ready;
  std::exception_ptr failure;
  std::atomic<std::size_t> next{0};
  const int nthreads = std::max(1, std::min<int>(a.threads, static_cast<int>(std::max<std::size_t>(mine.size(), 1))));
  std::vector<std::thread> pool;
  for (int t = 0; t < nthreads; ++t)
    pool.emplace_back([&] {
      while (true) {
        const std::size_t i = next.fetch_add(1);
        if (i >= mine.size()) return;
        try {
          PointText pt = text_of(mine[i]);
          std::lock_guard<std::mutex> lk(mu);
          ready.emplace(mine[i], std::move(pt));
        } catch (...) {
          std::lock_guard<std::mutex> lk(mu);
          if (!failure) failure = std::current_exception();
          next = mine.size();
        }
        cv.notify_all();
      }
    });
  struct Join {
    std::vector<std::thread>& p;
    ~Join() {
      for (auto& t : p)
        if (t.joinable()) t.join();
    }
  } join{pool};

  std::size_t written = first, computed = 0, ok = 0, invalid = 0;
  const std::size_t remaining = points.size() - first;
  Progress progress(rank == 0 && !a.quiet && ::isatty(STDERR_FILENO) != 0, remaining);
  std::size_t local_taken = 0;
  std::map<std::size_t, PointText> pending;  // rank 0: points received, not yet written
  while (true) {
    {
      std::unique_lock<std::mutex> lk(mu);
      cv.wait_for(lk, std::chrono::milliseconds(ranks > 1 ? 5 : 100), [&] { return !ready.empty() || failure; });
      if (failure) {
        if (ranks > 1) {
          try {
            std::rethrow_exception(failure);
          } catch (const std::exception& e) {
            std::cerr << "ffsim sweep (rank " << rank << "): " << e.what()
                      << "\n(this is a bug in ffsim; please report it)\n";
          }
          sweep_mpi::abort_all(kInternal);
        }
        std::rethrow_exception(failure);
      }
      for (auto& [p, t] : ready) pending.emplace(p, std::move(t));
      local_taken += ready.size();
      ready.clear();
    }
    if (rank != 0) {
      for (const auto& [p, t] : pending) sweep_mpi::send(static_cast<long long>(p), pack(t));
      pending.clear();
      if (local_taken == mine.size()) break;
      continue;
    }
    long long idx = 0;
    std::string text;
    while (sweep_mpi::receive(idx, text, false)) pending.emplace(static_cast<std::size_t>(idx), unpack(text));
    while (!pending.empty() && pending.begin()->first == written) {
      const PointText& t = pending.begin()->second;
      out->add(t);
      (t.ok ? ok : invalid) += 1;
      ++computed;
      ++written;
      pending.erase(pending.begin());
    }
    progress.update(written - first);
    if (written == points.size()) break;
    if (local_taken == mine.size() && ranks > 1) {
      // Only other ranks' points are left: wait for them.
      if (sweep_mpi::receive(idx, text, true)) pending.emplace(static_cast<std::size_t>(idx), unpack(text));
    }
  }
  if (rank != 0) return kOk;
  progress.clear();
  out->finish();
  if (!a.quiet)
    std::cerr << "ffsim sweep: " << points.size() << " points: " << first << " already in the output (skipped), "
              << computed << " computed (" << ok << " ok, " << invalid << " invalid)\n";
  return kOk;
}

}  // namespace

void setup_sweep(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand(
      "sweep",
      "A grid over scenario keys (JSON pointers) for collective, net, ops, plan or train: one row per point "
      "(invalid points too), CSV or JSON, resumable, on threads or MPI ranks");
  auto a = std::make_shared<SweepArgs>();
  a->sub = sub;
  ctx.expects(sub->add_option("scenario", a->scenario, "Scenario JSON file")->required()->check(input_file()),
              "a scenario file");
  ctx.expects(
      sub->add_option("--command", a->command, "The command each point runs: " + join(sweepable_names()))->required(),
      "one of " + join(sweepable_names()));
  ctx.expects(
      sub->add_option("--set", a->sets,
                      "A knob: POINTER=V1,V2,... (e.g. /cluster/nodes=16,32,64; numbers, true, false, null, or text "
                      "such as 184MiB); repeatable")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll),
      "POINTER=V1,V2,...");
  ctx.expects(
      sub->add_option("--range", a->ranges, "A knob: POINTER=START:STOP:STEP (STOP included when hit); repeatable")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll),
      "POINTER=START:STOP:STEP");
  sub->add_flag("--zip", a->zip, "Pair the knobs' values (the i-th of each) instead of their cartesian product");
  ctx.expects(sub->add_option("--csv", a->csv, "Write (or resume) the rows as CSV in this file"), "a file name");
  ctx.expects(sub->add_option("--json", a->json, "Write (or resume) the rows as JSON in this file"), "a file name");
  ctx.expects(sub->add_option("--threads", a->threads,
                              "Run this many points at once (default 1; the output does not depend on it)")
                  ->check(int_in(1, 4096)),
              "an integer in [1, 4096]");
  sub->add_flag("--quiet", a->quiet, "No progress bar and no summary on stderr");
  // The command's own options follow "--" (e.g. -- --algo hfreduce --gpus 16). run() doubles that
  // "--" for this command (sweep_separator): CLI11 takes a "--" right after a repeatable option
  // (--set) as the end of that option's values, not as the start of the positionals.
  sub->add_option("args", a->command_args, "The command's own options, after -- (e.g. -- --algo hfreduce --gpus 16)");
  sub->callback([&ctx, a] {
    while (!a->command_args.empty() && a->command_args.front() == "--") a->command_args.erase(a->command_args.begin());
    ctx.action = [&ctx, a] { return run_sweep(ctx, *a); };
  });
}

std::vector<std::string> sweep_separator(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  bool sweep = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "sweep") sweep = true;
    if (args[i] == "--") {
      if (!sweep) break;
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(i), "--");
      return args;
    }
  }
  return {};
}

}  // namespace ffsim::cli
