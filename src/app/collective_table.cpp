// The `collective` service.
// SPDX-License-Identifier: Apache-2.0
#include "app/collective_table.hpp"

#include "coll/placement.hpp"
#include "config/background_reader.hpp"
#include "config/coll_reader.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <limits>

#include "coll/collective.hpp"
#include "coll/nccl_select.hpp"
#include "coll/placement.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/parallel.hpp"
#include "core/size_guard.hpp"
#include "report/trace.hpp"

namespace ffsim::app {

std::vector<std::string> algorithm_names() { return coll::algorithms().names(); }

void check_algorithm(const std::string& name) {
  if (!coll::algorithms().find(name)) throw UsageError("--algo: " + coll::algorithms().unknown_message(name));
}

const char* arbitration_name(Arbitration a) {
  switch (a) {
    case Arbitration::Scenario: return "scenario";
    case Arbitration::Equal: return "equal";
    case Arbitration::None: return "none";
  }
  return "";
}

platform::TrafficConfig arbitration_traffic(const platform::TrafficConfig& t, Arbitration a) {
  platform::TrafficConfig r = t;
  switch (a) {
    case Arbitration::Scenario: break;
    case Arbitration::Equal:  // the same lanes, each of weight 1 (without isolation: one lane already)
      for (double& w : r.lane_weight) w = 1.0;
      break;
    case Arbitration::None:  // what parse_traffic makes of "isolation": false
      r.isolation = false;
      r.lane_weight = {1.0};
      r.lane_of_sl.fill(0);
      break;
  }
  return r;
}

namespace {

// The collective's end in a run of its schedule with more ops after its own: the latest end of
// ops [0, n).
double collective_end(const eval::Result& r, std::size_t n) {
  double t = 0;
  for (std::size_t i = 0; i < n; ++i) t = std::max(t, r.ops[i].end);
  return t;
}

// The group of a row: the request's placement of `gpus` GPUs (packed: the first GPUs).
coll::Group make_group(const platform::Platform& p, int gpus, const CollectiveRequest& req) {
  return coll::place_group(p, gpus, req.placement, req.placement_flag);
}

}  // namespace

Footprint collective_footprint(const plan::ScenarioSpec& sc, const coll::LibraryParams& lib, const EngineChoice& engine,
                               const CollectiveRequest& req, double* largest_ops, std::string* largest_row) {
  const hw::NodeSpec& node = sc.cluster.node;
  const int per = static_cast<int>(node.gpus.size());
  Footprint f;
  f.bytes = plan::platform_size(sc.cluster, sc.fabric).bytes;
  std::vector<double> row_bytes;
  double most = 0;
  for (const auto& name : req.algos) {
    const auto algo = coll::algorithms().get(name).factory();
    for (int n : req.gpus) {
      const coll::GroupShape q = coll::GroupShape::first_gpus(n, per, static_cast<int>(node.sockets.size()),
                                                              node.compute_nics(), node.nvlink.kind != "none");
      for (double bytes : req.sizes) {
        const double per_rank = algo->kind() == coll::Kind::AllGather ? bytes / n : bytes;
        // A trace runs the whole schedule (no shortcut), as --full does.
        const double ops = engine.caps.simulates ? algo->schedule_ops(lib, q, per_rank, req.full || req.trace) : 0.0;
        f.ops += ops;
        row_bytes.push_back(ops * engine.caps.bytes_per_op);
        if (ops > most) {
          most = ops;
          if (largest_row) *largest_row = name + " at " + fmt_int(n) + " GPUs, " + fmt_bytes(Bytes(bytes));
        }
      }
    }
  }
  // Rows side by side (threads) hold their schedules at once: the largest `threads` of them.
  const bool side_by_side = engine.caps.parallel_safe && req.threads > 1;
  const std::size_t at_once =
      side_by_side ? std::min<std::size_t>(row_bytes.size(), static_cast<std::size_t>(req.threads)) : 1;
  std::sort(row_bytes.begin(), row_bytes.end(), std::greater<>());
  for (std::size_t i = 0; i < at_once && i < row_bytes.size(); ++i) f.bytes += row_bytes[i];
  if (largest_ops) *largest_ops = most;
  return f;
}

CollectiveResult run_collective(const plan::ScenarioSpec& sc, const config::Catalog& cat,
                                const EngineChoice& engine_choice, const CollectiveRequest& req) {
  const coll::LibraryParams lib = config::load_library_params(cat);
  // The size guard, before the platform and any schedule are built: GPU counts first (a usage
  // error), then the request's estimate against --max-memory and a schedule's 2^23 operations.
  for (int n : req.gpus)
    if (n > sc.cluster.gpus())
      throw UsageError("--gpus: " + std::to_string(n) + " exceeds the cluster's " + std::to_string(sc.cluster.gpus()) +
                       " GPUs");
  {
    double largest = 0;
    std::string row;
    const Footprint f = collective_footprint(sc, lib, engine_choice, req, &largest, &row);
    const auto max_ops = static_cast<double>(sched::Schedule::kMaxOps);
    if (oversized(f, largest, max_ops)) {
      const std::size_t rows = req.algos.size() * req.gpus.size() * req.sizes.size();
      const auto [lo, hi] = std::minmax_element(req.sizes.begin(), req.sizes.end());
      std::string gpus;
      for (std::size_t i = 0; i < req.gpus.size(); ++i) gpus += (i ? "," : "") + std::to_string(req.gpus[i]);
      std::string algos;
      for (std::size_t i = 0; i < req.algos.size(); ++i) algos += (i ? "," : "") + req.algos[i];
      refuse_oversized(
          "collective " + algos + " on " + gpus + " GPUs, " +
              (req.sizes.size() > 1 ? fmt_int(static_cast<long long>(req.sizes.size())) + " sizes from " +
                                          fmt_bytes(Bytes(*lo)) + " to " + fmt_bytes(Bytes(*hi))
                                    : fmt_bytes(Bytes(*hi))) +
              " (" + fmt_int(static_cast<long long>(rows)) + (rows == 1 ? " simulation" : " simulations") + ", " +
              engine_choice.label + " engine)",
          f,
          "the largest, " + row + ": " + fmt_g(largest, 3) + " operations; a schedule holds at most " +
              fmt_int(static_cast<long long>(max_ops)),
          "give fewer or smaller sizes (--size), fewer GPUs (--gpus), or the closed form (--engine analytic), which "
          "builds no schedule",
          largest > max_ops);
    }
  }
  const auto p = plan::make_platform(sc);
  // The engine of --engine (none for the closed form).
  auto make_engine = [&] { return engine_choice.make(); };
  const std::unique_ptr<eval::Engine> engine = make_engine();

  // The rows in order (algorithm, GPU count, size); checked here, run below.
  struct Job {
    std::string name;
    int gpus;
    coll::Group group;
    double bytes, per_rank;
  };
  std::vector<Job> jobs;
  for (const auto& name : req.algos) {
    const auto algo = coll::algorithms().get(name).factory();
    for (int n : req.gpus) {
      // --size is nccl-tests' size: an allgather's gathered result, so each rank contributes
      // size / n; every other kind takes it per rank as it is.
      const coll::Group group = make_group(*p, n, req);
      for (double bytes : req.sizes)
        jobs.push_back({name, n, group, bytes, algo->kind() == coll::Kind::AllGather ? bytes / n : bytes});
    }
  }
  CollectiveResult out;
  std::vector<CollectiveRow>& rows = out.rows;
  rows.resize(jobs.size());
  auto run_row = [&](std::size_t i, eval::Engine* e, const platform::Platform& pf) {
    const Job& j = jobs[i];
    const auto algo = coll::algorithms().get(j.name).factory();
    const auto t0 = std::chrono::steady_clock::now();
    coll::Estimate est;
    try {
      est = algo->estimate(pf, lib, j.group, j.per_rank);
    } catch (const ValueError& err) {
      // A group the algorithm cannot run on is a usage error of this command.
      throw UsageError("--algo " + j.name + " --gpus " + std::to_string(j.gpus) + ": " + err.what());
    }
    const double t = !e ? est.time
                     : req.full ? algo->simulate_full(*e, pf, lib, j.group, j.per_rank)
                                : algo->simulate(*e, pf, lib, j.group, j.per_rank);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double algbw = t > 0 ? j.bytes / t : 0;
    rows[i] = {j.name,
               j.gpus,
               j.bytes,
               t,
               algbw,
               algbw * coll::busbw_factor(algo->kind(), j.gpus),
               est.host_traffic_per_byte,
               wall,
               est.bottleneck,
               est.note,
               sched::TrafficClass::Other,
               {}};
  };
  if (req.background) {
    if (!engine)
      throw UsageError(
          "--background: the background's flows run in a simulation beside the collective's, and the closed form "
          "simulates nothing: add --engine fluid (or simgrid)");
    if (req.trace || req.explain)
      throw UsageError(std::string(req.trace ? "--trace" : "--explain") +
                       " does not combine with --background (drop one)");
    const platform::BackgroundSpec& bg = *req.background;
    config::check_background_fits(bg, *p);
    // The platforms of the three arbitrations (the scenario's is p).
    std::array<std::unique_ptr<platform::Platform>, kArbitrations> pa;
    for (int a = 1; a < kArbitrations; ++a) {
      plan::ScenarioSpec s2 = sc;
      s2.traffic = arbitration_traffic(sc.traffic, static_cast<Arbitration>(a));
      pa[static_cast<std::size_t>(a)] = plan::make_platform(s2);
    }
    auto platform_of = [&](int a) -> const platform::Platform& {
      return a == 0 ? *p : *pa[static_cast<std::size_t>(a)];
    };
    // Each row's whole schedule (no shortcut: the background's flows share its every step), run
    // alone on the scenario's platform, then with the background beside it on each arbitration's.
    std::vector<sched::Schedule> scheds(jobs.size());
    std::vector<double> walls(jobs.size() * (kArbitrations + 1));  // by row: alone, then each arbitration
    auto alone = [&](std::size_t i, eval::Engine& e) {
      const Job& j = jobs[i];
      const auto algo = coll::algorithms().get(j.name).factory();
      const auto t0 = std::chrono::steady_clock::now();
      coll::Estimate est;
      try {
        est = algo->estimate(*p, lib, j.group, j.per_rank);
      } catch (const ValueError& err) {
        throw UsageError("--algo " + j.name + " --gpus " + std::to_string(j.gpus) + ": " + err.what());
      }
      sched::Schedule& s = scheds[i];
      (void)algo->emit(s, *p, lib, j.group, j.per_rank, coll::Options{});
      const double t = collective_end(e.run(s, *p), s.size());
      const double algbw = t > 0 ? j.bytes / t : 0;
      CollectiveRow& r = rows[i];
      r = {j.name,
           j.gpus,
           j.bytes,
           t,
           algbw,
           algbw * coll::busbw_factor(algo->kind(), j.gpus),
           est.host_traffic_per_byte,
           0,
           est.bottleneck,
           est.note,
           sched::TrafficClass::Other,
           {}};
      for (sched::OpId k = 0; k < s.size(); ++k)
        if (s.op(k).kind == sched::OpKind::Transfer) {
          r.cls = s.op(k).cls;
          break;
        }
      r.beside.resize(kArbitrations);
      walls[i * (kArbitrations + 1)] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    auto beside = [&](std::size_t k, eval::Engine& e) {
      const std::size_t i = k / kArbitrations;
      const int a = static_cast<int>(k % kArbitrations);
      const auto t0 = std::chrono::steady_clock::now();
      const Job& j = jobs[i];
      CollectiveRow& r = rows[i];
      const platform::Platform& pf = platform_of(a);
      const std::size_t n = scheds[i].size();
      // The background must outlast the collective: each of its flows carries its cap times the
      // horizon, so it runs at least that long; the horizon starts at 4 times the collective's time
      // alone and grows until every background flow ends after the collective (checked, not assumed).
      double horizon = std::max(4 * r.time, 1e-6);
      for (int attempt = 0;; ++attempt) {
        sched::Schedule s = scheds[i];
        const std::vector<sched::OpId> bg_ops = platform::add_background(s, pf, bg, horizon);
        const eval::Result res = e.run(s, pf);
        const double t = collective_end(res, n);
        double first_end = std::numeric_limits<double>::infinity();
        for (const sched::OpId o : bg_ops) first_end = std::min(first_end, res.ops[o].end);
        if (first_end > t) {
          BesideRun& b = r.beside[static_cast<std::size_t>(a)];
          b.arbitration = static_cast<Arbitration>(a);
          b.collective_weight = pf.traffic().weight(r.cls);
          b.background_weight = pf.traffic().weight(bg.streams.front().cls);
          b.time = t;
          b.algbw = t > 0 ? j.bytes / t : 0;
          b.busbw = b.algbw * coll::busbw_factor(coll::algorithms().get(j.name).factory()->kind(), j.gpus);
          b.slowdown = r.time > 0 ? t / r.time : 1;
          b.horizon = horizon;
          b.background_end = first_end;
          break;
        }
        if (attempt == 8)
          throw SimulationError("the background of " + bg.file + " ended before the " + j.name +
                                " collective beside it, " + "even at a horizon of " + fmt_time(Seconds(horizon)));
        horizon *= 4;
      }
      walls[i * (kArbitrations + 1) + 1 + static_cast<std::size_t>(a)] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    // Fluid engines run side by side (each run on its own engine); SimGrid one run at a time.
    // wall_s sums a row's four runs (with threads, each while the others run beside it).
    if (engine_choice.caps.parallel_safe && req.threads > 1) {
      parallel_for(jobs.size(), req.threads, [&](std::size_t i) { alone(i, *make_engine()); });
      parallel_for(jobs.size() * kArbitrations, req.threads, [&](std::size_t k) { beside(k, *make_engine()); });
    } else {
      for (std::size_t i = 0; i < jobs.size(); ++i) alone(i, *engine);
      for (std::size_t k = 0; k < jobs.size() * kArbitrations; ++k) beside(k, *engine);
    }
    for (std::size_t i = 0; i < jobs.size(); ++i)
      for (int k = 0; k <= kArbitrations; ++k)
        rows[i].wall += walls[i * (kArbitrations + 1) + static_cast<std::size_t>(k)];
  } else if (engine && engine_choice.caps.parallel_safe && req.threads > 1 && jobs.size() > 1) {
    // The fluid engine keeps no state between runs: simulated rows run at once, one per hardware
    // thread, each on its own engine, all on the one platform (its router is thread-safe; the same
    // results as one after the other; wall_s is then each row's own time while the others run beside it).
    parallel_for(jobs.size(), req.threads, [&](std::size_t i) {
      const std::unique_ptr<eval::Engine> e = make_engine();
      run_row(i, e.get(), *p);
    });
  } else {
    for (std::size_t i = 0; i < jobs.size(); ++i) run_row(i, engine.get(), *p);
  }
  if (req.trace) {
    // The whole schedule (no shortcut), every op on its tracks (one row: checked by the caller).
    const Job& j = jobs.front();
    const auto algo = coll::algorithms().get(j.name).factory();
    sched::Schedule s;
    (void)algo->emit(s, *p, lib, j.group, j.per_rank, coll::Options{});
    const eval::Result res = engine->run(s, *p);
    out.trace = report::schedule_trace(s, res, *p, j.name + " of " + fmt_bytes(Bytes(j.bytes)) + " over " + std::to_string(j.gpus) +
                                                       " GPUs on " + sc.name + " (" + engine_choice.label + " engine)");
  }
  for (const auto& name : req.algos) {
    const std::string k = coll::kind_name(coll::algorithms().get(name).factory()->kind());
    if (std::find(out.kinds.begin(), out.kinds.end(), k) == out.kinds.end()) out.kinds.push_back(k);
  }
  out.tree_chunk_bytes = lib.nccl.tree_chunk_bytes;
  out.step_size = lib.nccl.step_size;
  BytesPerSecond dram(0);
  for (const auto& sk : sc.cluster.node.sockets) dram += sk.dram_bandwidth;
  out.node_dram_bandwidth = dram.si();
  if (req.explain) {
    NcclExplain x;
    for (int n : req.gpus) {
      const coll::Group g = make_group(*p, n, req);
      for (double bytes : req.sizes) {
        const auto table = coll::nccl_cost_table(*p, lib, g, bytes);
        if (table.empty()) {
          if (std::find(x.single_rank.begin(), x.single_rank.end(), n) == x.single_rank.end())
            x.single_rank.push_back(n);
          continue;
        }
        const coll::NcclPick pick = coll::nccl_pick(table);
        for (const auto& c : table)
          x.rows.push_back({n, bytes, c.algorithm, coll::protocol_name(c.protocol), c.channels, c.latency, c.algbw,
                            c.time, c.enabled, c.algorithm == pick.algorithm && c.protocol == pick.protocol});
      }
    }
    const auto v = coll::nccl_view(*p, lib, make_group(*p, req.gpus.front(), req));
    x.channels = lib.nccl.channels;
    x.nics = v.nics;
    x.speed = v.speed;
    x.intra_nvlink = v.intra_nvlink;
    x.max_bus_bw = lib.nccl.max_bus_bw;
    x.tree_bw_factor = lib.nccl.tree_bw_factor;
    x.ring_plateau_factor = lib.nccl.ring_plateau_factor;
    x.ring_plateau_bytes_per_rank = lib.nccl.ring_plateau_bytes_per_rank;
    x.ll_ring_bw_factor = lib.nccl.ll_ring_bw_factor;
    x.ll_tree_bw_divisor = lib.nccl.ll_tree_bw_divisor;
    x.ll128_bw_factor = lib.nccl.ll128_bw_factor;
    x.ll128_bw_factor_one_gpu_per_node = lib.nccl.ll128_bw_factor_one_gpu_per_node;
    x.ll128_max_bw_per_channel = lib.nccl.ll128_max_bw_per_channel;
    out.explain = std::move(x);
  }
  return out;
}

}  // namespace ffsim::app
