// `ffsim collective <scenario>`: allreduce (and other collectives) on the simulated cluster, one row
// per (algorithm, GPU count): time, algbw and busbw (as nccl-tests define them), host-memory traffic
// per node, and the binding resource.
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include <unistd.h>

#include "app/collective_table.hpp"
#include "app/engines.hpp"
#include "cli/app.hpp"
#include "cli/calib_report.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "config/background_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/parallel.hpp"
#include "core/progress.hpp"
#include "core/spell.hpp"
#include "core/unit_parse.hpp"
#include "plan/scenario.hpp"
#include "report/json_writer.hpp"
#include "report/table.hpp"
#include "report/trace.hpp"

namespace ffsim::cli {

namespace {

struct CollArgs {
  std::string scenario;
  bool quiet = false;
  std::string algos = "hfreduce,nccl";
  std::string gpus = "16,32,64,128";
  std::string size = "184MiB";
  std::string engine = "analytic";
  bool cross_zone = false;
  std::string placement;  ///< --placement (empty: packed, or cross-zone:0.5 with --cross-zone)
  bool json = false;
  bool csv = false;
  bool explain = false;
  bool full = false;
  std::string trace;
  std::string background;  ///< a background document (kind "background") run beside each row
  int threads = 0;  ///< 0: the machine's hardware threads
};

// "a,b,c" -> {a, b, c}; an empty item ("16,,32", a leading or trailing comma) is a usage error.
std::vector<std::string> split_list(const std::string& s, const std::string& option) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) v.push_back(x);
  if (!s.empty() && s.back() == ',') v.emplace_back();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].empty())
      throw UsageError(option + ": empty item in \"" + s + "\" (expected a comma-separated list without empty items)");
    if (option != "--size" && std::find(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v[i]) != v.begin() + static_cast<std::ptrdiff_t>(i))
      throw UsageError(option + ": " + v[i] + " appears twice in \"" + s + "\"; give each once");
  }
  if (v.empty()) throw UsageError(option + ": expected at least one item");
  return v;
}

// --size: a comma-separated list of sizes and ranges; "A:B" is every A x 2^k up to B (nccl-tests'
// -b A -e B -f 2), in increasing order; a list keeps its order and repeats.
std::vector<double> size_list(const std::string& s) {
  std::vector<double> v;
  for (const auto& item : split_list(s, "--size")) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      v.push_back(size_option(item, "--size"));
      continue;
    }
    const std::string lo = item.substr(0, colon), hi = item.substr(colon + 1);
    if (lo.empty() || hi.empty() || hi.find(':') != std::string::npos)
      throw UsageError("--size: a range is FIRST:LAST, e.g. 1MiB:1GiB (doubling from FIRST to LAST), got \"" + item + "\"");
    const double a = size_option(lo, "--size"), b = size_option(hi, "--size");
    if (!(a > 0)) throw UsageError("--size: a range starts above 0 (it doubles), got \"" + item + "\"");
    if (b < a) throw UsageError("--size: the range \"" + item + "\" ends below its start; write FIRST:LAST with FIRST <= LAST");
    for (double x = a; x <= b; x *= 2) {
      v.push_back(x);
      if (v.size() > 4096) throw UsageError("--size: more than 4,096 sizes");
    }
  }
  if (v.size() > 4096) throw UsageError("--size: more than 4,096 sizes");
  return v;
}

// The rows' algorithms, GPU counts, sizes and engine, checked (UsageErrors naming the option).
struct CollPlan {
  std::vector<std::string> algos;
  std::vector<int> gpus;
  std::vector<double> sizes;
  app::EngineChoice engine_choice;
};

// The placement of --placement or --cross-zone (its former spelling, kept: cross-zone:0.5), and
// how the user asked for it (for messages).
std::pair<app::Placement, std::string> placement_of(const CollArgs& a) {
  if (a.cross_zone && !a.placement.empty())
    throw UsageError("--placement " + a.placement + " and --cross-zone: give one (--cross-zone is --placement cross-zone:0.5)");
  if (a.cross_zone) return {app::parse_placement("cross-zone"), "--cross-zone"};
  if (a.placement.empty()) return {app::Placement{}, "--placement"};
  const app::Placement pl = app::parse_placement(a.placement);
  return {pl, "--placement " + pl.name()};
}

// ", across zones" (--cross-zone, as before), ", placement spread" or nothing (packed).
std::string placement_words(const CollArgs& a) {
  if (a.cross_zone) return ", across zones";
  const app::Placement pl = placement_of(a).first;
  return pl.packed() ? "" : ", placement " + pl.name();
}

// The record's "cross_zone" cell, and a "placement" cell after it when the placement is not packed
// (so that outputs without --placement keep their columns).
void add_placement_cells(Record& r, const CollArgs& a) {
  const app::Placement pl = placement_of(a).first;
  auto it = std::find_if(r.begin(), r.end(), [](const auto& c) { return c.first == "cross_zone"; });
  if (it == r.end()) return;
  it->second = pl.kind == app::Placement::Kind::CrossZone;
  if (!pl.packed()) r.insert(it + 1, {"placement", pl.name()});
}

CollPlan prepare(const CollArgs& a) {
  const auto algos = split_list(a.algos, "--algo");
  for (const auto& x : algos) app::check_algorithm(x);
  std::vector<int> gpus;
  for (const auto& x : split_list(a.gpus, "--gpus")) {
    constexpr long long kMax = 1LL << 24;
    std::size_t used = 0;
    long long v = 0;
    bool too_large = false;
    try {
      v = std::stoll(x, &used);
    } catch (const std::out_of_range&) {
      too_large = x.find('-') == std::string::npos;
      used = too_large ? x.size() : 0;
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != x.size() || (!too_large && v < 1))
      throw UsageError("--gpus: expected a comma-separated list of positive integers, got \"" + x + "\"");
    if (too_large || v > kMax) throw UsageError("--gpus: " + x + " GPUs is too large (at most " + fmt_int(kMax) + ")");
    gpus.push_back(static_cast<int>(v));
  }
  const std::vector<double> sizes = size_list(a.size);
  const app::EngineChoice engine_choice = app::choose_engine(a.engine, app::Analytic::ClosedForm);
  const app::EngineCaps& caps = engine_choice.caps;
  // Nothing silently ignored: --threads runs simulations side by side (engines safe on threads
  // only), --full turns off a simulation's shortcuts (the closed form has none).
  if (a.threads > 0 && (!caps.simulates || !caps.parallel_safe))
    throw UsageError(std::string("--threads: runs the rows' simulations side by side on the fluid engines; ") +
                     (!caps.simulates ? "the closed form (--engine " + a.engine + ") simulates nothing"
                                      : "the SimGrid engine runs one simulation at a time") +
                     ": drop --threads or add --engine fluid");
  if (!a.placement.empty() && !placement_of(a).first.packed() && !caps.simulates)
    throw UsageError("--placement " + a.placement + ": the closed form (--engine " + a.engine +
                     ") sees no routes, so where the nodes are does not change it: add --engine fluid (or simgrid)");
  if (a.full && !caps.simulates)
    throw UsageError("--full: simulates the whole schedule without the exact shortcuts; the closed form (--engine " + a.engine +
                     ") has none to turn off: drop --full or add --engine fluid (or simgrid)");
  return CollPlan{algos, gpus, sizes, engine_choice};
}

// One row as a record, in SI base units: the JSON rows and the CSV columns are the same.
Record collective_record(const std::string& scenario, const CollArgs& a, const app::CollectiveRow& r) {
  Record rec{{"scenario", scenario},
          {"algo", r.algo},
          {"gpus", static_cast<long long>(r.gpus)},
          {"bytes", r.bytes},
          {"engine", a.engine},
          {"cross_zone", a.cross_zone},
          {"time_s", r.time},
          {"algbw_Bps", r.algbw},
          {"busbw_Bps", r.busbw},
          {"host_traffic_per_node_S", r.host},
          {"bottleneck", r.bottleneck},
          {"wall_s", r.wall}};
  add_placement_cells(rec, a);
  return rec;
}

// `ffsim sweep`: the records of one point (no wall_s: it is not the same twice).
CollPlan sweep_check_collective(const CollArgs& a) {
  if (!a.background.empty())
    throw UsageError(
        "--background: not an option of a swept collective yet (run ffsim collective --background per point); drop it");
  if (a.json || a.csv || a.explain || !a.trace.empty())
    throw UsageError(
        std::string(a.json      ? "--json"
                    : a.csv     ? "--csv"
                    : a.explain ? "--explain"
                                : "--trace") +
        ": not an option of a swept collective (the sweep writes its own --csv and --json files); drop it");
  return prepare(a);
}

std::vector<Record> sweep_collective(Context& ctx, const CollArgs& a, const config::Document& doc, int threads) {
  const CollPlan p = sweep_check_collective(a);
  const plan::ScenarioSpec sc = plan::parse_scenario(doc, ctx.catalog());
  app::CollectiveRequest req;
  req.algos = p.algos;
  req.gpus = p.gpus;
  req.sizes = p.sizes;
  std::tie(req.placement, req.placement_flag) = placement_of(a);
  req.full = a.full;
  req.threads = a.threads > 0 ? a.threads : threads;
  const app::CollectiveResult res = app::run_collective(sc, ctx.catalog(), p.engine_choice, req);
  std::vector<Record> recs;
  for (const auto& r : res.rows) {
    Record rec = collective_record(sc.name, a, r);
    rec.pop_back();  // wall_s
    recs.push_back(std::move(rec));
  }
  return recs;
}

// --background: the checks of the options it does not combine with, before anything is loaded.
void check_background_options(const CollArgs& a, const CollPlan& cp) {
  if (!a.trace.empty() || a.explain)
    throw UsageError(std::string(a.explain ? "--explain" : "--trace") +
                     " does not combine with --background (drop one)");
  if (!cp.engine_choice.caps.simulates)
    throw UsageError(
        "--background: the background's flows run in a simulation beside the collective's, and the closed form "
        "(--engine " +
        a.engine + ") simulates nothing: add --engine fluid (or simgrid)");
}

std::string class_weights(const std::string& coll_class, double wc, const std::string& bg_class, double wb) {
  if (coll_class == bg_class) return coll_class + " " + fmt_g(wc);
  return coll_class + " " + fmt_g(wc) + " : " + bg_class + " " + fmt_g(wb);
}

// The arbitration's label in the table.
std::string arbitration_label(const app::BesideRun& b, const std::string& coll_class, const std::string& bg_class) {
  switch (b.arbitration) {
    case app::Arbitration::Scenario:
      return "scenario weights (" + class_weights(coll_class, b.collective_weight, bg_class, b.background_weight) + ")";
    case app::Arbitration::Equal:
      return "equal weights (" + class_weights(coll_class, b.collective_weight, bg_class, b.background_weight) + ")";
    case app::Arbitration::None: return "no isolation (one lane)";
  }
  return "";
}

// Each row alone and beside the background, as records (JSON rows and CSV lines alike).
std::vector<Record> beside_records(const std::string& scenario, const CollArgs& a, const platform::BackgroundSpec& bg,
                                   const std::vector<app::CollectiveRow>& rows) {
  std::vector<Record> recs;
  const std::string bg_class = sched::class_name(bg.streams.front().cls);
  for (const auto& r : rows) {
    auto rec = [&](const std::string& arb, Cell wc, Cell wb, double t, double algbw, double busbw, double slowdown,
                   Cell horizon, Cell end) {
      recs.push_back({{"scenario", scenario},
                      {"algo", r.algo},
                      {"gpus", static_cast<long long>(r.gpus)},
                      {"bytes", r.bytes},
                      {"engine", a.engine},
                      {"cross_zone", a.cross_zone},
                      {"background", bg.name},
                      {"arbitration", arb},
                      {"collective_class", std::string(sched::class_name(r.cls))},
                      {"background_class", bg_class},
                      {"collective_weight", wc},
                      {"background_weight", wb},
                      {"time_s", t},
                      {"algbw_Bps", algbw},
                      {"busbw_Bps", busbw},
                      {"slowdown", slowdown},
                      {"horizon_s", horizon},
                      {"background_first_end_s", end}});
      add_placement_cells(recs.back(), a);
    };
    rec("alone", nullptr, nullptr, r.time, r.algbw, r.busbw, 1.0, nullptr, nullptr);
    for (const auto& b : r.beside)
      rec(app::arbitration_name(b.arbitration), b.collective_weight, b.background_weight, b.time, b.algbw, b.busbw,
          b.slowdown, b.horizon, b.background_end);
  }
  return recs;
}

void write_background_json(report::JsonWriter& w, const platform::BackgroundSpec& bg) {
  w.begin_object();
  w.field("file", bg.file);
  w.field("name", bg.name);
  w.field("rate_Bps", platform::background_rate(bg));
  w.key("streams");
  w.begin_array();
  for (const auto& st : bg.streams) {
    w.begin_object();
    w.field("name", st.name);
    w.field("class", sched::class_name(st.cls));
    w.field("direction", st.direction == platform::BackgroundDirection::Write ? "write" : "read");
    w.field("first_node", st.first_node);
    w.field("nodes", st.nodes);
    w.field("targets_per_node", st.targets_per_node);
    w.field("rate_per_node_Bps", st.rate_per_node);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

int print_beside(Context& ctx, const CollArgs& a, const plan::ScenarioSpec& sc, const platform::BackgroundSpec& bg,
                 const app::CollectiveResult& res, const std::vector<double>& sizes) {
  const std::vector<app::CollectiveRow>& rows = res.rows;
  if (a.json || a.csv) {
    const std::vector<Record> recs = beside_records(sc.name, a, bg, rows);
    if (a.csv) {
      write_records_csv(std::cout, recs);
      return kOk;
    }
    report::JsonWriter w(std::cout);
    begin_json(w, "collective");
    w.key("background");
    write_background_json(w, bg);
    w.key("rows");
    write_records_json(w, recs);
    if (ctx.calibration_use()) {
      w.key("calibration");
      write_calibration(w, ctx);
    }
    w.end_object();
    return kOk;
  }
  std::string ops;
  for (std::size_t i = 0; i < res.kinds.size(); ++i)
    ops += (i == 0 ? "" : i + 1 == res.kinds.size() ? " and " : ", ") + res.kinds[i];
  const bool several = sizes.size() > 1;
  const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
  std::cout << "ffsim collective on " << sc.name << ": " << ops << " of "
            << (several ? fmt_bytes(Bytes(*lo)) + " to " + fmt_bytes(Bytes(*hi)) : fmt_bytes(Bytes(sizes.front())))
            << " per GPU, " << a.engine << " engine" << placement_words(a) << ", beside background "
            << bg.name << "\n";
  const int storage = sc.cluster.storage ? sc.cluster.storage->count : 0;
  std::cout << "  background " << bg.file << ":\n";
  for (const auto& st : bg.streams) {
    const bool write = st.direction == platform::BackgroundDirection::Write;
    const std::string flows = st.targets_per_node == 1 ? "1 flow" : std::to_string(st.targets_per_node) + " flows";
    std::cout << "    " << st.name << ": nodes " << st.first_node << "-" << (st.first_node + st.nodes - 1) << " "
              << (write ? "write to" : "read from") << " the " << storage << " storage nodes' drives, class "
              << sched::class_name(st.cls) << ", " << flows << " per node of at most "
              << fmt_bandwidth(BytesPerSecond(st.rate_per_node / st.targets_per_node)) << " each ("
              << fmt_bandwidth(BytesPerSecond(st.rate_per_node * st.nodes)) << " in all)\n";
  }
  std::vector<std::string> head{"algorithm", "GPUs", "arbitration", "time", "algbw", "busbw", "slowdown"};
  if (several) head.insert(head.begin() + 2, "size");
  report::Table t(head);
  const std::string bg_class = sched::class_name(bg.streams.front().cls);
  bool first = true;
  double min_ratio = 0;
  bool equal_is_none = true;
  for (const auto& r : rows) {
    if (!first) t.rule();
    first = false;
    auto add = [&](const std::string& label, double time, double algbw, double busbw, double slowdown) {
      std::vector<std::string> cells{r.algo,
                                     std::to_string(r.gpus),
                                     label,
                                     fmt_time(Seconds(time)),
                                     fmt_bandwidth(BytesPerSecond(algbw)),
                                     fmt_bandwidth(BytesPerSecond(busbw)),
                                     fmt_f(slowdown, 3) + "x"};
      if (several) cells.insert(cells.begin() + 2, fmt_bytes(Bytes(r.bytes)));
      t.add(cells);
    };
    add("alone", r.time, r.algbw, r.busbw, 1.0);
    for (const auto& b : r.beside) {
      add(arbitration_label(b, sched::class_name(r.cls), bg_class), b.time, b.algbw, b.busbw, b.slowdown);
      const double ratio = b.horizon / b.time;
      min_ratio = min_ratio == 0 ? ratio : std::min(min_ratio, ratio);
    }
    if (r.beside.size() == static_cast<std::size_t>(app::kArbitrations) &&
        r.beside[static_cast<std::size_t>(app::Arbitration::Equal)].time !=
            r.beside[static_cast<std::size_t>(app::Arbitration::None)].time)
      equal_is_none = false;
  }
  t.print(std::cout, "  ");
  std::cout
      << "  slowdown: time beside the background / time alone (both the whole schedule, no shortcut); the\n"
         "  background runs from the start for the whole collective: each of its flows carries its cap x a horizon\n"
         "  (4x the collective's time alone, raised until enough), so it lasts at least that long, and every\n"
         "  run checked that all background flows ended after the collective (the horizon was at least "
      << fmt_f(min_ratio, 2) << "x\n  the collective's time beside it)\n";
  if (equal_is_none)
    std::cout
        << "  equal weights and no isolation agree: flows share a link in proportion to their classes' weights, so\n"
           "  lanes of equal weight share it as one lane does (per-lane arbitration, where a lane's share is split\n"
           "  among its flows, is not modelled)\n";
  print_calibration(std::cout, ctx);
  return kOk;
}

int run_collective(Context& ctx, const CollArgs& a) {
  if (a.explain && (a.json || a.csv))
    throw UsageError(
        "--explain prints NCCL's cost table and the host-memory ceilings for people; it does not combine with "
        "--json or --csv (drop one)");
  const CollPlan cp = prepare(a);
  const auto& algos = cp.algos;
  const auto& gpus = cp.gpus;
  const auto& sizes = cp.sizes;
  const app::EngineChoice& engine_choice = cp.engine_choice;
  const app::EngineCaps& caps = engine_choice.caps;
  if (!a.trace.empty()) {
    if (algos.size() != 1 || gpus.size() != 1 || sizes.size() != 1)
      throw UsageError("--trace: a trace shows one run; give one --algo, one --gpus count and one --size (got " +
                       std::to_string(algos.size()) + ", " + std::to_string(gpus.size()) + " and " +
                       std::to_string(sizes.size()) + ")");
    if (!caps.timeline)
      throw UsageError("--trace: the " + a.engine + " engine is a closed form without a timeline; add --engine fluid (or simgrid)");
    // The file is written once the run succeeded (a failed run leaves it as it was).
    check_output_path("--trace", a.trace, {a.scenario, ctx.calibration});
  }
  if (!a.background.empty()) check_background_options(a, cp);
  ctx.use_scenarios({a.scenario});
  const plan::ScenarioSpec sc = plan::load_scenario(a.scenario, ctx.catalog());
  app::CollectiveRequest req;
  if (!a.background.empty()) req.background = config::load_background(a.background);
  req.algos = algos;
  req.gpus = gpus;
  req.sizes = sizes;
  std::tie(req.placement, req.placement_flag) = placement_of(a);
  req.full = a.full;
  req.threads = a.threads > 0 ? a.threads : hardware_threads();
  req.trace = !a.trace.empty();
  req.explain = a.explain;
  const app::CollectiveResult res = [&] {
    progress::Meter meter(!a.quiet && ::isatty(STDERR_FILENO) != 0, "simulating", std::cerr);
    return app::run_collective(sc, ctx.catalog(), engine_choice, req);
  }();
  if (req.background) return print_beside(ctx, a, sc, *req.background, res, sizes);
  const std::vector<app::CollectiveRow>& rows = res.rows;
  if (res.trace) write_output("--trace", a.trace, [&](std::ostream& os) { report::write_chrome_trace(os, *res.trace); });
  if (a.json || a.csv) {
    // One record per row, in SI base units: the JSON rows and the CSV columns are the same.
    std::vector<Record> recs;
    for (const auto& r : rows) recs.push_back(collective_record(sc.name, a, r));
    if (a.csv) {
      write_records_csv(std::cout, recs);
      return kOk;
    }
    report::JsonWriter w(std::cout);
    begin_json(w, "collective");
    w.key("rows");
    write_records_json(w, recs);
    if (ctx.calibration_use()) {  // what --calibration applied and skipped (calib_report.hpp)
      w.key("calibration");
      write_calibration(w, ctx);
    }
    w.end_object();
    return kOk;
  }
  // The operations the rows run (allreduce, reduce-scatter, ...), in the order of --algo.
  const std::vector<std::string>& kinds = res.kinds;
  std::string ops;
  for (std::size_t i = 0; i < kinds.size(); ++i) ops += (i == 0 ? "" : i + 1 == kinds.size() ? " and " : ", ") + kinds[i];
  const bool several = sizes.size() > 1;
  const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
  std::cout << "ffsim collective on " << sc.name << ": " << ops << " of "
            << (several ? fmt_bytes(Bytes(*lo)) + " to " + fmt_bytes(Bytes(*hi)) : fmt_bytes(Bytes(sizes.front())))
            << " per GPU, " << a.engine << " engine" << placement_words(a) << "\n";
  std::vector<std::string> head{"algorithm", "GPUs", "time", "algbw", "busbw", "host mem/node", "bound by"};
  if (several) head.insert(head.begin() + 2, "size");
  report::Table t(head);
  std::string prev;
  int prev_gpus = 0;
  for (const auto& r : rows) {
    // A rule between algorithms and, in a size sweep, between GPU counts.
    if (!prev.empty() && (prev != r.algo || (several && prev_gpus != r.gpus))) t.rule();
    prev = r.algo;
    prev_gpus = r.gpus;
    std::vector<std::string> cells{r.algo, std::to_string(r.gpus), fmt_time(Seconds(r.time)), fmt_bandwidth(BytesPerSecond(r.algbw)),
                                   fmt_bandwidth(BytesPerSecond(r.busbw)), r.host > 0 ? fmt_f(r.host, 1) + " S" : "-", r.bottleneck};
    if (several) cells.insert(cells.begin() + 2, fmt_bytes(Bytes(r.bytes)));
    t.add(cells);
  }
  t.print(std::cout, "  ");
  std::cout << "  size per GPU as nccl-tests count it: the vector (allreduce, reduce-scatter, broadcast), the gathered result\n"
               "  (allgather: each GPU contributes size / n), the send buffer (alltoall, sendrecv); algbw = size / time;\n"
               "  busbw = algbw x 2(n-1)/n for allreduce, (n-1)/n for reduce-scatter, allgather and alltoall, 1 for\n"
               "  broadcast and sendrecv (nccl-tests); host mem/node: bytes read + written in host\n"
               "  memory per node, in multiples of the size S; bound by: the resource that binds the closed form's\n"
               "  bandwidth term (at small sizes the latencies and the pipeline's fill dominate the time)\n";
  // The NCCL tree's chunk is an assumption that matters at scale: say so where a row rests on it.
  const bool tree_rows = std::any_of(rows.begin(), rows.end(), [](const app::CollectiveRow& r) {
    return r.algo == "nccl_tree" || r.algo == "broadcast" ||
           (r.algo == "nccl" && r.note.find("nccl_tree, Simple") != std::string::npos);
  });
  if (tree_rows && res.tree_chunk_bytes > 0)
    std::cout << "  nccl_tree, broadcast and nccl where it picks the Simple-protocol tree pipeline "
              << fmt_bytes(Bytes(res.tree_chunk_bytes)) << " chunks, an [I] stand-in: NCCL's own rule moves "
              << fmt_bytes(Bytes(res.step_size))
              << " steps\n  (\"tree_chunk\": \"nccl\" in models/libraries/nccl.json; docs/results.md, \"NCCL's tree "
                 "chunk\")\n";
  if (!a.trace.empty()) std::cout << "  trace: " << a.trace << " (the whole schedule; open it in ui.perfetto.dev)\n";
  if (a.explain) {
    std::cout << "\nNCCL's own cost model (NCCL 2.7 tuning.cc: ring and tree x LL, LL128, Simple) behind \"nccl\":\n";
    std::vector<std::string> ehead{"GPUs",    "algorithm",           "protocol",       "channels",
                                   "latency", "algbw (NCCL's view)", "predicted time", "picked"};
    if (several) ehead.insert(ehead.begin() + 1, "size");
    report::Table e(ehead);
    int prev_n = 0;
    double prev_bytes = -1;
    for (const auto& c : res.explain->rows) {
      // A rule between the tables of each GPU count and size.
      if (prev_bytes >= 0 && (prev_n != c.gpus || prev_bytes != c.bytes)) e.rule();
      prev_n = c.gpus;
      prev_bytes = c.bytes;
      std::vector<std::string> cells{std::to_string(c.gpus),
                                     c.algorithm,
                                     c.protocol,
                                     std::to_string(c.channels),
                                     fmt_time(Seconds(c.latency)),
                                     fmt_bandwidth(BytesPerSecond(c.algbw)),
                                     fmt_time(Seconds(c.time)),
                                     c.picked    ? "yes"
                                     : c.enabled ? ""
                                                 : "off"};
      if (several) cells.insert(cells.begin() + 1, fmt_bytes(Bytes(c.bytes)));
      e.add(cells);
    }
    e.print(std::cout, "  ");
    {
      const app::NcclExplain& v = *res.explain;
      std::cout
          << "  channels: " << v.channels << " per compute NIC x " << v.nics << " NIC" << (v.nics > 1 ? "s" : "")
          << "; busBw = channels x " << fmt_bandwidth(BytesPerSecond(v.speed)) << " (per channel, the slower of the "
          << (v.intra_nvlink ? "NVLink" : "PCIe") << " hops and the NIC),\n  at most "
          << fmt_bandwidth(BytesPerSecond(v.max_bus_bw)) << "; ring LL busBw x " << fmt_g(v.ll_ring_bw_factor)
          << " (at most llMaxBw); tree busBw x " << fmt_f(v.tree_bw_factor, 2) << " (LL then / "
          << fmt_g(v.ll_tree_bw_divisor) << ");\n  LL128 x " << fmt_g(v.ll128_bw_factor) << " (x "
          << fmt_g(v.ll128_bw_factor_one_gpu_per_node) << " below 2 GPUs per node), at most channels x "
          << fmt_bandwidth(BytesPerSecond(v.ll128_max_bw_per_channel)) << "; ring algBw = busBw n / 2(n-1),\n"
          << "  tree algBw = busBw / 2 x its correction factor for the size; ring Simple latency x "
          << fmt_g(v.ring_plateau_factor) << " across nodes\n  from " << fmt_bytes(Bytes(v.ring_plateau_bytes_per_rank))
          << " per rank on (\"plateau effect of ring\"); LL128 only with NVLink inside the node (off: PCIe);\n"
             "  the pick is the least time; \"nccl\" simulates the pick in its protocol (its chunks, bytes on the\n"
             "  wire, latencies and per-channel cap); nccl_ring and nccl_tree alone run Simple\n";
      if (!v.single_rank.empty())
        std::cout << "  1 GPU: no table (NCCL runs no tuning model for one rank; its allreduce is a local copy)\n";
      std::cout << "  constants and their sources: models/libraries/nccl.json; the model: docs/nccl.md\n";
    }
    // The closed form of each algorithm: where its host-memory traffic and bound come from.
    std::cout << "\nHFReduce host-memory accounting per node (arXiv 2408.14158 Sec. IV): D2H 8 writes, reduce 8 reads +\n"
                 "  1 write, network send 2 reads, receive 2 writes, tree add 1 read, H2D 2 reads (GDRCopy) or 8 (memcpy):\n"
                 "  the model counts the bytes of its own flows; at the node's DRAM bandwidth that is the ceiling below.\n";
    for (const auto& r : rows)
      if (r.host > 0) {
        const BytesPerSecond dram(res.node_dram_bandwidth);
        std::cout << "  " << r.algo << " at " << r.gpus << " GPUs" << (several ? ", " + fmt_bytes(Bytes(r.bytes)) : std::string()) << ": " << fmt_f(r.host, 1) << " S per node -> ceiling "
                  << fmt_bandwidth(BytesPerSecond(dram.si() / r.host)) << " (" << fmt_bandwidth(dram) << " / " << fmt_f(r.host, 1)
                  << "); " << (!caps.simulates ? "closed form " : "simulated ") << fmt_bandwidth(BytesPerSecond(r.algbw))
                  << ", held below it by " << r.bottleneck << "\n";
      }
  }
  print_calibration(std::cout, ctx);
  return kOk;
}

}  // namespace

void setup_collective(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("collective", "Allreduce algorithms on the simulated cluster: time, algbw, busbw, bound");
  auto a = std::make_shared<CollArgs>();
  ctx.expects(sub->add_option("scenario", a->scenario, "Scenario JSON file")->required()->check(input_file()),
              "a scenario file");
  ctx.expects(sub->add_option("--algo", a->algos, "Comma-separated algorithms: " + join(app::algorithm_names())),
              "a comma-separated list of algorithms (" + join(app::algorithm_names()) + ")");
  ctx.expects(sub->add_option("--gpus", a->gpus, "Comma-separated GPU counts (default 16,32,64,128)"),
              "a comma-separated list of positive GPU counts");
  ctx.expects(sub->add_option("--size", a->size,
                              "Bytes per GPU (default 184MiB); a comma-separated list, and FIRST:LAST for every FIRST x 2^k up "
                              "to LAST (nccl-tests' -b FIRST -e LAST -f 2), e.g. 1MiB:1GiB"),
              "a size with a unit (e.g. 184MiB), a list or a range FIRST:LAST");
  ctx.expects(sub->add_option("--engine", a->engine, "closed-form (analytic, the default, is its former name here), fluid (max-min simulation), fluid-full (the same, each solve over a whole component, for comparisons), fluid-eager (also without lazy constraints: the plain solve) or simgrid"),
              "closed-form, fluid, fluid-full, fluid-eager, simgrid or analytic");
  sub->add_flag("--cross-zone", a->cross_zone, "Place half of the nodes in each of the first two zones (--placement cross-zone:0.5)");
  ctx.expects(sub->add_option("--placement", a->placement,
                              "Where the nodes are: packed (the first nodes: the default), spread (evenly over the first "
                              "zone, or the cluster when the job does not fit one zone), cross-zone[:SHARE] (SHARE of the "
                              "nodes in the first zone, default 0.5), random[:SEED] (default 1); simulating engines only "
                              "(the closed form sees no routes)"),
              "packed, spread, cross-zone[:SHARE] or random[:SEED]");
  auto* json = sub->add_flag("--json", a->json, "Machine-readable output (not with --explain)");
  json->excludes(sub->add_flag("--csv", a->csv, "CSV of the same rows, SI units (not with --explain)"));
  sub->add_flag("--explain", a->explain, "Print NCCL's own cost table and the host-memory ceiling (not with --json)");
  sub->add_flag(
      "--quiet", a->quiet,
      "No progress line on stderr (shown only where stderr is a terminal, for runs longer than half a second)");
  sub->add_flag("--full", a->full, "Simulate the whole schedule, without the exact shortcuts (identical ring steps)");
  ctx.expects(sub->add_option("--threads", a->threads,
                              "Simulate the rows on this many threads at once (fluid engines; default: the machine's hardware "
                              "threads; the results do not depend on it)")
                  ->check(int_in(1, 4096)),
              "an integer in [1, 4096]");
  ctx.expects(
      sub->add_option("--background", a->background,
                      "Run a background document (kind \"background\": e.g. a checkpoint storm) beside each row's "
                      "collective, alone and under three arbitrations: the scenario's weights, equal weights, no "
                      "isolation (a simulating engine)")
          ->check(input_file()),
      "a background file");
  ctx.expects(sub->add_option("--trace", a->trace,
                              "Write a Chrome/Perfetto trace of the run (one --algo, one --gpus count, a simulated engine)"),
              "a file name");
  sub->callback([&ctx, a] {
    ctx.action = [&ctx, a] { return run_collective(ctx, *a); };
    ctx.sweep = std::make_shared<SweepHook>();
    ctx.sweep->rows = [a](Context& c, const config::Document& doc, int threads) {
      return sweep_collective(c, *a, doc, threads);
    };
    ctx.sweep->check = [a] { (void)sweep_check_collective(*a); };
    ctx.sweep->columns = [a] {
      std::vector<std::string> keys;
      for (const auto& kv : collective_record("", *a, app::CollectiveRow{})) keys.push_back(kv.first);
      keys.pop_back();  // wall_s
      return keys;
    };
  });
}

}  // namespace ffsim::cli
