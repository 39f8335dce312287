// `ffsim net <scenario> <test>`: microbenchmarks of the simulated machine.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/app.hpp"
#include "cli/context.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"
#include "core/unit_parse.hpp"
#include "plan/netbench.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"

namespace ffsim::cli {

namespace {

struct NetArgs {
  std::string scenario;
  std::string test;
  std::string engine = "analytic";
  std::string size = "184MiB";
  int senders = 64;
  int clients = 0;
  bool json = false;
};

int run_net(Context& ctx, const NetArgs& a) {
  const auto& t = plan::net_tests();
  if (std::find(t.begin(), t.end(), a.test) == t.end())
    throw UsageError("unknown net test \"" + a.test + "\"" + did_you_mean(a.test, t) + "; valid: " + join(t));
  plan::NetOptions opt;
  opt.bytes = size_option(a.size);
  if (opt.bytes <= 0) throw UsageError("--size must be positive");
  opt.senders_per_client = a.senders;
  opt.clients = a.clients;
  const auto* entry = eval::engines().find(a.engine);
  if (!entry) throw UsageError(eval::engines().unknown_message(a.engine));
  const plan::ScenarioSpec sc = plan::load_scenario(a.scenario, ctx.catalog());
  auto engine = entry->factory();
  const plan::NetReport r = plan::run_net_test(a.test, sc, *engine, a.engine, opt);
  if (a.json) {
    report::JsonWriter w(std::cout);
    w.begin_object();
    w.field("scenario", sc.name);
    w.field("test", r.test);
    w.field("engine", r.engine);
    w.key("rows");
    w.begin_array();
    for (const auto& row : r.rows) {
      w.begin_object();
      w.field("case", row.name);
      w.field("bytes", row.bytes);
      w.field("time_s", row.seconds);
      w.field("rate_GBps", row.rate / 1e9);
      w.field("bound_GBps", row.bound / 1e9);
      w.field("bound", row.bound_name);
      w.field("limiter", row.limiter);
      w.end_object();
    }
    w.end_array();
    w.field("note", r.note);
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
  return kOk;
}

}  // namespace

void setup_net(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("net", "Microbenchmarks of the simulated machine: " + join(plan::net_tests()));
  auto a = std::make_shared<NetArgs>();
  sub->add_option("scenario", a->scenario, "Scenario JSON file")->required()->check(CLI::ExistingFile);
  sub->add_option("test", a->test, "One of: " + join(plan::net_tests()))->required();
  sub->add_option("--engine", a->engine, "analytic (default) or simgrid");
  sub->add_option("--size", a->size, "Transfer size (default 184MiB); storage-read: bytes per client");
  sub->add_option("--senders", a->senders, "storage-read: concurrent senders per client (request-to-send cap)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--clients", a->clients, "storage-read: GPU nodes reading (default: all)")->check(CLI::Range(0, 1 << 24));
  sub->add_flag("--json", a->json, "Machine-readable output");
  sub->callback([&ctx, a] { ctx.action = [&ctx, a] { return run_net(ctx, *a); }; });
}

}  // namespace ffsim::cli
