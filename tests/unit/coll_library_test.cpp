// Tests of the collective libraries' catalog entries.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "coll/collective.hpp"
#include "config/catalog.hpp"
#include "config/coll_reader.hpp"
#include "core/error.hpp"

using namespace ffsim;
namespace fs = std::filesystem;

TEST_CASE("config::load_library_params: a misspelt library name is an error in its own file") {
  const fs::path dir = fs::temp_directory_path() / ("ffsim-library-name-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(fs::path(FFSIM_MODELS_DIR) / "libraries", dir, fs::copy_options::recursive);
  std::string text;
  {
    std::ifstream in(dir / "hfreduce.json");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string from = R"("name": "hfreduce")";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), R"("name": "hfreduce_")");
  std::ofstream(dir / "hfreduce.json") << text;
  // It was "models: missing collective_library "hfreduce" in the models folder", naming no file.
  try {
    (void)config::load_library_params(config::Catalog::load(dir.string(), {"collective_library"}));
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == (dir / "hfreduce.json").string());
    CHECK(e.pointer() == "/name");
    CHECK(e.message() == "unknown collective library \"hfreduce_\"; valid: hfreduce, nccl");
  }
  fs::remove_all(dir);
}
