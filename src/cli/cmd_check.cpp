// `ffsim check <files...>`: validate scenarios and catalog models without simulating.
// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "calib/measurement.hpp"
#include "cli/app.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "config/background_reader.hpp"
#include "config/measurement_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "plan/scenario.hpp"
#include "report/json_writer.hpp"

namespace ffsim::cli {

namespace fs = std::filesystem;

namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

int run_check(Context& ctx, const std::vector<std::string>& files, bool quiet, bool json) {
  // Sort the arguments into catalog entries (they carry "kind") and scenarios.
  std::vector<std::string> models, scenarios, measurements, backgrounds;
  for (const auto& f : files) {
    const config::Document d = config::Document::load(f, false);
    const config::Reader r = d.root();
    if (config::is_measurement(r))
      measurements.push_back(f);
    else if (config::is_background(r))
      backgrounds.push_back(f);  // `collective --background`: not a catalog kind
    else (r.is_object() && r.has("kind") ? models : scenarios).push_back(f);
  }
  int failures = 0;
  std::vector<Record> checked;  // --json: one per file, in the order checked
  auto ok = [&](const std::string& file, const std::string& kind, const std::string& name, const std::string& what) {
    checked.push_back({{"file", file}, {"valid", true}, {"kind", kind}, {"name", name}, {"summary", what}});
    if (!quiet && !json) std::cout << "ok  " << file << "  (" << what << ")\n";
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
      ok(models[i], kind, name, kind + " " + name);
    }
  }
  for (const auto& f : measurements) {
    const calib::MeasurementFile m = config::load_measurement(f);
    ok(f, "measurement", m.machine.name,
           "measurements of " + m.machine.name + ", " + std::to_string(m.points.size()) + " points, " + m.date);
  }
  for (const auto& f : backgrounds) {
    // Whether its nodes fit a cluster is checked where it runs beside one (collective --background).
    const platform::BackgroundSpec b = config::load_background(f);
    std::size_t flows = 0;
    for (const auto& st : b.streams)
      flows += static_cast<std::size_t>(st.nodes) * static_cast<std::size_t>(st.targets_per_node);
    ok(f, "background", b.name,
       "background " + b.name + ": " + std::to_string(b.streams.size()) +
           (b.streams.size() == 1 ? " stream, " : " streams, ") + fmt_int(static_cast<long long>(flows)) +
           (flows == 1 ? " flow, " : " flows, ") + fmt_bandwidth(BytesPerSecond(platform::background_rate(b))) +
           " in all");
  }
  for (const auto& f : scenarios) {
    const plan::ScenarioSpec s = plan::load_scenario(f, cat);
    ok(f, "scenario", s.name,
           "scenario " + s.name + ": " + std::to_string(s.cluster.nodes) + " nodes of " + s.cluster.node.name + ", " +
               std::to_string(s.cluster.gpus()) + " GPUs");
  }
  // Only valid files reach here: the first invalid one is exit 3 with its message on stderr.
  if (json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "check");
    w.key("files");
    write_records_json(w, checked);
    w.end_object();
  }
  return failures ? kConfig : kOk;
}

}  // namespace

void setup_check(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("check", "Validate scenarios and catalog models without simulating");
  auto files = std::make_shared<std::vector<std::string>>();
  auto quiet = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  ctx.expects(sub->add_option("files", *files, "Scenario or model JSON files")->required()->check(input_file()),
              "a scenario or model file");
  auto* q = sub->add_flag("-q,--quiet", *quiet, "Print nothing when everything is valid");
  q->excludes(sub->add_flag("--json", *json, "Machine-readable output: the files checked, each with its kind and name"));
  sub->callback([&ctx, files, quiet, json] {
    ctx.action = [&ctx, files, quiet, json] { return run_check(ctx, *files, *quiet, *json); };
  });
}

}  // namespace ffsim::cli
