// nccl-tests all_reduce_perf logs (the text nccl-tests prints), read and checked into
// calib::NcclTestsLog.
// SPDX-License-Identifier: Apache-2.0
#include "config/nccl_tests_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "config/reader.hpp"
#include "core/error.hpp"

namespace ffsim::config {

using calib::NcclTestsLog;
using calib::NcclTestsRow;

namespace {

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream ss(line);
  std::vector<std::string> t;
  std::string x;
  while (ss >> x) t.push_back(x);
  return t;
}

std::string num(double v, int digits = 6) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

// Bytes per element of the types nccl-tests prints.
const std::map<std::string, int>& type_sizes() {
  static const std::map<std::string, int> m{{"int8", 1},   {"uint8", 1},    {"int32", 4},  {"uint32", 4},
                                            {"int64", 8},  {"uint64", 8},   {"half", 2},   {"float", 4},
                                            {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}};
  return m;
}

class LogError {
public:
  explicit LogError(std::string file) : file_(std::move(file)) {}
  [[noreturn]] void at(int line, const std::string& msg) const { throw ConfigError(file_, std::to_string(line), msg); }
  [[noreturn]] void whole(const std::string& msg) const { throw ConfigError(file_, "", msg); }

private:
  std::string file_;
};

// A number of the table: the whole token must be one (nccl-tests prints plain decimals).
double number(const LogError& e, int line, const std::string& tok, const char* what, bool integer) {
  char* end = nullptr;
  const double v = std::strtod(tok.c_str(), &end);
  if (tok.empty() || end != tok.c_str() + tok.size() || !std::isfinite(v) || v < 0 || (integer && v != std::floor(v)))
    e.at(line, std::string("expected ") + what + ", got \"" + tok + "\"");
  return v;
}

}  // namespace

bool is_nccl_tests_log(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] == '{') return false;
  return text.find("# nThread") != std::string::npos;
}

NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file) {
  const LogError e(file);
  NcclTestsLog log;
  log.file = file;
  std::istringstream in(text);
  std::string line;
  int n = 0, header_line = 0;
  std::map<std::string, int> per_host;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto t = tokens(line);
    if (t.empty()) continue;
    if (t[0] == "#" && t.size() >= 2 && t[1] == "nThread") {
      if (header_line)
        e.at(n, "a second \"# nThread\" header (the first is on line " + std::to_string(header_line) +
                    "): one log is one run of all_reduce_perf");
      header_line = n;
      if (t.size() < 5 || t[3] != "nGpus")
        e.at(n, "expected \"# nThread N nGpus G ...\" (nccl-tests' first line), got \"" + line + "\"");
      log.threads = static_cast<int>(number(e, n, t[2], "a thread count after nThread", true));
      log.gpus_per_thread = static_cast<int>(number(e, n, t[4], "a GPU count after nGpus", true));
      if (log.threads < 1 || log.gpus_per_thread < 1) e.at(n, "expected nThread and nGpus of at least 1");
      continue;
    }
    if (t[0] == "#" && t.size() >= 2 && t[1] == "Rank") {
      if (!header_line) e.at(n, "a device line before the \"# nThread ... nGpus ...\" header");
      // "#  Rank  0 Group  0 Pid  12345 on  node01 device  0 [0x07] NVIDIA A100-SXM4-80GB"
      const auto on = std::find(t.begin(), t.end(), "on");
      const auto dev = std::find(t.begin(), t.end(), "device");
      if (t.size() < 12 || on == t.end() || on + 1 == t.end() || dev == t.end() || dev + 3 > t.end() ||
          static_cast<int>(number(e, n, t[2], "a rank number after Rank", true)) != log.ranks)
        e.at(n, "expected the device line of rank " + std::to_string(log.ranks) + " (\"#  Rank  " +
                    std::to_string(log.ranks) + " Group  0 Pid  PID on HOST device  D [BUSID] NAME\"), got \"" + line +
                    "\"");
      const std::string host = *(on + 1);
      if (!per_host.count(host)) log.hosts.push_back(host);
      ++per_host[host];
      std::string name;
      for (auto it = dev + 3; it < t.end(); ++it) name += (name.empty() ? "" : " ") + *it;
      if (name.empty()) e.at(n, "expected the device's name after its bus id, got \"" + line + "\"");
      log.devices.push_back(name);
      ++log.ranks;
      continue;
    }
    if (t[0] == "#" && line.find("Avg bus bandwidth") != std::string::npos) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) e.at(n, "expected \"# Avg bus bandwidth    : X\", got \"" + line + "\"");
      const auto v = tokens(line.substr(colon + 1));
      if (v.empty()) e.at(n, "expected the average bus bandwidth (GB/s) after the colon");
      log.avg_busbw_Bps = number(e, n, v[0], "the average bus bandwidth in GB/s", false) * 1e9;
      continue;
    }
    if (t[0][0] == '#') continue;  // other comments: the table's titles, "Out of bounds values", ...
    // NCCL's own messages (NCCL_DEBUG=INFO) interleave with the table.
    if (line.find(" NCCL INFO ") != std::string::npos) continue;
    if (!header_line)
      e.at(n, "expected nccl-tests output, starting with \"# nThread N nGpus G ...\", got \"" + line + "\"");
    if (log.ranks == 0)
      e.at(n, "a table row before any \"#  Rank\" device line (nccl-tests lists every rank's device first)");
    if (t.size() != 13)
      e.at(n,
           "expected 13 columns (size, count, type, redop, root, then time, algbw, busbw and #wrong out-of-place and "
           "in-place), got " +
               std::to_string(t.size()) + ": \"" + line + "\"");
    NcclTestsRow r;
    r.line = n;
    r.bytes = number(e, n, t[0], "a size in bytes", true);
    r.count = static_cast<long long>(number(e, n, t[1], "an element count", true));
    r.type = t[2];
    r.redop = t[3];
    const auto ts = type_sizes().find(r.type);
    if (ts == type_sizes().end()) {
      std::string valid;
      for (const auto& [k, v] : type_sizes()) valid += (valid.empty() ? "" : ", ") + k;
      e.at(n, "expected a data type (" + valid + "), got \"" + r.type + "\"");
    }
    if (r.bytes != static_cast<double>(r.count) * ts->second)
      e.at(n, "inconsistent: " + t[0] + " bytes, but " + t[1] + " " + r.type + " elements are " +
                  num(static_cast<double>(r.count) * ts->second, 15) + " bytes");
    if (t[4] != "-1")
      e.at(n,
           "expected root -1 (an allreduce has no root), got " + t[4] + ": is this another nccl-tests binary's log?");
    if (!log.rows.empty() && r.bytes <= log.rows.back().bytes)
      e.at(n, "expected sizes in increasing order, got " + t[0] + " bytes after " + num(log.rows.back().bytes, 15));
    const double n_ranks = log.ranks;
    const double factor = 2 * (n_ranks - 1) / n_ranks;
    for (int k = 0; k < 2; ++k) {
      const auto c = static_cast<std::size_t>(5 + 4 * k);
      const char* place = k == 0 ? "out-of-place" : "in-place";
      const double us = number(e, n, t[c], "a time in us", false);
      if (!(us > 0)) e.at(n, std::string("expected a positive ") + place + " time in us, got " + t[c]);
      r.time_s[k] = us * 1e-6;
      const double alg = number(e, n, t[c + 1], "an algbw in GB/s", false);
      const double bus = number(e, n, t[c + 2], "a busbw in GB/s", false);
      r.algbw_Bps[k] = alg * 1e9;
      r.busbw_Bps[k] = bus * 1e9;
      // Printed to 2 decimals: half a unit of the last digit, and the time's own rounding.
      const double expect = r.bytes / r.time_s[k] / 1e9;
      if (std::fabs(alg - expect) > 0.0051 + 1e-3 * expect)
        e.at(n, std::string("inconsistent: ") + place + " algbw " + t[c + 1] + " GB/s, but " + t[0] + " B / " + t[c] +
                    " us = " + num(expect, 4) + " GB/s");
      if (std::fabs(bus - alg * factor) > 0.0051 * (1 + factor) + 1e-3 * bus)
        e.at(n, std::string("inconsistent: ") + place + " busbw " + t[c + 2] +
                    " GB/s, but an allreduce's busbw is algbw x 2(n-1)/n = " + t[c + 1] + " x " + num(factor, 4) +
                    " = " + num(alg * factor, 4) + " GB/s for the log's " + std::to_string(log.ranks) +
                    " ranks: is this another nccl-tests binary's log, or a rank's device line missing?");
      const std::string& wrong = t[c + 3];
      if (wrong != "N/A" && wrong != "0")
        e.at(n, std::string("expected 0 wrong elements (") + place + "), got " + wrong +
                    ": a run with wrong results does not measure an allreduce");
    }
    log.rows.push_back(r);
  }
  if (!header_line)
    e.whole(
        "expected nccl-tests output (a \"# nThread N nGpus G ...\" header, device lines and the table), found none");
  if (log.rows.size() < 2)
    e.whole("expected at least 2 sizes in the table (a latency and a bandwidth need two), got " +
            std::to_string(log.rows.size()));
  if (log.ranks % (log.threads * log.gpus_per_thread) != 0)
    e.at(header_line, "inconsistent: " + std::to_string(log.ranks) +
                          " device lines, but each process runs nThread x nGpus = " +
                          std::to_string(log.threads * log.gpus_per_thread) + " ranks");
  for (const auto& h : log.hosts) log.ranks_per_host.push_back(per_host[h]);
  return log;
}

NcclTestsLog load_nccl_tests(const std::string& path) { return parse_nccl_tests(Document::read_file(path), path); }

}  // namespace ffsim::config
