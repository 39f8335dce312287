// `ffsim models`: list the hardware catalog with its key facts (and, with --sources, where each came from).
// SPDX-License-Identifier: Apache-2.0
#include <iostream>

#include <CLI/CLI.hpp>

#include "app/models.hpp"
#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "config/train_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

namespace {

// --json and --csv: every entry (of --kind) with its kind, name, file and what it overrides; the
// per-kind facts are the catalog's own JSON files (and with --sources, each fact's source).
int models_data(Context& ctx, const std::string& only, bool sources, bool csv) {
  const config::Catalog& cat = ctx.catalog();
  std::vector<Record> entries, facts;
  for (const auto& kind : ctx.kind_names()) {
    if (!only.empty() && only != kind) continue;
    for (const auto* e : cat.of_kind(kind)) {
      entries.push_back({{"kind", kind},
                         {"name", e->name},
                         {"file", e->file},
                         {"overrides", e->overrides.empty() ? Cell(nullptr) : Cell(e->overrides)},
                         {"description", e->description}});
      if (!sources) continue;
      ctx.kinds.get(kind).factory(*e, cat);  // reading the entry records its sources
      for (const auto& s : e->document.sources())
        facts.push_back({{"kind", kind}, {"name", e->name}, {"file", e->file}, {"pointer", s.pointer}, {"source", s.source}});
    }
  }
  if (csv) {
    write_records_csv(std::cout, sources ? facts : entries);
    return kOk;
  }
  report::JsonWriter w(std::cout);
  begin_json(w, "models");
  w.field("models_from", ctx.models_origin());
  w.key("folders");
  w.begin_array();
  for (const auto& d : ctx.models_folders()) w.value(d);
  w.end_array();
  w.field("calibration", ctx.calibration);
  w.key("entries");
  write_records_json(w, entries);
  if (sources) {
    w.key("sources");
    write_records_json(w, facts);
  }
  w.end_object();
  return kOk;
}

int run_models(Context& ctx, const std::string& only, bool sources) {
  const config::Catalog& cat = ctx.catalog();
  bool first = true;
  auto section = [&](const std::string& title) {
    std::cout << (first ? "" : "\n") << title << '\n';
    first = false;
  };
  for (const auto& table : app::catalog_tables(cat, only)) {
    section(table.title);
    report::Table t(table.head);
    for (const auto& row : table.rows) t.add(row);
    t.print(std::cout, "  ");
  }
  if (!ctx.calibration.empty()) {
    std::cout << "\nWith --calibration " << ctx.calibration << ": the applied facts are the calibrated ones"
              << (sources ? " (their sources name the file)" : " (--sources lists them)") << "\n";
    print_calibration(std::cout, ctx);
  }
  if (sources) {
    section("Models folders (from " + ctx.models_origin() + "; a later folder overrides an earlier one by model name)");
    const auto& dirs = ctx.models_folders();
    for (std::size_t i = 0; i < dirs.size(); ++i) std::cout << "  " << i + 1 << ". " << dirs[i] << "\n";
    bool any = false;
    for (const auto& kind : ctx.kind_names())
      for (const auto* e : cat.of_kind(kind))
        if (!e->overrides.empty()) {
          if (!any) std::cout << "  overridden:\n";
          any = true;
          std::cout << "    " << kind << " " << e->name << ": " << e->file << " replaces " << e->overrides << "\n";
        }
    section("Sources");
    report::Table t({"file", "fact", "source"});
    for (const auto& kind : ctx.kind_names()) {
      if (!only.empty() && only != kind) continue;
      for (const auto* e : cat.of_kind(kind)) {
        ctx.kinds.get(kind).factory(*e, cat);  // reading the entry records its sources
        for (const auto& s : e->document.sources()) t.add({e->file, s.pointer, s.source});
      }
    }
    t.print(std::cout, "  ");
  }
  return kOk;
}

}  // namespace

void setup_models(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("models", "List the hardware catalog with key facts");
  auto kind = std::make_shared<std::string>();
  auto sources = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  auto csv = std::make_shared<bool>(false);
  ctx.expects(sub->add_option("--kind", *kind,
                              "Only this kind (gpu, cpu, nic, switch, node, price_book, nn_model, compute_model, calibration, ...)"),
              "a model kind (" + join(ctx.kind_names()) + ")");
  sub->add_flag("--sources", *sources, "Also list every fact with its source");
  auto* j = sub->add_flag("--json", *json, "Machine-readable output: the folders read, every entry (and with --sources every fact's source)");
  j->excludes(sub->add_flag("--csv", *csv, "CSV of the entries (with --sources: of every fact's source)"));
  sub->callback([&ctx, kind, sources, json, csv] {
    ctx.action = [&ctx, kind, sources, json, csv] {
      if (!kind->empty() && !ctx.kinds.find(*kind)) throw UsageError("--kind: " + ctx.kinds.unknown_message(*kind));
      if (*json || *csv) return models_data(ctx, *kind, *sources, *csv);
      return run_models(ctx, *kind, *sources);
    };
  });
}

}  // namespace ffsim::cli
