// A path-tracking, typo-catching view of a JSON document (nlohmann/json lives here only).
// SPDX-License-Identifier: Apache-2.0
#include "config/reader.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include "core/error.hpp"
#include "config/schema.hpp"
#include "core/spell.hpp"

namespace ffsim::config {

using nlohmann::json;

namespace detail {
struct DocumentData {
  std::string file;
  json value;
  bool require_sources = false;
  std::vector<SourceEntry> sources;
  /// The JSON Pointer of `value` in `file`: "" for a whole file, "/cluster/node" for a model
  /// defined inline there (Document::inline_at).
  std::string base_pointer;
  /// For an inline model that extends a catalog entry: what the inline object itself holds (the
  /// rest is inherited) and the entry it extends, for messages about inherited values.
  std::optional<json> overlay;
  std::string inherited_from;
  std::string schema_root;  ///< see Document::set_schema_root
};
}  // namespace detail

namespace {

const json& J(const detail::Node* n) { return *reinterpret_cast<const json*>(n); }
const detail::Node* N(const json& j) { return reinterpret_cast<const detail::Node*>(&j); }

std::string dq(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string fmt_num(double v) {
  std::ostringstream ss;
  ss << v;
  return ss.str();
}

std::string describe_json(const json& j) {
  switch (j.type()) {
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string " + j.dump();
    case json::value_t::boolean: return std::string("boolean ") + (j.get<bool>() ? "true" : "false");
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "number " + j.dump();
    case json::value_t::null: return "null";
    default: return "value";
  }
}

// Strips nlohmann's "[json.exception.parse_error.101] " prefix.
std::string strip_prefix(const std::string& what) {
  if (!what.empty() && what[0] == '[') {
    auto p = what.find("] ");
    if (p != std::string::npos) return what.substr(p + 2);
  }
  return what;
}

// Deepest nesting of objects and arrays accepted: ffsim's inputs need a handful of levels, and a
// pathological depth would cost quadratic time and memory in the pointers kept below.
constexpr std::size_t kMaxDepth = 64;

// Parses text, rejecting duplicate keys (which nlohmann would silently merge).
json parse_text(const std::string& text, const std::string& file) {
  bool blank = true;
  for (char c : text)
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') blank = false;
  if (blank) throw ConfigError(file, "", "empty file: expected a JSON object");

  struct Frame {
    bool array = false;
    std::size_t next_index = 0;
    std::set<std::string> keys;
    std::string cur_key;
    std::string pointer;
  };
  std::vector<Frame> frames;
  std::optional<std::pair<std::string, std::string>> duplicate;  // pointer of object, key
  auto child_pointer = [&]() -> std::string {
    if (frames.empty()) return "";
    const Frame& f = frames.back();
    return f.pointer + "/" + (f.array ? std::to_string(f.next_index) : pointer_escape(f.cur_key));
  };
  auto element_done = [&]() {
    if (!frames.empty() && frames.back().array) ++frames.back().next_index;
  };
  json::parser_callback_t cb = [&](int /*depth*/, json::parse_event_t ev, json& parsed) -> bool {
    switch (ev) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        if (frames.size() >= kMaxDepth)
          throw ConfigError(file, child_pointer(),
                            "nested too deep: expected at most " + std::to_string(kMaxDepth) +
                                " levels of objects and arrays, got more (ffsim's files need a handful)");
        Frame f;
        f.array = ev == json::parse_event_t::array_start;
        f.pointer = child_pointer();
        frames.push_back(std::move(f));
        break;
      }
      case json::parse_event_t::key: {
        Frame& f = frames.back();
        f.cur_key = parsed.get<std::string>();
        if (!f.keys.insert(f.cur_key).second && !duplicate) duplicate = std::make_pair(f.pointer, f.cur_key);
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        element_done();
        break;
      case json::parse_event_t::value: element_done(); break;
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text, cb, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const json::parse_error& e) {
    throw ConfigError(file, "", "invalid JSON: " + strip_prefix(e.what()));
  } catch (const json::out_of_range& e) {
    // A number no double holds ("1e999"): nlohmann says "number overflow parsing '1e999'".
    std::string found = strip_prefix(e.what());
    if (const auto q = found.find('\''); q != std::string::npos && found.back() == '\'')
      found = found.substr(q + 1, found.size() - q - 2);
    throw ConfigError(file, child_pointer(),
                      "number out of range: expected a finite number (at most about 1.8e308), got " + found);
  }
  if (duplicate)
    throw ConfigError(file, duplicate->first,
                      "duplicate key " + dq(duplicate->second) + " (JSON objects must not repeat a key)");
  return j;
}

}  // namespace

std::string pointer_escape(std::string_view key) {
  std::string r;
  for (char c : key) {
    if (c == '~') r += "~0";
    else if (c == '/') r += "~1";
    else r += c;
  }
  return r;
}

// ---------------------------------------------------------------- Document

std::string Document::read_file(const std::string& path) {
  // Only regular files: opening a named pipe blocks until a writer appears (an audit of
  // 2026-12-01: `check FIFO` hung), and a device never ends.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw ConfigError(path, "", std::string("not a regular file (") +
                                    (S_ISDIR(st.st_mode)    ? "a folder"
                                     : S_ISFIFO(st.st_mode) ? "a named pipe"
                                     : S_ISCHR(st.st_mode)  ? "a character device"
                                                            : "a device or socket") +
                                    "): ffsim reads only regular files; save it to a file first");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", "cannot open file (check the path)");
  // Read in blocks up to a bound: a device such as /dev/zero, or a file far larger than any input,
  // is refused instead of filling the memory (an audit of 2026-12-01: `check /dev/zero` grew to 24 GB).
  std::string text;
  std::array<char, 1 << 16> buf{};
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    text.append(buf.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes)
      throw ConfigError(path, "", "larger than " + std::to_string(kMaxInputBytes >> 20) +
                                      " MiB, far more than any scenario, model or measurement file (the largest committed "
                                      "measurement is under 1 MB): is it the right file?");
  }
  return text;
}

Document Document::load(const std::string& path, bool require_sources) {
  return parse(read_file(path), path, require_sources);
}

Document Document::parse(const std::string& text, const std::string& name, bool require_sources) {
  Document d;
  d.data_ = std::make_shared<detail::DocumentData>();
  d.data_->file = name;
  d.data_->value = parse_text(text, name);
  d.data_->require_sources = require_sources;
  return d;
}

bool Document::first_member_is(const std::string& text, const std::string& key, const std::string& prefix) {
  // A SAX reader that stops at the first member's value: `found` says whether it matched.
  struct FirstMember {
    const std::string& want_key;
    const std::string& want_prefix;
    int depth = 0;
    int seen = 0;  // 1: the first key was `key`, its value comes next
    bool found = false;
    bool stop() { return false; }
    bool value() { return stop(); }  // any value but a string: no match
    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(json::number_integer_t) { return value(); }
    bool number_unsigned(json::number_unsigned_t) { return value(); }
    bool number_float(json::number_float_t, const json::string_t&) { return value(); }
    bool binary(json::binary_t&) { return value(); }
    bool string(json::string_t& v) {
      found = depth == 1 && seen == 1 && v.rfind(want_prefix, 0) == 0;
      return stop();
    }
    bool start_object(std::size_t) { return ++depth == 1; }
    bool key(json::string_t& k) {
      seen = k == want_key ? 1 : 2;
      return seen == 1;
    }
    bool end_object() { return stop(); }  // an empty object
    bool start_array(std::size_t) { return stop(); }
    bool end_array() { return stop(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
  };
  FirstMember h{key, prefix};
  (void)json::sax_parse(text, &h, json::input_format_t::json, /*strict=*/false);
  return h.found;
}

Reader Document::root() const { return Reader(data_, N(data_->value), data_->base_pointer); }
const std::string& Document::file() const { return data_->file; }
const std::vector<SourceEntry>& Document::sources() const { return data_->sources; }
bool Document::require_sources() const { return data_->require_sources; }
void Document::set_schema_root(std::string root) { data_->schema_root = std::move(root); }

Document Document::merged_over(const Document& base) const {
  Document d;
  d.data_ = std::make_shared<detail::DocumentData>();
  d.data_->file = data_->file;
  d.data_->require_sources = data_->require_sources;
  d.data_->base_pointer = data_->base_pointer;
  d.data_->schema_root = data_->schema_root;
  d.data_->value = base.data_->value;
  d.data_->value.merge_patch(data_->value);
  return d;
}

Document Document::inline_at(const Reader& r) {
  Document d;
  d.data_ = std::make_shared<detail::DocumentData>();
  d.data_->file = r.doc_->file;
  d.data_->require_sources = r.doc_->require_sources;
  d.data_->base_pointer = r.pointer_;
  d.data_->value = J(r.node_);
  return d;
}

Document Document::inherit(const Document& base, const std::string& base_name) const {
  Document d = merged_over(base);
  d.data_->overlay = data_->value;
  d.data_->inherited_from = base_name + " (" + base.file() + ")";
  return d;
}

namespace {

// A value given on the command line or by a calibration (JSON text), parsed.
json parse_value_json(const std::string& value_json) {
  try {
    return json::parse(value_json);
  } catch (const json::parse_error& e) {
    throw ValueError("invalid JSON value " + value_json + ": " + strip_prefix(e.what()));
  }
}

}  // namespace

Document Document::edited_copy() const {
  Document d;
  d.data_ = std::make_shared<detail::DocumentData>();
  d.data_->file = data_->file;
  d.data_->require_sources = data_->require_sources;
  d.data_->base_pointer = data_->base_pointer;
  d.data_->schema_root = data_->schema_root;
  d.data_->value = data_->value;
  return d;
}

Document Document::with_value(const std::string& pointer, const std::string& value_json) const {
  if (pointer.empty() || pointer[0] != '/')
    throw ValueError("expected a JSON Pointer to a member (e.g. \"/cluster/nodes\"), got \"" + pointer + "\"");
  const json value = parse_value_json(value_json);
  Document d = edited_copy();
  // Walk the reference tokens, so that a missing one is named with what is there instead.
  json* at = &d.data_->value;
  std::string walked;
  std::size_t start = 1;
  while (true) {
    const std::size_t end = pointer.find('/', start);
    const std::string raw = pointer.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string key;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        key += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        key += raw[i];
      }
    }
    const std::string where = walked.empty() ? std::string("the document's root") : walked;
    if (at->is_object()) {
      if (!at->contains(key)) {
        std::vector<std::string> keys;
        for (auto it = at->begin(); it != at->end(); ++it) keys.push_back(it.key());
        throw ValueError("no member \"" + key + "\" at " + where + " (its keys: " + join(keys) + ")" +
                         did_you_mean(key, keys));
      }
      at = &(*at)[key];
    } else if (at->is_array()) {
      std::size_t used = 0;
      unsigned long long i = 0;
      try {
        i = std::stoull(key, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (key.empty() || used != key.size() || (key.size() > 1 && key[0] == '0') || i >= at->size())
        throw ValueError("no element \"" + key + "\" in the array at " + where + " (indices 0 to " +
                         std::to_string(at->size()) + " - 1)");
      at = &(*at)[static_cast<std::size_t>(i)];
    } else {
      throw ValueError("the value at " + where + " is a " + std::string(at->type_name()) + ", with no member \"" + key +
                       "\"");
    }
    walked += "/" + raw;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (at->is_object() && at->contains("value") && at->contains("source") && at->size() == 2)
    (*at)["value"] = value;
  else
    *at = value;
  return d;
}

Document Document::with_fact(const std::string& pointer, const std::string& value_json, const std::string& source) const {
  const auto slash = pointer.rfind('/');
  if (pointer.empty() || pointer[0] != '/' || slash == std::string::npos)
    throw ValueError("expected a JSON Pointer to a member (e.g. \"/sockets/0/dram_bandwidth\"), got \"" + pointer + "\"");
  const json value = parse_value_json(value_json);
  Document d = edited_copy();
  json::json_pointer parent_ptr;
  try {
    parent_ptr = json::json_pointer(pointer.substr(0, slash));
  } catch (const json::exception& e) {
    throw ValueError("invalid JSON Pointer \"" + pointer + "\": " + strip_prefix(e.what()));
  }
  if (!d.data_->value.contains(parent_ptr) || !d.data_->value.at(parent_ptr).is_object())
    throw ValueError("no object at " + (slash == 0 ? std::string("the document's root") : "\"" + pointer.substr(0, slash) + "\"") +
                     " in " + data_->file);
  // Unescape the last reference token ("~1" -> "/", "~0" -> "~").
  std::string key;
  const std::string token = pointer.substr(slash + 1);
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      key += token[i + 1] == '0' ? '~' : '/';
      ++i;
    } else {
      key += token[i];
    }
  }
  d.data_->value.at(parent_ptr)[key] = json{{"value", value}, {"source", source}};
  return d;
}

// ---------------------------------------------------------------- Reader

Reader::Reader(std::shared_ptr<detail::DocumentData> doc, const detail::Node* node, std::string pointer)
    : doc_(std::move(doc)),
      node_(node),
      pointer_(std::move(pointer)),
      known_(std::make_shared<std::set<std::string, std::less<>>>()) {}

const std::string& Reader::file() const { return doc_->file; }
bool Reader::is_object() const { return J(node_).is_object(); }
bool Reader::is_array() const { return J(node_).is_array(); }
bool Reader::is_string() const { return J(node_).is_string(); }
bool Reader::is_number() const { return J(node_).is_number(); }
bool Reader::is_null() const { return J(node_).is_null(); }
std::string Reader::describe() const { return describe_json(J(node_)); }

namespace {
// " (a value inherited from cx6_hdr (models/nics/cx6_hdr.json))" when `pointer` names a value an
// inline model inherited rather than wrote; "" otherwise.
std::string inherited_note(const detail::DocumentData& d, const std::string& pointer) {
  if (!d.overlay || pointer.size() <= d.base_pointer.size()) return "";
  const std::string rel = pointer.substr(d.base_pointer.size());
  const json* cur = &*d.overlay;
  std::size_t pos = 1;
  while (pos <= rel.size()) {
    const std::size_t next = std::min(rel.find('/', pos), rel.size());
    std::string token;
    for (std::size_t i = pos; i < next; ++i) {  // unescape "~1" -> "/", "~0" -> "~"
      if (rel[i] == '~' && i + 1 < next && (rel[i + 1] == '0' || rel[i + 1] == '1')) {
        token += rel[++i] == '0' ? '~' : '/';
      } else {
        token += rel[i];
      }
    }
    if (cur->is_object() && cur->contains(token)) {
      cur = &cur->at(token);
    } else if (cur->is_array() && !token.empty() && token.find_first_not_of("0123456789") == std::string::npos &&
               std::stoull(token) < cur->size()) {
      cur = &cur->at(std::stoull(token));
    } else {
      return " (a value inherited from " + d.inherited_from + ")";
    }
    pos = next + 1;
  }
  return "";
}
}  // namespace

namespace {
std::mutex g_note_mutex;
NoteSink g_note_sink;
std::set<std::string> g_notes_seen;
}  // namespace

NoteSink set_note_sink(NoteSink sink) {
  std::lock_guard<std::mutex> lock(g_note_mutex);
  NoteSink old = std::move(g_note_sink);
  g_note_sink = std::move(sink);
  g_notes_seen.clear();
  return old;
}

void Reader::note(const std::string& message) const {
  const std::string line = doc_->file + (pointer_.empty() ? "" : ":" + pointer_) + ": note: " + message;
  std::lock_guard<std::mutex> lock(g_note_mutex);
  if (!g_notes_seen.insert(line).second) return;
  if (g_note_sink) g_note_sink(line);
  else std::cerr << line << '\n';
}

void Reader::fail(const std::string& message) const {
  throw ConfigError(doc_->file, pointer_, message + inherited_note(*doc_, pointer_));
}
void Reader::fail_at(std::string_view key, const std::string& message) const {
  const std::string p = pointer_ + "/" + pointer_escape(key);
  throw ConfigError(doc_->file, p, message + inherited_note(*doc_, p));
}

void Reader::require_object() const {
  if (!is_object()) fail("expected an object, got " + describe());
  if (SchemaNode* n = schema_node()) n->types.insert("object");
}

SchemaNode* Reader::schema_node() const {
  SchemaRecorder* rec = schema_recorder();
  if (!rec || wrapper_ || doc_->schema_root.empty()) return nullptr;
  return &rec->at(doc_->schema_root, pointer_.substr(std::min(doc_->base_pointer.size(), pointer_.size())));
}

SchemaNode* Reader::schema_node(std::string_view key) const {
  SchemaRecorder* rec = schema_recorder();
  if (!rec || wrapper_ || doc_->schema_root.empty()) return nullptr;
  return &rec->at(doc_->schema_root,
                  pointer_.substr(std::min(doc_->base_pointer.size(), pointer_.size())) + "/" + pointer_escape(key));
}

void Reader::record_reference(const std::string& kind) const {
  if (SchemaNode* n = schema_node()) n->model_kind = kind;
}

bool Reader::has(std::string_view key) const {
  require_object();
  (void)schema_node(key);
  known_->insert(std::string(key));
  return J(node_).contains(key);
}

Reader Reader::make_child(std::string_view key, const detail::Node* n) const {
  return Reader(doc_, n, pointer_ + "/" + pointer_escape(key));
}

Reader Reader::child(std::string_view key, std::string_view expected) const {
  if (SchemaNode* n = expected.empty() || expected.rfind("a fact", 0) == 0 ? nullptr : schema_node(key);
      n && n->description.empty())
    n->description = std::string(expected);
  if (!has(key)) {
    std::string msg = "missing required key " + dq(key);
    if (!expected.empty()) msg += " (expected " + std::string(expected) + ")";
    fail(msg);
  }
  return make_child(key, N(J(node_).find(key).value()));
}

std::optional<Reader> Reader::optional_child(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return make_child(key, N(J(node_).find(key).value()));
}

std::vector<std::string> Reader::keys() const {
  require_object();
  if (SchemaNode* n = schema_node()) n->map = true;
  std::vector<std::string> r;
  for (auto it = J(node_).begin(); it != J(node_).end(); ++it) r.push_back(it.key());
  return r;
}

void Reader::allow(std::initializer_list<std::string_view> keys) const {
  require_object();
  for (auto k : keys) {
    known_->insert(std::string(k));
    (void)schema_node(k);
  }
}

void Reader::finish() const {
  require_object();
  if (SchemaNode* n = schema_node()) n->closed = true;
  // nlohmann's default object is a std::map: keys come sorted, so the first unknown key is deterministic.
  for (auto it = J(node_).begin(); it != J(node_).end(); ++it) {
    if (known_->count(it.key())) continue;
    std::vector<std::string> valid(known_->begin(), known_->end());
    std::string msg = "unknown key " + dq(it.key()) + did_you_mean(it.key(), valid);
    if (!valid.empty()) msg += "; valid keys: " + join(valid);
    fail(msg);
  }
}

std::size_t Reader::size() const {
  if (!is_array()) fail("expected an array, got " + describe());
  if (SchemaNode* n = schema_node()) n->types.insert("array");
  return J(node_).size();
}

Reader Reader::at(std::size_t i) const {
  if (i >= size()) fail("index " + std::to_string(i) + " out of range (array has " + std::to_string(size()) + ")");
  return Reader(doc_, N(J(node_)[i]), pointer_ + "/" + std::to_string(i));
}

std::vector<Reader> Reader::elements(std::string_view what) const {
  if (!is_array()) fail("expected an array of " + std::string(what) + ", got " + describe());
  if (SchemaNode* n = schema_node()) n->types.insert("array");
  std::vector<Reader> r;
  for (std::size_t i = 0; i < J(node_).size(); ++i)
    r.push_back(Reader(doc_, N(J(node_)[i]), pointer_ + "/" + std::to_string(i)));
  return r;
}

std::string Reader::as_string() const {
  if (SchemaNode* n = schema_node()) n->types.insert("string");
  if (!is_string()) fail("expected a string, got " + describe());
  return J(node_).get<std::string>();
}

double Reader::as_number() const {
  if (SchemaNode* n = schema_node()) n->types.insert("number");
  if (!is_number()) fail("expected a number, got " + describe());
  const double v = J(node_).get<double>();
  if (!std::isfinite(v)) fail("expected a finite number, got " + describe());
  return v;
}

std::int64_t Reader::as_integer(std::int64_t min, std::int64_t max) const {
  const json& j = J(node_);
  if (SchemaNode* n = schema_node()) {
    n->types.insert("integer");
    if (min != INT64_MIN || max != INT64_MAX) n->int_range = std::make_pair(static_cast<long long>(min), static_cast<long long>(max));
  }
  auto range = [&]() {
    if (min == INT64_MIN && max == INT64_MAX) return std::string("an integer");
    if (min == 0 && max == INT64_MAX) return std::string("a non-negative integer");
    if (min == 1 && max == INT64_MAX) return std::string("a positive integer");
    if (max == INT64_MAX) return "an integer >= " + std::to_string(min);
    if (min == INT64_MIN) return "an integer <= " + std::to_string(max);
    return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  };
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(max) || (min > 0 && u < static_cast<std::uint64_t>(min))) fail("expected " + range() + ", got " + describe());
    return static_cast<std::int64_t>(u);
  }
  if (!j.is_number_integer()) fail("expected " + range() + ", got " + describe());
  const auto v = j.get<std::int64_t>();
  if (v < min || v > max) fail("expected " + range() + ", got " + describe());
  return v;
}

bool Reader::as_bool() const {
  if (SchemaNode* n = schema_node()) n->types.insert("boolean");
  if (!J(node_).is_boolean()) fail("expected true or false, got " + describe());
  return J(node_).get<bool>();
}

double Reader::as_quantity_si(Dimension d) const {
  const json& j = J(node_);
  if (SchemaNode* n = schema_node()) n->dimension = d;
  if (j.is_number() && j.get<double>() == 0.0) return 0.0;
  if (!j.is_string())
    fail("expected " + a_dimension(d) + " with unit (e.g. " + dq(dimension_example(d)) +
         "), got " + describe());
  try {
    return parse_quantity_si(j.get<std::string>(), d);
  } catch (const ValueError& e) {
    fail(e.what());
  }
}

double Reader::checked_quantity_si(Dimension d, bool allow_zero, const PlausibleRange* range) const {
  const double v = as_quantity_si(d);
  if (v < 0 || (!allow_zero && v == 0)) {
    fail("expected a " + std::string(allow_zero ? "non-negative " : "positive ") + std::string(dimension_name(d)) +
         ", got " + describe());
  }
  const PlausibleRange& p = range ? *range : default_range(d);
  if (SchemaNode* n = schema_node()) n->range = &p;
  if (v != 0 && (v < p.min_si || v > p.max_si))
    fail("implausible " + std::string(p.kind) + " " + J(node_).dump() + " (" + fmt_num(v) + " " + std::string(si_unit(d)) +
         "): expected " + std::string(p.min) + " to " + std::string(p.max) + "; " + std::string(p.why) +
         ". Check the number and its unit");
  return v;
}

double Reader::quantity_si(std::string_view key, Dimension d, bool allow_zero, const PlausibleRange* range) const {
  return child(key, a_dimension(d) + " such as " + dq(dimension_example(d)))
      .checked_quantity_si(d, allow_zero, range);
}

std::string Reader::string(std::string_view key) const { return child(key, "a string").as_string(); }
std::string Reader::string_or(std::string_view key, std::string def) const {
  return has(key) ? string(key) : def;
}

std::string Reader::name(std::string_view key) const {
  const Reader c = child(key, "a name");
  if (SchemaNode* n = c.schema_node()) n->name = true;
  const std::string v = c.as_string();
  if (v.find_first_not_of(" \t") == std::string::npos)
    c.fail("expected a non-empty name, got " + c.describe() + " (names label results, tables and errors)");
  for (char ch : v)
    if (static_cast<unsigned char>(ch) < 0x20) c.fail("expected a name without control characters, got " + c.describe());
  return v;
}

std::string Reader::choice(std::string_view key, const std::vector<std::string>& choices) const {
  Reader c = child(key, "one of " + join(choices));
  if (SchemaNode* n = c.schema_node()) n->choices = choices;
  const std::string v = c.as_string();
  for (const auto& x : choices)
    if (x == v) return v;
  c.fail("expected one of " + join(choices) + "; got " + dq(v) + did_you_mean(v, choices));
}

std::string Reader::choice_or(std::string_view key, const std::vector<std::string>& choices, std::string def) const {
  return has(key) ? choice(key, choices) : def;
}

std::int64_t Reader::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  return child(key, "an integer").as_integer(min, max);
}
std::int64_t Reader::integer_or(std::string_view key, std::int64_t def, std::int64_t min, std::int64_t max) const {
  return has(key) ? integer(key, min, max) : def;
}
double Reader::number(std::string_view key) const { return child(key, "a number").as_number(); }
double Reader::number_or(std::string_view key, double def) const { return has(key) ? number(key) : def; }

double Reader::number_in(std::string_view key, double min, double max) const {
  Reader c = child(key, "a number");
  if (SchemaNode* n = c.schema_node()) n->number_range = std::make_pair(min, max);
  const double v = c.as_number();
  if (v < min || v > max) c.fail("expected a number in [" + fmt_num(min) + ", " + fmt_num(max) + "], got " + c.describe());
  return v;
}
double Reader::number_in_or(std::string_view key, double min, double max, double def) const {
  return has(key) ? number_in(key, min, max) : def;
}

bool Reader::boolean(std::string_view key) const { return child(key, "true or false").as_bool(); }
bool Reader::boolean_or(std::string_view key, bool def) const { return has(key) ? boolean(key) : def; }

std::vector<std::string> Reader::strings(std::string_view key) const {
  std::vector<std::string> r;
  for (const Reader& e : child(key, "an array of strings").elements("strings")) r.push_back(e.as_string());
  return r;
}

// ---- facts

Reader Reader::fact(std::string_view key) const {
  Reader c = child(key, doc_->require_sources ? "a fact {\"value\": ..., \"source\": \"...\"}" : "");
  if (SchemaNode* n = c.schema_node()) n->fact = true;
  c.wrapper_ = true;  // "source" and "note" are the wrapper's, not the schema's keys
  const json& j = J(c.node_);
  if (j.is_object() && j.contains("value")) {
    std::string source;
    if (j.contains("source")) {
      source = c.string("source");
      if (source.empty()) c.fail_at("source", "expected a non-empty source (paper section, datasheet, measurement file)");
    } else if (doc_->require_sources) {
      c.fail("missing required key \"source\" (every fact in models/ names where it comes from)");
    }
    c.allow({"value", "note"});
    c.finish();
    if (!source.empty()) {
      // A catalog entry's document is read by every scenario parsed with it, and `ffsim sweep
      // --threads` parses scenarios side by side: the one mutation of a shared document is locked.
      static std::mutex sources_mutex;
      const std::lock_guard<std::mutex> lock(sources_mutex);
      doc_->sources.push_back(SourceEntry{c.pointer_, source});
    }
    return c.make_child("value", N(j.find("value").value()));
  }
  if (doc_->require_sources)
    c.fail("expected a fact {\"value\": ..., \"source\": \"...\"}, got " + c.describe());
  c.wrapper_ = false;
  return c;
}

std::optional<Reader> Reader::optional_fact(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return fact(key);
}

double Reader::fact_number(std::string_view key, double min, double max) const {
  Reader v = fact(key);
  if (SchemaNode* n = v.schema_node()) n->number_range = std::make_pair(min, max);
  const double x = v.as_number();
  if (x < min || x > max) v.fail("expected a number in [" + fmt_num(min) + ", " + fmt_num(max) + "], got " + v.describe());
  return x;
}

std::int64_t Reader::fact_integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  return fact(key).as_integer(min, max);
}

std::string Reader::fact_string(std::string_view key) const { return fact(key).as_string(); }

std::optional<std::string> Reader::source_of(std::string_view key) const {
  const std::string p = pointer_ + "/" + pointer_escape(key);
  for (const auto& s : doc_->sources)
    if (s.pointer == p) return s.source;
  return std::nullopt;
}

}  // namespace ffsim::config
