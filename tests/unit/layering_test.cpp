// Enforces the architecture of design.md section 2: a layer includes only the layers below it,
// and each third-party library appears only in its home folder.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Lowest first. src/hfreduce stands apart: it includes no other layer and none includes it.
// config (the only JSON reader) sits above the domain layers whose params it fills in: they know no
// JSON. calib (the fits) sits below it too: config reads measurements into calib's plain structs, and
// the fits write typed overrides that config applies to the catalog.
const std::vector<std::string> kLayers{"core", "hw",  "topo",  "sched",  "platform", "eval",   "coll", "train",
                                       "sim",  "ops", "calib", "config", "plan",     "report", "app",  "cli"};

// JSON at the edge: these layers take plain parameter structs and include nothing of config/ (the
// only JSON reader), whatever the order above says.
const std::vector<std::string> kNoConfig{"hw", "topo", "platform", "coll", "train", "ops", "calib"};

// Includes the order above would allow but the architecture forbids (the project's shared/layers.json's
// "never" arrows; docs/design.md): {from, to, why}.
struct Never {
  std::string from, to, why;
};
const std::vector<Never> kNever{{"cli", "coll", "cli calls services (src/app), not algorithms"},
                                {"cli", "hw", "cli calls services (src/app)"},
                                {"cli", "sim", "engines are registered by the app (src/app/engines.cpp)"},
                                {"report", "train", "the trace model is report's"}};

// Engines are constructed only where they live and where they are registered: a concrete engine's
// name anywhere else is code that picks an engine behind --engine's back.
const std::vector<std::string> kEngineClasses{"FluidEngine", "SimGridEngine"};
const std::vector<std::string> kEngineHomes{"eval", "sim", "app"};

struct ThirdParty {
  std::string include_prefix;  // as written in #include <...>
  std::string home;            // the folder under src/ that may include it
  std::string home2 = "";      // and a second one, if any (SimGrid: the engine, and the operations simulation)
  std::string also = "";       // and one file outside them that may (e.g. "cli/sweep_mpi.cpp")
};
const std::vector<ThirdParty> kThirdParty{{"nlohmann/", "config"},
                                          {"simgrid/", "sim", "ops"},
                                          {"xbt/", "sim", "ops"},
                                          {"CLI/", "cli"},
                                          {"Eigen/", "calib"},
                                          {"eigen3/", "calib"},
                                          {"mpi.h", "hfreduce", "", "cli/sweep_mpi.cpp"},
                                          {"cuda_runtime", "hfreduce"},
                                          {"zlib.h", "config"}};
// cli/sweep_mpi.cpp: `ffsim sweep` under mpirun opens libmpi at run time (dlopen) and takes only its
// types and handles from <mpi.h>; no other cli file names MPI.

struct SourceFile {
  std::string path;     // relative to src/, e.g. "hw/parse.cpp"
  std::string content;
};

// The layer of a path under src/ or of an include; hfreduce's public headers are included as
// "ffsim/hfreduce/...".
std::string layer_of(const std::string& rel) {
  if (rel.rfind("ffsim/hfreduce/", 0) == 0) return "hfreduce";
  return rel.substr(0, rel.find('/'));
}

int rank_of(const std::string& layer) {
  auto it = std::find(kLayers.begin(), kLayers.end(), layer);
  return it == kLayers.end() ? -1 : static_cast<int>(it - kLayers.begin());
}

// `#include "x"` -> {'"', x}; `#include <x>` -> {'<', x}; anything else -> {0, ""}.
struct Include {
  char kind = 0;
  std::string path;
};
Include parse_include(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return {};
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return {};
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || (line[i] != '"' && line[i] != '<')) return {};
  const char close = line[i] == '"' ? '"' : '>';
  const std::size_t end = line.find(close, i + 1);
  if (end == std::string::npos) return {};
  return {line[i], line.substr(i + 1, end - i - 1)};
}

// Every rule broken by `files`, one line each ("hw/x.cpp includes sim/y.hpp (sim is above hw)").
std::vector<std::string> violations(const std::vector<SourceFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) {
    const std::string layer = layer_of(f.path);
    std::istringstream in(f.content);
    std::string line;
    while (std::getline(in, line)) {
      const Include incl = parse_include(line);
      if (incl.kind == '"') {
        const std::string& inc = incl.path;
        const std::string target = layer_of(inc);
        if (inc.find('/') == std::string::npos) continue;  // same-folder include
        if (layer == "hfreduce" || target == "hfreduce") {
          if (layer != target) out.push_back(f.path + " includes " + inc + " (hfreduce stands apart from the other layers)");
          continue;
        }
        if (target == "config" && std::find(kNoConfig.begin(), kNoConfig.end(), layer) != kNoConfig.end()) {
          out.push_back(f.path + " includes " + inc + " (" + layer + " takes parameter structs: only config/ reads JSON)");
          continue;
        }
        const int a = rank_of(layer), b = rank_of(target);
        if (a < 0) out.push_back(f.path + " is in an unknown layer \"" + layer + "\"");
        else if (b < 0) out.push_back(f.path + " includes " + inc + " from an unknown layer \"" + target + "\"");
        else if (b > a) out.push_back(f.path + " includes " + inc + " (" + target + " is above " + layer + ")");
        else
          for (const auto& n : kNever)
            if (n.from == layer && n.to == target) out.push_back(f.path + " includes " + inc + " (never " + n.from + " -> " + n.to + ": " + n.why + ")");
      } else if (incl.kind == 0 &&
                 std::find(kEngineHomes.begin(), kEngineHomes.end(), layer) == kEngineHomes.end()) {
        const std::string code = line.substr(0, line.find("//"));
        for (const auto& e : kEngineClasses)
          if (code.find(e) != std::string::npos)
            out.push_back(f.path + " names " + e + " (engines are constructed only in src/eval, src/sim and src/app)");
      }
      if (incl.kind == '<') {
        const std::string& inc = incl.path;
        for (const auto& tp : kThirdParty)
          if (inc.rfind(tp.include_prefix, 0) == 0 && layer != tp.home && (tp.home2.empty() || layer != tp.home2) &&
              f.path != tp.also)
            out.push_back(f.path + " includes <" + inc + "> outside its home src/" + tp.home +
                          (tp.home2.empty() ? "" : " (or src/" + tp.home2 + ")"));
      }
    }
  }
  return out;
}

std::vector<SourceFile> read_tree(const fs::path& src) {
  std::vector<SourceFile> files;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const auto ext = e.path().extension().string();
    if (ext != ".hpp" && ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh" && ext != ".in") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    files.push_back({fs::relative(e.path(), src).generic_string(), ss.str()});
  }
  return files;
}

}  // namespace

TEST_CASE("layering: the checker catches each kind of violation") {
  // A synthetic tree with one violation of each rule, and one clean file, so this test can fail.
  const std::vector<SourceFile> bad{
      {"topo/a.cpp", "#include \"sim/platform.hpp\"\n"},    // a lower layer includes a higher one
      {"hw/b.cpp", "#include <nlohmann/json.hpp>\n"},       // nlohmann outside config
      {"plan/c.cpp", "#include <simgrid/s4u.hpp>\n"},       // SimGrid outside sim
      {"report/d.cpp", "#include <CLI/CLI.hpp>\n"},         // CLI11 outside cli
      {"sim/e.cpp", "#include <Eigen/Dense>\n"},            // Eigen outside calib
      {"hfreduce/f.cpp", "#include \"core/units.hpp\"\n"},  // hfreduce depends on nothing else
      {"cli/g.cpp", "#include \"hfreduce/api.hpp\"\n"},     // and nothing depends on it
      {"train/h.cpp", "#include \"config/reader.hpp\"\n"},  // a domain layer reads JSON
      {"plan/z.cpp", "#include <zlib.h>\n"},                // zlib outside config (the trace reader)
      {"cli/ok.cpp", "#include \"core/units.hpp\"\n#include <CLI/CLI.hpp>\n#include <vector>\n"},
      // SimGrid's second home: the operations simulation (above sim, below config).
      {"ops/ok.cpp", "#include <simgrid/s4u.hpp>\n#include \"sim/simgrid_engine.hpp\"\n"},
  };
  const auto v = violations(bad);
  CHECK(v.size() == 9);
  CHECK(std::count_if(v.begin(), v.end(), [](const std::string& s) { return s.rfind("cli/ok.cpp", 0) == 0; }) == 0);
  CHECK(std::count_if(v.begin(), v.end(), [](const std::string& s) { return s.rfind("ops/ok.cpp", 0) == 0; }) == 0);
  CHECK(v[2] == "plan/c.cpp includes <simgrid/s4u.hpp> outside its home src/sim (or src/ops)");
  CHECK(v[0] == "topo/a.cpp includes sim/platform.hpp (sim is above topo)");
  CHECK(v[1] == "hw/b.cpp includes <nlohmann/json.hpp> outside its home src/config");
  CHECK(v[7] == "train/h.cpp includes config/reader.hpp (train takes parameter structs: only config/ reads JSON)");
  CHECK(v[8] == "plan/z.cpp includes <zlib.h> outside its home src/config");
}

TEST_CASE("layering: the checker catches a forbidden arrow and an engine constructed outside its homes") {
  const std::vector<SourceFile> bad{
      {"cli/a.cpp", "#include \"coll/collective.hpp\"\n"},     // cli calls services, not algorithms
      {"cli/b.cpp", "#include \"hw/specs.hpp\"\n"},            // nor specs
      {"cli/c.cpp", "#include \"sim/simgrid_engine.hpp\"\n"},  // nor registers engines
      {"report/d.cpp", "#include \"train/run.hpp\"\n"},        // report knows no workload
      {"train/e.cpp", "  eval::FluidEngine fluid;\n"},         // an engine behind --engine's back
      {"plan/f.cpp", "  auto e = std::make_unique<sim::SimGridEngine>();\n"},
      {"app/ok.cpp", "#include \"sim/simgrid_engine.hpp\"\n  return std::make_unique<eval::FluidEngine>();\n"},
      {"train/ok.cpp", "// the fluid engine (FluidEngine) of the app\n#include \"eval/engine.hpp\"\n"},
      {"ops/g.cpp", "#include \"config/reader.hpp\"\n"},  // ops takes plain params: config is above it
      // The fits know no JSON (never calib -> config): config reads their inputs and applies their overrides.
      {"calib/h.cpp", "#include \"calib/measurement.hpp\"\n#include \"config/catalog.hpp\"\n"},
      // and config may read into calib's structs (calib is below it)
      {"config/ok.cpp", "#include \"calib/kineto.hpp\"\n#include \"config/reader.hpp\"\n"},
  };
  const auto v = violations(bad);
  CHECK(v.size() == 8);
  CHECK(v[6] == "ops/g.cpp includes config/reader.hpp (ops takes parameter structs: only config/ reads JSON)");
  CHECK(v[7] == "calib/h.cpp includes config/catalog.hpp (calib takes parameter structs: only config/ reads JSON)");
  CHECK(std::count_if(v.begin(), v.end(), [](const std::string& s) { return s.find("ok.cpp") != std::string::npos; }) == 0);
  CHECK(v[0] == "cli/a.cpp includes coll/collective.hpp (never cli -> coll: cli calls services (src/app), not algorithms)");
  CHECK(v[4] == "train/e.cpp names FluidEngine (engines are constructed only in src/eval, src/sim and src/app)");
}

TEST_CASE("layering: src/ respects the layer order and library homes") {
  const auto files = read_tree(fs::path(FFSIM_SOURCE_DIR) / "src");
  REQUIRE(files.size() > 20);
  const auto v = violations(files);
  for (const auto& s : v) CHECK_MESSAGE(false, s);
  CHECK(v.empty());
}
