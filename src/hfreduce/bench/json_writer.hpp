// A tiny streaming JSON writer for hfreduce-bench (the library builds without any JSON package).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ffsim::hfreduce::bench {

/// Writes objects and arrays with two-space indentation; the caller keeps keys and nesting right.
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  /// The key of the next value inside an object.
  void key(std::string_view name) {
    separate();
    quote(name);
    out_ << ": ";
    pending_key_ = true;
  }
  void value(std::string_view text) {
    separate();
    quote(text);
  }
  void value(const char* text) { value(std::string_view(text)); }
  void value(double number) {
    separate();
    if (!std::isfinite(number)) {
      out_ << "null";
      return;
    }
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.6g", number);
    out_ << buffer;
  }
  void value(long long number) {
    separate();
    out_ << number;
  }
  void value(int number) { value(static_cast<long long>(number)); }
  void value(std::size_t number) { value(static_cast<long long>(number)); }
  void value(bool flag) {
    separate();
    out_ << (flag ? "true" : "false");
  }
  void null() {
    separate();
    out_ << "null";
  }
  template <class T>
  void field(std::string_view name, const T& v) {
    key(name);
    value(v);
  }

 private:
  void open(char bracket) {
    separate();
    out_ << bracket;
    first_.push_back(true);
  }
  void close(char bracket) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ << bracket;
    if (first_.empty()) out_ << '\n';
  }
  void separate() {
    if (pending_key_) {
      pending_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_ << ',';
    first_.back() = false;
    newline();
  }
  void newline() {
    out_ << '\n';
    for (std::size_t i = 0; i < first_.size(); ++i) out_ << "  ";
  }
  void quote(std::string_view text) {
    out_ << '"';
    for (char c : text) {
      switch (c) {
        case '"':
          out_ << "\\\"";
          break;
        case '\\':
          out_ << "\\\\";
          break;
        case '\n':
          out_ << "\\n";
          break;
        case '\t':
          out_ << "\\t";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buffer[8];
            std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned>(c));
            out_ << buffer;
          } else {
            out_ << c;
          }
      }
    }
    out_ << '"';
  }

  std::ostream& out_;
  std::vector<bool> first_;
  bool pending_key_ = false;
};

}  // namespace ffsim::hfreduce::bench
