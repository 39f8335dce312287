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
