// torch.profiler (Kineto) Chrome traces read into calib's events and summed by
// calib::summarize_kineto (`ffsim calibrate --kineto TRACE.json[.gz]`).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "calib/kineto.hpp"

namespace ffsim::config {

/// The events of a trace's text (JSON, already unpacked). ConfigError (file, what was expected,
/// what was found) for a document that is not a Chrome trace, events without ts/dur, negative
/// durations, kernels of more than one device.
[[nodiscard]] calib::KinetoEvents read_kineto_events(const std::string& text, const std::string& file);
/// read_kineto_events, summed (calib::summarize_kineto).
[[nodiscard]] calib::KinetoTrace parse_kineto(const std::string& text, const std::string& file);
/// Reads `path` (gzip if it begins with gzip's magic bytes, else plain JSON) and parses it.
[[nodiscard]] calib::KinetoTrace load_kineto(const std::string& path);
/// The file's bytes, gunzipped if it is gzip (zlib); ConfigError if unreadable or corrupt.
[[nodiscard]] std::string read_maybe_gzip(const std::string& path);

}  // namespace ffsim::config
