// A path-tracking, typo-catching view of a JSON document: the only way ffsim reads JSON.
// Its interface names no JSON library; nlohmann/json stays inside src/config/*.cpp.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/unit_parse.hpp"
#include "core/units.hpp"

namespace ffsim::config {

namespace detail {
struct DocumentData;
struct Node;
}  // namespace detail
struct SchemaNode;

/// Where the value of a fact came from: "Sec. III-A", "NVIDIA A100 datasheet", "models/measured/x.json".
struct SourceEntry {
  std::string pointer;  ///< JSON Pointer of the fact
  std::string source;
};

class Reader;

/// A parsed JSON file. Copies share the same data.
class Document {
public:
  /// The largest input file read (a bound, not a format limit: a device or a wrong file fails fast).
  static constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;
  /// Reads and parses `path`. Syntax errors, empty files and duplicate keys throw ConfigError.
  /// `require_sources`: every leaf read through Reader's fact accessors must be written as
  /// {"value": ..., "source": "..."} (models/); otherwise a bare value is also accepted (scenarios/).
  static Document load(const std::string& path, bool require_sources);
  /// The whole text of `path`; ConfigError if it cannot be opened.
  static std::string read_file(const std::string& path);
  /// Parses `text` as if it were the file `name` (tests and generated documents).
  static Document parse(const std::string& text, const std::string& name, bool require_sources);
  /// Whether `text` is a JSON object whose first member is `key` with a string value that begins
  /// with `prefix`, decided from that member alone (the rest is not read, nor checked).
  static bool first_member_is(const std::string& text, const std::string& key, const std::string& prefix);

  [[nodiscard]] Reader root() const;
  [[nodiscard]] const std::string& file() const;
  /// Sources of the facts read so far, in the order they were read.
  [[nodiscard]] const std::vector<SourceEntry>& sources() const;
  [[nodiscard]] bool require_sources() const;
  /// Names the schema this document's reads are recorded into ("scenario", or a catalog kind) when
  /// a SchemaRecorder is on (config/schema.hpp); "" (the default) records nothing.
  void set_schema_root(std::string root);

  /// RFC 7386 merge patch: `base` overlaid by this document's object (for "extends").
  /// Keys of this document win; a null value deletes the key. The result keeps this file's name.
  [[nodiscard]] Document merged_over(const Document& base) const;
  /// The value at `r` as a document of its own (a model defined inline in a scenario): its root
  /// reader keeps r's file and pointer, so errors point into the enclosing file.
  [[nodiscard]] static Document inline_at(const Reader& r);
  /// This (inline) document merged over `base` (as merged_over), remembering which values it wrote
  /// itself: an error about an inherited value says it was inherited from `base_name`.
  [[nodiscard]] Document inherit(const Document& base, const std::string& base_name) const;
  /// A copy whose member at `pointer` (a JSON Pointer such as "/sockets/0/dram_bandwidth") is the
  /// fact {"value": <value_json>, "source": source}; `value_json` is JSON text ("\"33GB/s\"", "2").
  /// The member's parent object must exist. Throws ValueError (with the reason) otherwise.
  [[nodiscard]] Document with_fact(const std::string& pointer, const std::string& value_json,
                                   const std::string& source) const;
  /// A copy whose value at `pointer` (a JSON Pointer to a member or an array element that the
  /// document has, e.g. "/cluster/nodes", "/cluster/zones/0/nodes") is `value_json` (JSON text:
  /// "16", "\"184MiB\""), written bare: a fact {"value", "source"} there keeps its source and
  /// takes the new value. A pointer the document lacks is a ValueError that names the deepest
  /// object on the way, its keys and a did-you-mean (`ffsim sweep`).
  [[nodiscard]] Document with_value(const std::string& pointer, const std::string& value_json) const;

private:
  /// A copy of this document whose value may be edited (file, pointer base and schema kept).
  [[nodiscard]] Document edited_copy() const;
  std::shared_ptr<detail::DocumentData> data_;
  friend class Reader;
};

/// A view of one JSON value at a JSON Pointer inside a Document. Accessors by key mark the key
/// as known; finish() rejects keys that were never asked for, with a did-you-mean.
/// Every failure throws ConfigError(file, pointer, message).
class Reader {
public:
  [[nodiscard]] const std::string& file() const;
  [[nodiscard]] const std::string& pointer() const { return pointer_; }

  [[nodiscard]] bool is_object() const;
  [[nodiscard]] bool is_array() const;
  [[nodiscard]] bool is_string() const;
  [[nodiscard]] bool is_number() const;
  [[nodiscard]] bool is_null() const;
  /// "object", "array", "string \"x\"", "number 400", "boolean true", "null" (for messages).
  [[nodiscard]] std::string describe() const;

  // ---- objects
  /// True if the object has `key` (and marks `key` as known).
  [[nodiscard]] bool has(std::string_view key) const;
  /// The value at `key`; a missing key is an error that says what was expected there.
  [[nodiscard]] Reader child(std::string_view key, std::string_view expected = "") const;
  [[nodiscard]] std::optional<Reader> optional_child(std::string_view key) const;
  /// Object keys in document order (does not mark them as known).
  [[nodiscard]] std::vector<std::string> keys() const;
  /// Marks keys as known without reading them (documentation fields such as "description").
  void allow(std::initializer_list<std::string_view> keys) const;
  /// Throws for the first key that no accessor asked for: unknown key "x" (did you mean "y"?).
  void finish() const;

  // ---- arrays
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] Reader at(std::size_t i) const;
  /// The array's elements (error if this is not an array); `what` names them for messages.
  [[nodiscard]] std::vector<Reader> elements(std::string_view what = "array") const;

  // ---- this value as a scalar
  [[nodiscard]] std::string as_string() const;
  [[nodiscard]] double as_number() const;
  [[nodiscard]] std::int64_t as_integer(std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX) const;
  [[nodiscard]] bool as_bool() const;
  /// A unit string of dimension `d` (or the number 0); returns SI base units.
  [[nodiscard]] double as_quantity_si(Dimension d) const;
  template <class Q>
  [[nodiscard]] Q as() const;

  // ---- keyed scalars
  [[nodiscard]] std::string string(std::string_view key) const;
  [[nodiscard]] std::string string_or(std::string_view key, std::string def) const;
  /// A name: a string that is not empty nor only blanks, and has no control characters.
  [[nodiscard]] std::string name(std::string_view key) const;
  /// One of `choices`, else: expected one of a, b; got "x" (did you mean "y"?).
  [[nodiscard]] std::string choice(std::string_view key, const std::vector<std::string>& choices) const;
  [[nodiscard]] std::string choice_or(std::string_view key, const std::vector<std::string>& choices,
                                      std::string def) const;
  [[nodiscard]] std::int64_t integer(std::string_view key, std::int64_t min = INT64_MIN,
                                     std::int64_t max = INT64_MAX) const;
  [[nodiscard]] std::int64_t integer_or(std::string_view key, std::int64_t def, std::int64_t min = INT64_MIN,
                                        std::int64_t max = INT64_MAX) const;
  [[nodiscard]] double number(std::string_view key) const;
  [[nodiscard]] double number_or(std::string_view key, double def) const;
  /// A number in [min, max] (a fraction, a ratio).
  [[nodiscard]] double number_in(std::string_view key, double min, double max) const;
  [[nodiscard]] double number_in_or(std::string_view key, double min, double max, double def) const;
  [[nodiscard]] bool boolean(std::string_view key) const;
  [[nodiscard]] bool boolean_or(std::string_view key, bool def) const;
  [[nodiscard]] std::vector<std::string> strings(std::string_view key) const;

  /// A quantity with a unit, > 0 unless `allow_zero`. Negative values are always rejected, and a
  /// non-zero value outside `range` (default: default_range of Q's dimension) is implausible.
  template <class Q>
  [[nodiscard]] Q quantity(std::string_view key, bool allow_zero = false, const PlausibleRange* range = nullptr) const;
  template <class Q>
  [[nodiscard]] Q quantity_or(std::string_view key, Q def, bool allow_zero = false,
                              const PlausibleRange* range = nullptr) const;

  // ---- facts: {"value": X, "source": "..."} (the source is recorded in the Document),
  // or a bare X where the document does not require sources.
  /// The reader of the fact's value at `key` (its source is recorded).
  [[nodiscard]] Reader fact(std::string_view key) const;
  [[nodiscard]] std::optional<Reader> optional_fact(std::string_view key) const;
  template <class Q>
  [[nodiscard]] Q fact_quantity(std::string_view key, bool allow_zero = false, const PlausibleRange* range = nullptr) const;
  template <class Q>
  [[nodiscard]] std::optional<Q> optional_fact_quantity(std::string_view key, bool allow_zero = false,
                                                        const PlausibleRange* range = nullptr) const;
  [[nodiscard]] double fact_number(std::string_view key, double min, double max) const;
  [[nodiscard]] std::int64_t fact_integer(std::string_view key, std::int64_t min, std::int64_t max) const;
  [[nodiscard]] std::string fact_string(std::string_view key) const;
  /// The source recorded for the fact at `key` of this object, if it was read as a fact.
  [[nodiscard]] std::optional<std::string> source_of(std::string_view key) const;

  /// Records, for the schema, that this value names (or defines inline) a catalog model of `kind`.
  void record_reference(const std::string& kind) const;

  /// Reports something the input made ffsim decide that the user should know (not an error):
  /// "file:pointer: note: message" to the note sink (stderr unless set_note_sink). Each distinct
  /// note is reported once per process.
  void note(const std::string& message) const;

  /// Throws ConfigError at this value's pointer.
  [[noreturn]] void fail(const std::string& message) const;
  /// Throws ConfigError at pointer/key.
  [[noreturn]] void fail_at(std::string_view key, const std::string& message) const;

private:
  Reader(std::shared_ptr<detail::DocumentData> doc, const detail::Node* node, std::string pointer);
  [[nodiscard]] Reader make_child(std::string_view key, const detail::Node* n) const;
  [[nodiscard]] double quantity_si(std::string_view key, Dimension d, bool allow_zero, const PlausibleRange* range) const;
  [[nodiscard]] double checked_quantity_si(Dimension d, bool allow_zero, const PlausibleRange* range) const;
  void require_object() const;
  /// The schema node of this value (or of its member `key`) while recording, else nullptr.
  [[nodiscard]] SchemaNode* schema_node() const;
  [[nodiscard]] SchemaNode* schema_node(std::string_view key) const;

  std::shared_ptr<detail::DocumentData> doc_;
  const detail::Node* node_;
  std::string pointer_;
  std::shared_ptr<std::set<std::string, std::less<>>> known_;
  bool wrapper_ = false;  ///< a fact's {"value", "source"} wrapper: its own keys are not the schema's
  friend class Document;
};

/// Dimension of each unit type, for the templates above.
template <class Q>
constexpr Dimension dimension_of();
template <> constexpr Dimension dimension_of<Bytes>() { return Dimension::Size; }
template <> constexpr Dimension dimension_of<BytesPerSecond>() { return Dimension::Bandwidth; }
template <> constexpr Dimension dimension_of<Seconds>() { return Dimension::Time; }
template <> constexpr Dimension dimension_of<Watts>() { return Dimension::Power; }
template <> constexpr Dimension dimension_of<Joules>() { return Dimension::Energy; }
template <> constexpr Dimension dimension_of<FlopsPerSecond>() { return Dimension::FlopRate; }
template <> constexpr Dimension dimension_of<Flops>() { return Dimension::FlopCount; }
template <> constexpr Dimension dimension_of<Hertz>() { return Dimension::Frequency; }

template <class Q>
Q Reader::as() const {
  return Q(as_quantity_si(dimension_of<Q>()));
}
template <class Q>
Q Reader::quantity(std::string_view key, bool allow_zero, const PlausibleRange* range) const {
  return Q(quantity_si(key, dimension_of<Q>(), allow_zero, range));
}
template <class Q>
Q Reader::quantity_or(std::string_view key, Q def, bool allow_zero, const PlausibleRange* range) const {
  return has(key) ? quantity<Q>(key, allow_zero, range) : def;
}
template <class Q>
Q Reader::fact_quantity(std::string_view key, bool allow_zero, const PlausibleRange* range) const {
  return Q(fact(key).checked_quantity_si(dimension_of<Q>(), allow_zero, range));
}
template <class Q>
std::optional<Q> Reader::optional_fact_quantity(std::string_view key, bool allow_zero, const PlausibleRange* range) const {
  if (!has(key)) return std::nullopt;
  return fact_quantity<Q>(key, allow_zero, range);
}

/// Where Reader::note sends its lines (whole lines, without the newline); nullptr restores stderr.
/// Returns the previous sink (tests capture notes this way).
using NoteSink = std::function<void(const std::string&)>;
NoteSink set_note_sink(NoteSink sink);

/// Escapes a key for a JSON Pointer ("~" -> "~0", "/" -> "~1").
[[nodiscard]] std::string pointer_escape(std::string_view key);

}  // namespace ffsim::config
