// `ffsim net <scenario> <test>`: microbenchmarks of the simulated machine.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include "app/net.hpp"
#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/progress.hpp"
#include "core/spell.hpp"
#include "core/unit_parse.hpp"
#include "plan/netbench.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

namespace {

struct NetArgs {
  std::string scenario;
  bool quiet = false;
  std::string test;
  std::string engine = "analytic";
  std::string size = "184MiB";
  int senders = 64;
  int clients = 0;
  bool json = false;
  bool csv = false;
  bool size_given = false, senders_given = false, clients_given = false;  ///< on the command line
};

// What the scenario lacks for test `t`, or "" when the test applies. A scenario without it is
// valid; the test does not apply to it (a usage error naming the scenario file).
std::string not_applicable(const std::string& t, const plan::ScenarioSpec& sc) {
  const bool storage = sc.cluster.storage && sc.cluster.storage->count > 0;
  if ((t == "pingpong" || t == "bandwidth" || t == "isolation") && sc.cluster.nodes < 2)
    return "has " + std::to_string(sc.cluster.nodes) + " GPU node; " + t + " runs between 2 GPU nodes";
  if (t == "storage-read" && !storage) return "has no storage nodes (cluster.storage); storage-read reads from them";
  if (t == "isolation" && !storage)
    return "has no storage nodes (cluster.storage); isolation's checkpoint storm writes to them";
  return "";
}

// The test's options, checked before any work (the test named, options it does not use refused).
plan::NetOptions net_options(const NetArgs& a) {
  const auto& t = plan::net_tests();
  if (std::find(t.begin(), t.end(), a.test) == t.end())
    throw UsageError("unknown net test \"" + a.test + "\"" + did_you_mean(a.test, t) + "; valid: " + join(t));
  // Options the chosen test does not use: an error, not ignored.
  if (a.test != "storage-read") {
    if (a.senders_given) throw UsageError("--senders: only storage-read uses it (the test is " + a.test + ")");
    if (a.clients_given) throw UsageError("--clients: only storage-read uses it (the test is " + a.test + ")");
  }
  if (a.test == "pingpong" && a.size_given)
    throw UsageError("--size: pingpong measures the latency of 8-byte messages; use the bandwidth test for a size");
  plan::NetOptions opt;
  opt.bytes = size_option(a.size);
  if (opt.bytes <= 0) throw UsageError("--size must be positive");
  opt.senders_per_client = a.senders;
  opt.clients = a.clients;
  (void)app::choose_simulating_engine(a.engine, app::Analytic::Fluid, "net");
  return opt;
}

// The test on `sc` (named `file` in messages): UsageErrors for options the test does not use and a
// scenario it does not apply to.
plan::NetReport compute_net(const NetArgs& a, const plan::ScenarioSpec& sc, const std::string& file) {
  const plan::NetOptions opt = net_options(a);
  const app::EngineChoice engine = app::choose_simulating_engine(a.engine, app::Analytic::Fluid, "net");
  const std::string why = not_applicable(a.test, sc);
  if (!why.empty()) throw UsageError("net " + a.test + ": " + file + " " + why);
  if (a.test == "storage-read") {
    const int storage = sc.cluster.storage->count;
    if (a.clients_given && a.clients > sc.cluster.nodes)
      throw UsageError("--clients " + std::to_string(a.clients) + ": " + file + " has " + fmt_int(sc.cluster.nodes) +
                       " GPU nodes; give at most " + std::to_string(sc.cluster.nodes) + " (default: all)");
    if (a.senders_given && a.senders > storage)
      throw UsageError("--senders " + std::to_string(a.senders) + ": " + file + " has " + fmt_int(storage) +
                       " storage nodes, and a client reads from each at most once; give at most " +
                       std::to_string(storage));
  }
  return app::net_test(a.test, sc, engine, opt);
}

// One case as a record, in SI base units: the JSON rows and the CSV columns are the same.
Record net_record(const plan::NetRow& row) {
  return {{"case", row.name},
          {"bytes", row.bytes},
          {"time_s", row.seconds},
          {"rate_Bps", row.rate},
          {"bound_Bps", row.bound > 0 ? Cell(row.bound) : Cell(nullptr)},  // none: the table's "-"
          {"bound", row.bound_name},
          {"limiter", row.limiter}};
}

// `ffsim sweep`: the records of one point, with the scenario's name first.
std::vector<Record> sweep_net(Context& ctx, const NetArgs& a, const config::Document& doc) {
  if (a.json || a.csv)
    throw UsageError(std::string(a.json ? "--json" : "--csv") +
                     ": not an option of a swept net test (the sweep writes its own --csv and --json files); drop it");
  (void)net_options(a);
  const plan::ScenarioSpec sc = plan::parse_scenario(doc, ctx.catalog());
  const plan::NetReport r = compute_net(a, sc, doc.file());
  std::vector<Record> recs;
  for (const auto& row : r.rows) {
    Record rec = net_record(row);
    rec.insert(rec.begin(), Record::value_type("scenario", sc.name));
    recs.push_back(std::move(rec));
  }
  return recs;
}

int run_net(Context& ctx, const NetArgs& a) {
  (void)net_options(a);
  ctx.use_scenarios({a.scenario});
  const plan::ScenarioSpec sc = plan::load_scenario(a.scenario, ctx.catalog());
  const plan::NetReport r = [&] {
    progress::Meter meter(!a.quiet && ::isatty(STDERR_FILENO) != 0, "simulating", std::cerr);
    return compute_net(a, sc, a.scenario);
  }();
  std::vector<Record> recs;
  for (const auto& row : r.rows) recs.push_back(net_record(row));
  if (a.csv) {
    write_records_csv(std::cout, recs);
    return kOk;
  }
  if (a.json) {
    report::JsonWriter w(std::cout);
    begin_json(w, "net");
    w.field("scenario", sc.name);
    w.field("test", r.test);
    w.field("engine", r.engine);
    w.key("rows");
    write_records_json(w, recs);
    w.field("note", r.note);
    if (ctx.calibration_use()) {  // what --calibration applied and skipped (calib_report.hpp)
      w.key("calibration");
      write_calibration(w, ctx);
    }
    w.end_object();
    return kOk;
  }
  std::cout << "ffsim net " << r.test << " on " << sc.name << " (" << r.engine << " engine)\n";
  const bool latency = r.test == "pingpong";
  report::Table tab(latency ? std::vector<std::string>{"case", "one-way time"}
                            : std::vector<std::string>{"case", "size", "time", "rate", "bound", "of bound", "limited by"});
  for (const auto& row : r.rows) {
    if (latency) {
      tab.add({row.name, fmt_time(Seconds(row.seconds))});
      continue;
    }
    tab.add({row.name, fmt_bytes(Bytes(row.bytes)), fmt_time(Seconds(row.seconds)), fmt_bandwidth(BytesPerSecond(row.rate)),
             row.bound > 0 ? fmt_bandwidth(BytesPerSecond(row.bound)) + " (" + row.bound_name + ")" : "-",
             row.bound > 0 ? fmt_f(100 * row.rate / row.bound, 1) + "%" : "-", row.limiter});
  }
  tab.print(std::cout, "  ");
  if (!r.note.empty()) std::cout << "  " << r.note << "\n";
  print_calibration(std::cout, ctx);
  return kOk;
}

}  // namespace

void setup_net(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("net", "Microbenchmarks of the simulated machine: " + join(plan::net_tests()));
  auto a = std::make_shared<NetArgs>();
  ctx.expects(sub->add_option("scenario", a->scenario, "Scenario JSON file")->required()->check(input_file()),
              "a scenario file");
  ctx.expects(sub->add_option("test", a->test, "One of: " + join(plan::net_tests()))->required(),
              "one of " + join(plan::net_tests()));
  ctx.expects(sub->add_option("--engine", a->engine, "fluid (max-min simulation; analytic, the default, is its former name here), a fluid variant (fluid-full, fluid-eager) or simgrid"),
              "fluid, fluid-full, fluid-eager, simgrid or analytic");
  auto* size = ctx.expects(sub->add_option("--size", a->size,
                                           "Transfer size (default 184MiB); storage-read: bytes per client (not for pingpong: "
                                           "8-byte messages)"),
                           "a size with a unit (e.g. 184MiB)");
  auto* senders = ctx.expects(sub->add_option("--senders", a->senders,
                                              "storage-read: concurrent senders per client (request-to-send cap; default 64, "
                                              "at most the storage nodes)")
                                  ->check(int_in(1, 1 << 20)),
                              "an integer in [1, 1048576]");
  auto* clients = ctx.expects(sub->add_option("--clients", a->clients, "storage-read: GPU nodes reading (default: all)")
                                  ->check(int_in(1, 1 << 24)),
                              "an integer in [1, 16777216]");
  sub->add_flag(
      "--quiet", a->quiet,
      "No progress line on stderr (shown only where stderr is a terminal, for runs longer than half a second)");
  auto* json = sub->add_flag("--json", a->json, "Machine-readable output");
  json->excludes(sub->add_flag("--csv", a->csv, "CSV of the rows (one per case), SI units"));
  sub->callback([&ctx, a, size, senders, clients] {
    a->size_given = size->count() > 0;
    a->senders_given = senders->count() > 0;
    a->clients_given = clients->count() > 0;
    ctx.action = [&ctx, a] { return run_net(ctx, *a); };
    ctx.sweep = std::make_shared<SweepHook>();
    ctx.sweep->rows = [a](Context& c, const config::Document& doc, int) { return sweep_net(c, *a, doc); };
    ctx.sweep->check = [a] {
      if (a->json || a->csv)
        throw UsageError(
            std::string(a->json ? "--json" : "--csv") +
            ": not an option of a swept net test (the sweep writes its own --csv and --json files); drop it");
      (void)net_options(*a);
    };
    ctx.sweep->columns = [] {
      std::vector<std::string> keys{"scenario"};
      for (const auto& kv : net_record(plan::NetRow{})) keys.push_back(kv.first);
      return keys;
    };
  });
}

}  // namespace ffsim::cli
