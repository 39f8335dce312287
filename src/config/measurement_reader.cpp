// Measurement files written by hfreduce-bench (schema "ffsim.hfreduce-bench/1"): parsed and checked
// into calib's plain structs.
// SPDX-License-Identifier: Apache-2.0
#include "config/measurement_reader.hpp"

#include <cmath>
#include <sstream>

#include "core/error.hpp"

namespace ffsim::config {

using calib::Bound;
using calib::kMeasurementSchema;
using calib::MeasurementFile;
using calib::median_of;
using calib::Point;

bool is_measurement(const Reader& root) {
  // One that lost its "schema" still looks like a measurement (points of a machine, no "kind"):
  // reading it as one says that "schema" is missing, where a scenario's reader would ask for "name".
  return root.is_object() && (root.has("schema") || (!root.has("kind") && root.has("points") && root.has("machine")));
}

namespace {

std::string num(double v) {
  std::ostringstream ss;
  ss.precision(6);
  ss << v;
  return ss.str();
}

// Magnitudes accepted in SI units (bytes, seconds, bytes per second), as for unit strings
// (core/unit_parse.hpp): far beyond any machine, and narrow enough that the ratios and sums a fit
// forms stay finite.
constexpr double kMaxMagnitude = 1e30;
constexpr double kMinMagnitude = 1e-30;

double non_negative(const Reader& r, std::string_view key) {
  Reader c = r.child(key, "a non-negative number");
  const double v = c.as_number();
  if (v < 0) c.fail("expected a non-negative number, got " + c.describe());
  if (v > kMaxMagnitude) c.fail("expected a number of at most 1e30, got " + c.describe());
  return v;
}

double positive(const Reader& r, std::string_view key) {
  Reader c = r.child(key, "a positive number");
  const double v = c.as_number();
  if (v <= 0) c.fail("expected a positive number, got " + c.describe());
  if (v < kMinMagnitude || v > kMaxMagnitude) c.fail("expected a number from 1e-30 to 1e30, got " + c.describe());
  return v;
}

// A time in seconds of a sample or round: positive and of a sane magnitude.
double time_value(const Reader& s) {
  const double v = s.as_number();
  if (!(v > 0) || !std::isfinite(v)) s.fail("expected a positive time in seconds, got " + s.describe());
  if (v < kMinMagnitude || v > kMaxMagnitude) s.fail("expected a time from 1e-30 to 1e30 s, got " + s.describe());
  return v;
}

void check_rate(const Reader& p, std::string_view key, double value, double bytes, double median) {
  if (bytes <= 0) {
    if (value != 0)
      p.fail_at(key, "inconsistent with the point's size: " + num(value) + " B/s for 0 bytes (expected 0)");
    return;
  }
  const double expect = bytes / median;
  if (std::fabs(value - expect) > 1e-4 * expect)
    p.fail_at(key, "inconsistent with the point's size and time: " + num(value) + " B/s, but " + num(bytes) + " B / " +
                       num(median) + " s = " + num(expect) + " B/s (check the units: rates are bytes per second)");
}

Point parse_point(const Reader& p) {
  Point x;
  x.pointer = p.pointer();
  x.stage = p.choice("stage", {"allreduce", "bidir", "copy", "d2h", "h2d", "internode", "mpi_allreduce", "mpi_p2p",
                               "pipeline", "reduce"});
  x.backend = p.choice("backend", {"cpu", "cuda", "host", "mpi"});
  x.variant = p.string("variant");
  x.dtype = p.choice("dtype", {"bf16", "fp16", "fp32"});
  x.store = p.string_or("store", "");
  x.k = static_cast<int>(p.integer("k", 0, 1024));
  x.devices = static_cast<int>(p.integer("devices", 0, 1024));
  x.ranks = static_cast<int>(p.integer("ranks", 1, 1 << 20));
  x.threads = static_cast<int>(p.integer("threads", 0, 1 << 16));
  x.chunk_bytes = non_negative(p, "chunk_bytes");
  x.bytes = non_negative(p, "bytes");
  x.traffic_bytes = non_negative(p, "traffic_bytes");
  Reader t = p.child("time_s", "an object with min, median, max, reps, samples (seconds)");
  x.time_min = positive(t, "min");
  x.time_median = positive(t, "median");
  x.time_max = positive(t, "max");
  x.reps = static_cast<int>(t.integer("reps", 1, 1 << 30));
  // hfreduce-bench times calls under 50 us in batches: each sample is the mean of this many calls.
  x.calls_per_sample = static_cast<int>(t.integer_or("calls_per_sample", 1, 1, 1 << 20));
  if (!(x.time_min <= x.time_median && x.time_median <= x.time_max))
    t.fail("expected min <= median <= max, got " + num(x.time_min) + ", " + num(x.time_median) + ", " +
           num(x.time_max));
  for (const Reader& s : t.child("samples", "an array of times in seconds").elements("samples")) {
    const double v = time_value(s);
    // hfreduce-bench writes 6 significant digits: a sample may round past min or max by a unit of
    // the 6th digit.
    if (v < x.time_min * (1 - 1e-5) || v > x.time_max * (1 + 1e-5))
      s.fail("inconsistent: a sample of " + num(v) + " s outside the point's min " + num(x.time_min) + " and max " +
             num(x.time_max) + " s (the samples are some of the repetitions min and max are taken over)");
  }
  // Rounds (hfreduce-bench --rounds N): the median time of each sweep; the point's median is theirs.
  if (const auto rounds = t.optional_child("rounds")) {
    for (const Reader& s : rounds->elements("rounds")) {
      x.rounds.push_back(time_value(s));
    }
    if (x.rounds.size() < 2)
      rounds->fail("expected the median times of 2 or more rounds, got " + std::to_string(x.rounds.size()) +
                   " (a single sweep has no \"rounds\")");
    const double med = median_of(x.rounds);
    // hfreduce-bench writes 6 significant digits: the median of the written rounds may differ from
    // the written median by a unit of the 6th digit or so.
    if (std::fabs(med - x.time_median) > 1e-5 * x.time_median)
      t.fail_at("median", "inconsistent: " + num(x.time_median) + ", but the median of the rounds is " + num(med) +
                              " (with rounds, the point's median is the median of the rounds' medians)");
  }
  // hfreduce-bench's (max - min) / median of the rounds, and the core-seconds per call of every
  // rank's process (since 2026-12-07): informative, not read by the model yet
  t.allow({"spread", "cpu_s"});
  t.finish();
  // allreduce points of hfreduce-bench since 2026-12-01 (nccl-tests' columns): the placement is
  // part of the configuration; the other two are informative
  if (p.has("placement")) x.placement = p.choice("placement", {"in_place", "out_of_place"});
  p.allow({"busbw_Bps", "wrong_elements"});
  x.algbw_Bps = non_negative(p, "algbw_Bps");
  x.traffic_Bps = non_negative(p, "traffic_Bps");
  check_rate(p, "algbw_Bps", x.algbw_Bps, x.bytes, x.time_median);
  check_rate(p, "traffic_Bps", x.traffic_Bps, x.traffic_bytes, x.time_median);
  for (const Reader& b : p.child("bounds", "an array of bounds").elements("bounds")) {
    Bound bd;
    bd.name = b.string("name");
    bd.metric = b.choice("metric", {"algbw_Bps", "traffic_Bps"});
    bd.value_Bps = positive(b, "value_Bps");
    bd.ratio = non_negative(b, "ratio");
    const double metric = bd.metric == "algbw_Bps" ? x.algbw_Bps : x.traffic_Bps;
    if (std::fabs(bd.ratio - metric / bd.value_Bps) > 1e-3 * (metric / bd.value_Bps) + 1e-9)
      b.fail_at("ratio", "inconsistent: " + num(bd.ratio) + ", but " + bd.metric +
                             " / value_Bps = " + num(metric / bd.value_Bps));
    b.finish();
    x.bounds.push_back(bd);
  }
  p.finish();
  return x;
}

}  // namespace

MeasurementFile parse_measurement(const Document& doc) {
  const Reader r = doc.root();
  if (!r.is_object()) r.fail("expected a measurement object, got " + r.describe());
  MeasurementFile m;
  m.file = doc.file();
  Reader schema = r.child("schema", std::string("\"") + kMeasurementSchema + "\"");
  if (schema.as_string() != kMeasurementSchema)
    schema.fail("unknown measurement schema \"" + schema.as_string() + "\"; this ffsim reads \"" + kMeasurementSchema +
                "\"");
  m.date = r.string("date");
  m.command = r.string("command");
  Reader mach = r.child("machine", "the measured machine");
  m.machine.name = mach.string("name");
  m.machine.cpu_model = mach.string("cpu_model");
  m.machine.usable_cpus = static_cast<int>(mach.integer("usable_cpus", 1, 1 << 20));
  m.machine.numa_nodes = static_cast<int>(mach.integer("numa_nodes", 1, 1024));
  m.machine.isa = mach.strings("isa");
  for (const Reader& g : mach.child("gpus", "an array of GPU names").elements("GPUs"))
    m.machine.gpus.push_back(g.is_string() ? g.as_string() : g.describe());
  m.machine.memory_bytes = positive(mach, "memory_bytes");
  if (mach.has("host_streams")) {
    const Reader hs = mach.child("host_streams", "\"pinned\" or \"unpinned\"");
    m.machine.host_streams = hs.as_string();
    if (m.machine.host_streams != "pinned" && m.machine.host_streams != "unpinned")
      hs.fail("expected \"pinned\" or \"unpinned\" (how hfreduce-bench ran the host backend's copy threads), got \"" +
              m.machine.host_streams + "\"");
  }
  if (mach.has("memcpy_streaming_threshold_bytes"))
    m.machine.memcpy_streaming_threshold = positive(mach, "memcpy_streaming_threshold_bytes");
  mach.allow({"hostname", "kernel", "cpu_features", "mpi", "compiler"});
  mach.finish();
  const auto pts = r.child("points", "an array of measured points").elements("points");
  if (pts.empty()) r.fail_at("points", "expected at least one measured point");
  for (const Reader& p : pts) {
    m.points.push_back(parse_point(p));
    m.points.back().memcpy_streaming = m.machine.memcpy_streaming_threshold;
    // One hfreduce-bench run has one MPI world: its points all ran on the same number of ranks.
    if (m.points.back().ranks != m.points.front().ranks)
      p.fail_at("ranks", "inconsistent: " + std::to_string(m.points.back().ranks) +
                             " ranks, but the file's first point ran on " + std::to_string(m.points.front().ranks) +
                             " (one run of hfreduce-bench has one MPI world size)");
  }
  r.finish();
  return m;
}

MeasurementFile load_measurement(const std::string& path) { return parse_measurement(Document::load(path, false)); }

}  // namespace ffsim::config
