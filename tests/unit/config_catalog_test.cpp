// Tests of the catalog's loading: which files are entries.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "config/catalog.hpp"
#include "core/error.hpp"

using namespace ffsim;
namespace fs = std::filesystem;

TEST_CASE("config::Catalog: a file without \"kind\" is an error, but a measurement (\"schema\") is not an entry") {
  const fs::path dir = fs::temp_directory_path() / ("ffsim-catalog-kind-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "measured");
  std::ofstream(dir / "measured" / "m.json") << R"({"schema": "hfreduce-bench/1", "points": []})";
  std::ofstream(dir / "sw.json") << R"({"kind": "switch", "name": "sw"})";
  CHECK(config::Catalog::load(dir.string(), {"switch"}).names("switch") == std::vector<std::string>{"sw"});
  // "kin": the entry was skipped, so that what used it reported a missing model far from the typo.
  std::ofstream(dir / "sw.json") << R"({"kin": "switch", "name": "sw"})";
  try {
    (void)config::Catalog::load(dir.string(), {"gpu", "switch"});
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == (dir / "sw.json").string());
    CHECK(e.pointer() == "");
    CHECK(e.message() == "missing required key \"kind\" (expected the kind of catalog entry: one of gpu, switch)");
  }
  fs::remove_all(dir);
}

// The catalog skips hfreduce-bench's output by its first member alone (the rest is not parsed: 3.6
// MB of models/measured cost every command 80 ms). Anything else is parsed whole as before.
TEST_CASE("config::Document::first_member_is: the first member only") {
  using config::Document;
  const std::string k = "schema", pre = "ffsim.hfreduce-bench/";
  CHECK(Document::first_member_is(R"({"schema": "ffsim.hfreduce-bench/1", "points": [1, 2]})", k, pre));
  // The rest is not read: a syntax error after the first member does not change the answer.
  CHECK(Document::first_member_is(R"({"schema": "ffsim.hfreduce-bench/1", "points": [1, )", k, pre));
  CHECK(Document::first_member_is(" \n{ \"schema\" : \"ffsim.hfreduce-bench/2\" }", k, pre));
  CHECK_FALSE(Document::first_member_is(R"({"kind": "gpu", "schema": "ffsim.hfreduce-bench/1"})", k, pre));  // not first
  CHECK_FALSE(Document::first_member_is(R"({"schema": "hfreduce-bench/1"})", k, pre));         // another prefix
  CHECK_FALSE(Document::first_member_is(R"({"schema": 1})", k, pre));                          // not a string
  CHECK_FALSE(Document::first_member_is(R"({"schema": {"a": "ffsim.hfreduce-bench/1"}})", k, pre));
  CHECK_FALSE(Document::first_member_is(R"({"x": {"schema": "ffsim.hfreduce-bench/1"}})", k, pre));  // nested
  CHECK_FALSE(Document::first_member_is(R"([{"schema": "ffsim.hfreduce-bench/1"}])", k, pre));  // not an object
  CHECK_FALSE(Document::first_member_is("{}", k, pre));
  CHECK_FALSE(Document::first_member_is("", k, pre));
  CHECK_FALSE(Document::first_member_is("{\"schema\" \"ffsim.hfreduce-bench/1\"}", k, pre));  // no colon
  CHECK_FALSE(Document::first_member_is("not json", k, pre));
}

TEST_CASE("config::Catalog: a benchmark output is skipped unparsed, a broken entry is still an error") {
  const fs::path dir = fs::temp_directory_path() / ("ffsim-catalog-bench-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "measured");
  // Broken after its first member: skipped all the same (calibrate and validate check measurements).
  std::ofstream(dir / "measured" / "m.json") << R"({"schema": "ffsim.hfreduce-bench/1", "points": [)";
  std::ofstream(dir / "sw.json") << R"({"kind": "switch", "name": "sw"})";
  CHECK(config::Catalog::load(dir.string(), {"switch"}).names("switch") == std::vector<std::string>{"sw"});
  // An entry whose first member is not the benchmark's schema is parsed whole: its error is reported.
  std::ofstream(dir / "sw.json") << R"({"kind": "switch", "name": "sw", )";
  CHECK_THROWS_AS((void)config::Catalog::load(dir.string(), {"switch"}), ConfigError);
  fs::remove_all(dir);
}
