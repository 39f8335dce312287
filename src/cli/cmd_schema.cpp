// `ffsim schema --out DIR [scenarios...]`: write the JSON Schema (draft 2020-12) of scenarios and
// models, learnt from the readers themselves while they read the catalog and the scenarios given.
// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "config/schema.hpp"
#include "plan/scenario.hpp"
#include "report/json_writer.hpp"

namespace ffsim::cli {

namespace {

int run_schema(Context& ctx, const std::string& out, const std::vector<std::string>& scenarios, bool json) {
  config::SchemaRecorder rec;
  config::record_schema(&rec);
  struct Stop {
    ~Stop() { config::record_schema(nullptr); }
  } stop;
  // Every entry of the published catalog, read by its kind's parser (as `ffsim check` does), then
  // every scenario: each accessor records the key it asked for, its expectation and its type.
  const config::Catalog& cat = ctx.published_catalog();
  std::vector<std::pair<std::string, std::string>> kinds;
  for (const auto& kind : ctx.kind_names()) {
    kinds.emplace_back(kind, ctx.kinds.get(kind).description);
    for (const config::CatalogEntry* e : cat.of_kind(kind)) ctx.kinds.get(kind).factory(*e, cat);
  }
  for (const auto& f : scenarios) (void)plan::load_scenario(f, cat);
  const auto files = config::json_schemas(rec, kinds, [&](const std::string& kind) { return cat.names(kind); });
  std::vector<Record> written;  // --json: one per file written
  for (const auto& [name, text] : files) {
    const std::string path = (std::filesystem::path(out) / name).string();
    write_output("--out", path, [&](std::ostream& os) { os << text; });
    if (json) written.push_back({{"file", path}, {"bytes", static_cast<long long>(text.size())}});
    else std::cout << "wrote " << path << '\n';
  }
  if (json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "schema");
    w.key("files");
    write_records_json(w, written);
    w.end_object();
  }
  return kOk;
}

}  // namespace

void setup_schema(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("schema", "Write the JSON Schema of scenarios and models (for editors), learnt from the readers");
  auto out = std::make_shared<std::string>();
  auto files = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  ctx.expects(sub->add_option("--out", *out, "Folder to write scenario.schema.json and model.schema.json into")
                  ->required()
                  ->check(CLI::ExistingDirectory),
              "a folder");
  ctx.expects(sub->add_option("scenarios", *files, "Scenarios whose reads teach the scenario schema (e.g. scenarios/*.json)")
                  ->check(input_file()),
              "a scenario file");
  sub->add_flag("--json", *json, "Machine-readable output: the files written, each with its size");
  sub->callback([&ctx, out, files, json] { ctx.action = [&ctx, out, files, json] { return run_schema(ctx, *out, *files, *json); }; });
}

}  // namespace ffsim::cli
