// A small streaming JSON writer for reports (deterministic: fixed key order, %.17g numbers).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ffsim::report {

/// Writes JSON to a stream with two-space indentation. Usage:
///   JsonWriter w(os); w.begin_object(); w.key("gpus"); w.value(16); w.end_object();
/// Misuse (a value without a key inside an object, unbalanced ends) is an internal error.
class JsonWriter {
public:
  explicit JsonWriter(std::ostream& os) : os_(os) {}
  ~JsonWriter();
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view k);
  void value(double v);
  void value(long long v);
  void value(int v) { value(static_cast<long long>(v)); }
  void value(std::size_t v) { value(static_cast<long long>(v)); }
  void value(bool v);
  void value(std::string_view v);
  void value(const char* v) { value(std::string_view(v)); }
  void null();
  /// key + value in one call.
  template <class T>
  void field(std::string_view k, const T& v) {
    key(k);
    value(v);
  }

  /// JSON string literal with escapes.
  static std::string quote(std::string_view s);
  /// Shortest round-trip representation of a finite double ("null" for NaN/Inf).
  static std::string number(double v);

private:
  void before_value();
  void newline();
  struct Level {
    bool object;
    bool empty = true;
    bool key_pending = false;
  };
  std::ostream& os_;
  std::vector<Level> stack_;
};

}  // namespace ffsim::report
