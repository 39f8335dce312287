// torch.profiler (Kineto) Chrome traces: the file (gzipped or not) and its JSON, read into the
// events calib::summarize_kineto sums.
// SPDX-License-Identifier: Apache-2.0
#include "config/kineto_reader.hpp"

#include <zlib.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include "config/reader.hpp"
#include "core/error.hpp"

namespace ffsim::config {

std::string read_maybe_gzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", "cannot open the file: expected a torch.profiler trace (JSON, or JSON gzipped)");
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  const bool gz = in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  in.close();
  if (!gz) return Document::read_file(path);
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw ConfigError(path, "", "cannot open the gzip file: expected a torch.profiler trace (JSON gzipped)");
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int err = 0;
      const std::string msg = gzerror(f, &err);
      gzclose(f);
      throw ConfigError(
          path, "",
          "corrupt gzip data (zlib: " + msg +
              "): expected a torch.profiler trace gzipped whole; unpack it with gunzip to see where it breaks");
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > Document::kMaxInputBytes) {
      gzclose(f);
      throw ConfigError(path, "",
                        "unpacks to more than " + std::to_string(Document::kMaxInputBytes >> 20) +
                            " MiB: expected one profiler trace (a few steps); profile fewer steps");
    }
  }
  // gzread returns 0 both at the end and on a truncated stream: gzclose reports the latter.
  const int rc = gzclose(f);
  if (rc != Z_OK)
    throw ConfigError(path, "",
                      "truncated or corrupt gzip data (zlib error " + std::to_string(rc) +
                          "): expected a torch.profiler trace gzipped whole");
  return out;
}

namespace {

std::string tid_of(const Reader& e) {
  if (!e.has("tid")) return "";
  const auto t = e.child("tid");
  if (t.is_string()) return t.as_string();
  if (t.is_number()) {
    std::ostringstream s;
    s << static_cast<long long>(t.as_number());
    return s.str();
  }
  return t.describe();
}

std::optional<long long> int_arg(const std::optional<Reader>& args, std::string_view key) {
  if (!args || !args->is_object() || !args->has(key)) return std::nullopt;
  const auto v = args->child(key);
  if (!v.is_number()) return std::nullopt;
  return static_cast<long long>(v.as_number());
}

std::string dims_string(const std::vector<std::vector<long long>>& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) {
    s += i ? ", [" : "[";
    for (std::size_t j = 0; j < d[i].size(); ++j) s += (j ? ", " : "") + std::to_string(d[i][j]);
    s += "]";
  }
  return s + "]";
}

}  // namespace

calib::KinetoEvents read_kineto_events(const std::string& text, const std::string& file) {
  const auto doc = Document::parse(text, file, false);
  const auto root = doc.root();
  const std::string expected =
      "a torch.profiler (Kineto) Chrome trace: an object with \"traceEvents\", an array of events";
  if (!root.is_object()) root.fail("expected " + expected + "; found " + root.describe());
  if (!root.has("traceEvents"))
    root.fail("no \"traceEvents\" member: expected " + expected +
              " (torch.profiler's export_chrome_trace or tensorboard_trace_handler writes one)");
  const auto events = root.child("traceEvents");
  if (!events.is_array()) events.fail("expected an array of events; found " + events.describe());

  calib::KinetoEvents t;
  t.file = file;
  std::optional<long long> device;
  for (const auto& e : events.elements("event")) {
    if (!e.is_object()) e.fail("expected an event (an object with \"ph\", \"name\", \"ts\"); found " + e.describe());
    if (!e.has("ph") || e.child("ph").as_string() != "X") continue;  // only complete events have durations
    const std::string cat = e.string_or("cat", "");
    const bool is_gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
    const bool is_step = cat == "user_annotation" || cat == "cpu_op";
    if (!is_gpu && cat != "cuda_runtime" && cat != "cuda_driver" && cat != "cpu_op" && !is_step) continue;
    if (!e.has("ts"))
      e.fail("a complete event (ph \"X\") of category \"" + cat +
             "\" without \"ts\": expected its start in microseconds");
    if (!e.has("dur"))
      e.fail("a complete event (ph \"X\") of category \"" + cat +
             "\" without \"dur\": expected its duration in microseconds");
    const double ts = e.number("ts"), dur = e.number("dur");
    if (!std::isfinite(ts) || !std::isfinite(dur) || dur < 0)
      e.fail_at("dur", "expected a duration >= 0 microseconds; found " + e.child("dur").describe());
    const std::string name = e.string_or("name", "");
    const auto args = e.optional_child("args");
    if (is_gpu) {
      const long long dev = int_arg(args, "device").value_or(0);
      if (device && *device != dev)
        e.fail("GPU events of devices " + std::to_string(*device) + " and " + std::to_string(dev) +
               ": expected the trace of one GPU (torch.profiler writes one trace per rank); split it per device");
      device = dev;
      t.gpu.push_back(calib::KinetoGpuEvent{name, cat, ts, dur, int_arg(args, "correlation").value_or(-1)});
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (const auto c = int_arg(args, "correlation"))
        t.launches.push_back(calib::KinetoLaunch{*c, ts, dur, tid_of(e)});
    } else if (cat == "user_annotation" && name.rfind("ProfilerStep#", 0) == 0) {
      calib::KinetoStep s;
      s.name = name;
      s.start_us = ts;
      s.dur_us = dur;
      t.steps.push_back(s);
    } else if (cat == "cpu_op") {
      calib::KinetoCpuOp op{ts, ts + dur, name, "", "", {}};
      if (args && args->is_object() && args->has("Input Dims")) {
        const auto d = args->child("Input Dims");
        bool ok = d.is_array();
        if (ok)
          for (const auto& x : d.elements()) {
            std::vector<long long> v;
            if (!x.is_array()) {
              ok = false;
              break;
            }
            for (const auto& y : x.elements()) {
              if (!y.is_number()) {
                ok = false;
                break;
              }
              v.push_back(static_cast<long long>(y.as_number()));
            }
            op.shape.push_back(v);
          }
        if (!ok) op.shape.clear();
        op.dims = dims_string(op.shape);
        if (args->has("Input type") && args->child("Input type").is_array()) {
          for (const auto& x : args->child("Input type").elements()) {
            if (!x.is_string() || x.as_string().empty()) continue;
            op.types += (op.types.empty() ? "" : ", ") + x.as_string();
          }
        }
      }
      t.ops.emplace_back(tid_of(e), std::move(op));
    }
  }
  t.device = static_cast<int>(device.value_or(0));
  if (root.has("deviceProperties") && root.child("deviceProperties").is_array())
    for (const auto& p : root.child("deviceProperties").elements()) {
      if (!p.is_object() || !p.has("id") || !p.child("id").is_number()) continue;
      if (static_cast<int>(p.child("id").as_number()) != t.device) continue;
      if (p.has("name") && p.child("name").is_string()) t.device_name = p.child("name").as_string();
      if (p.has("numSms") && p.child("numSms").is_number()) t.sms = static_cast<int>(p.child("numSms").as_number());
    }
  return t;
}

calib::KinetoTrace parse_kineto(const std::string& text, const std::string& file) {
  return calib::summarize_kineto(read_kineto_events(text, file));
}

calib::KinetoTrace load_kineto(const std::string& path) { return parse_kineto(read_maybe_gzip(path), path); }

}  // namespace ffsim::config
