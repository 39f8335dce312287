// A small streaming JSON writer for reports.
// SPDX-License-Identifier: Apache-2.0
#include "report/json_writer.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace ffsim::report {

JsonWriter::~JsonWriter() = default;

std::string JsonWriter::quote(std::string_view s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\r': r += "\\r"; break;
      case '\t': r += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          r += buf;
        } else {
          r += static_cast<char>(c);
        }
    }
  }
  return r + "\"";
}

std::string JsonWriter::number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[40];
  for (int prec = 15; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

void JsonWriter::newline() {
  os_ << '\n';
  for (std::size_t i = 0; i < stack_.size(); ++i) os_ << "  ";
}

void JsonWriter::before_value() {
  if (stack_.empty()) return;
  Level& l = stack_.back();
  if (l.object) {
    FFSIM_ASSERT(l.key_pending, "JSON value inside an object without a key");
    l.key_pending = false;
    return;
  }
  if (!l.empty) os_ << ',';
  l.empty = false;
  newline();
}

void JsonWriter::key(std::string_view k) {
  FFSIM_ASSERT(!stack_.empty() && stack_.back().object && !stack_.back().key_pending, "JSON key outside an object");
  Level& l = stack_.back();
  if (!l.empty) os_ << ',';
  l.empty = false;
  l.key_pending = true;
  newline();
  os_ << quote(k) << ": ";
}

void JsonWriter::begin_object() {
  before_value();
  os_ << '{';
  stack_.push_back(Level{true});
}

void JsonWriter::end_object() {
  FFSIM_ASSERT(!stack_.empty() && stack_.back().object, "unbalanced JSON object");
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  os_ << '}';
  if (stack_.empty()) os_ << '\n';
}

void JsonWriter::begin_array() {
  before_value();
  os_ << '[';
  stack_.push_back(Level{false});
}

void JsonWriter::end_array() {
  FFSIM_ASSERT(!stack_.empty() && !stack_.back().object, "unbalanced JSON array");
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  os_ << ']';
  if (stack_.empty()) os_ << '\n';
}

void JsonWriter::value(double v) {
  before_value();
  os_ << number(v);
}
void JsonWriter::value(long long v) {
  before_value();
  os_ << v;
}
void JsonWriter::value(bool v) {
  before_value();
  os_ << (v ? "true" : "false");
}
void JsonWriter::value(std::string_view v) {
  before_value();
  os_ << quote(v);
}
void JsonWriter::null() {
  before_value();
  os_ << "null";
}

}  // namespace ffsim::report
