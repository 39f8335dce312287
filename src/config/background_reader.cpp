// JSON -> background traffic.
// SPDX-License-Identifier: Apache-2.0
#include "config/background_reader.hpp"

#include <set>

#include "core/error.hpp"

namespace ffsim::config {

namespace {

platform::BackgroundStream parse_stream(const Reader& r) {
  platform::BackgroundStream st;
  st.name = r.name("name");
  r.allow({"description"});
  const std::string cls = r.choice_or("class", sched::class_names(), "storage");
  st.cls = sched::class_from_name(cls);
  st.direction = r.choice_or("direction", {"write", "read"}, "write") == "write" ? platform::BackgroundDirection::Write
                                                                                 : platform::BackgroundDirection::Read;
  if (r.has("first_node")) st.first_node = static_cast<int>(r.fact_integer("first_node", 0, (1 << 24) - 1));
  if (r.has("targets_per_node")) st.targets_per_node = static_cast<int>(r.fact_integer("targets_per_node", 1, 1024));
  // A required key missing beside an unknown one is most often a misspelling of it: report the
  // unknown key (with its did-you-mean) rather than the missing one.
  if (!r.has("nodes") || !r.has("rate_per_node")) r.finish();
  st.nodes = static_cast<int>(r.fact_integer("nodes", 1, 1 << 24));
  st.rate_per_node = r.fact_quantity<BytesPerSecond>("rate_per_node").si();
  r.finish();
  return st;
}

}  // namespace

bool is_background(const Reader& root) {
  if (!root.is_object() || !root.has("kind")) return false;
  const Reader k = root.child("kind");
  return k.is_string() && k.as_string() == kBackground;
}

platform::BackgroundSpec parse_background(const Reader& r) {
  if (!r.is_object())
    r.fail("expected a background object {\"kind\": \"background\", \"streams\": [...]}, got " + r.describe());
  platform::BackgroundSpec b;
  b.file = r.file();
  if (r.child("kind", "\"background\"").as_string() != kBackground)
    r.child("kind").fail("expected \"background\", got " + r.child("kind").describe());
  b.name = r.name("name");
  b.description = r.string_or("description", "");
  const Reader streams = r.child("streams", "an array of streams");
  const auto items = streams.elements("streams");
  if (items.empty())
    streams.fail("expected at least one stream (a background of nothing changes nothing: drop --background instead)");
  std::set<std::string> names;
  for (const Reader& s : items) {
    platform::BackgroundStream st = parse_stream(s);
    if (!names.insert(st.name).second)
      s.fail_at("name", "stream \"" + st.name + "\" appears twice; give each stream its own name");
    b.streams.push_back(std::move(st));
  }
  r.finish();
  return b;
}

platform::BackgroundSpec load_background(const std::string& path) {
  return parse_background(Document::load(path, true).root());
}

void check_background_fits(const platform::BackgroundSpec& b, const platform::Machine& m) {
  const platform::BackgroundFit fit = platform::background_fit(m, b);
  if (fit.stream < 0) return;
  // The message points at the stream's node count (a fact: its value).
  throw ConfigError(b.file, "/streams/" + std::to_string(fit.stream) + "/nodes/value", fit.message);
}

}  // namespace ffsim::config
