// `ffsim check <files...>`: validate scenarios and catalog models without simulating.
// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/context.hpp"
#include "core/error.hpp"
#include "calib/measurement.hpp"
#include "plan/scenario.hpp"

namespace ffsim::cli {

namespace fs = std::filesystem;

namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

int run_check(Context& ctx, const std::vector<std::string>& files, bool quiet) {
  // Sort the arguments into catalog entries (they carry "kind") and scenarios.
  std::vector<std::string> models, scenarios, measurements;
  for (const auto& f : files) {
    const config::Document d = config::Document::load(f, false);
    const config::Reader r = d.root();
    if (calib::is_measurement(r)) measurements.push_back(f);
    else (r.is_object() && r.has("kind") ? models : scenarios).push_back(f);
  }
  int failures = 0;
  auto report = [&](const std::string& what) {
    if (!quiet) std::cout << "ok  " << what << '\n';
  };

  // Files outside the models folder join a copy of the catalog, so that they can reference
  // (and extend) catalog entries and each other, and the scenarios checked with them can use them.
  config::Catalog cat = ctx.catalog();
  if (!models.empty()) {
    std::vector<std::pair<std::string, std::string>> targets;  // (kind, name) per file
    for (const auto& f : models) {
      const config::Reader r = config::Document::load(f, true).root();
      const std::string kind = r.child("kind").as_string();
      if (!ctx.kinds.find(kind)) r.child("kind").fail(ctx.kinds.unknown_message(kind));
      const std::string name = r.child("name").as_string();
      const config::CatalogEntry* existing = cat.find(kind, name);
      if (!(existing && same_file(existing->file, f))) cat.add_file(f, ctx.kind_names());
      targets.emplace_back(kind, name);
    }
    cat.resolve();
    for (std::size_t i = 0; i < models.size(); ++i) {
      const auto& [kind, name] = targets[i];
      ctx.kinds.get(kind).factory(*cat.find(kind, name), cat);
      report(models[i] + "  (" + kind + " " + name + ")");
    }
  }
  for (const auto& f : measurements) {
    const calib::MeasurementFile m = calib::load_measurement(f);
    report(f + "  (measurements of " + m.machine.name + ", " + std::to_string(m.points.size()) + " points, " + m.date + ")");
  }
  for (const auto& f : scenarios) {
    const plan::ScenarioSpec s = plan::load_scenario(f, cat);
    report(f + "  (scenario " + s.name + ": " + std::to_string(s.cluster.nodes) + " nodes of " + s.cluster.node.name +
           ", " + std::to_string(s.cluster.gpus()) + " GPUs)");
  }
  return failures ? kConfig : kOk;
}

}  // namespace

void setup_check(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("check", "Validate scenarios and catalog models without simulating");
  auto files = std::make_shared<std::vector<std::string>>();
  auto quiet = std::make_shared<bool>(false);
  ctx.expects(sub->add_option("files", *files, "Scenario or model JSON files")->required()->check(CLI::ExistingFile),
              "a scenario or model file");
  sub->add_flag("-q,--quiet", *quiet, "Print nothing when everything is valid");
  sub->callback([&ctx, files, quiet] { ctx.action = [&ctx, files, quiet] { return run_check(ctx, *files, *quiet); }; });
}

}  // namespace ffsim::cli
