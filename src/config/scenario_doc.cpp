// Loading scenario documents with "extends" chains.
// SPDX-License-Identifier: Apache-2.0
#include "config/scenario_doc.hpp"

#include <filesystem>
#include <vector>

#include "core/error.hpp"

namespace ffsim::config {

namespace fs = std::filesystem;

namespace {
Document load_chain(const std::string& path, std::vector<std::string>& stack) {
  Document doc = Document::load(path, /*require_sources=*/false);
  Reader r = doc.root();
  if (!r.is_object()) r.fail("expected a scenario object, got " + r.describe());
  if (!r.has("extends")) return doc;
  Reader ext = r.child("extends");
  const std::string given = ext.as_string();
  std::string base = given;
  if (fs::path(base).extension() != ".json") base += ".json";
  const fs::path base_path = fs::path(path).parent_path() / base;
  std::error_code ec;
  if (fs::is_directory(base_path, ec) || fs::is_directory(fs::path(path).parent_path() / given, ec))
    ext.fail("expected a scenario file to extend, got a folder: " + (fs::path(path).parent_path() / given).string());
  if (!fs::is_regular_file(base_path, ec))
    ext.fail("scenario to extend not found: " + base_path.string());
  const std::string canon = fs::weakly_canonical(base_path).string();
  for (const auto& s : stack)
    if (s == canon) ext.fail("circular \"extends\" through " + base_path.string());
  stack.push_back(canon);
  Document base_doc = load_chain(base_path.string(), stack);
  stack.pop_back();
  return doc.merged_over(base_doc);
}
}  // namespace

Document load_scenario(const std::string& path) {
  std::vector<std::string> stack{fs::weakly_canonical(path).string()};
  Document d = load_chain(path, stack);
  d.set_schema_root("scenario");
  return d;
}

}  // namespace ffsim::config
