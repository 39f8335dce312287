// The `collective` service.
// SPDX-License-Identifier: Apache-2.0
#include "app/collective_table.hpp"
#include "config/coll_reader.hpp"

#include <algorithm>
#include <chrono>

#include "coll/collective.hpp"
#include "coll/nccl_select.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/parallel.hpp"
#include "report/trace.hpp"

namespace ffsim::app {

std::vector<std::string> algorithm_names() { return coll::algorithms().names(); }

void check_algorithm(const std::string& name) {
  if (!coll::algorithms().find(name)) throw UsageError("--algo: " + coll::algorithms().unknown_message(name));
}

namespace {

// The first `gpus` GPUs, or with cross_zone half of the nodes from each of the first two zones.
coll::Group make_group(const platform::Platform& p, int gpus, bool cross_zone) {
  if (!cross_zone) return coll::Group::first_gpus(p, gpus);
  const int per = static_cast<int>(p.cluster().node.gpus.size());
  if (gpus % per != 0) throw UsageError("--cross-zone needs whole nodes: " + std::to_string(gpus) + " GPUs is not a multiple of " + std::to_string(per));
  const int nodes = gpus / per;
  if (nodes < 2)
    throw UsageError("--cross-zone: " + std::to_string(gpus) + " GPUs are one node, which sits in one zone; a group across "
                     "two zones needs at least 2 nodes (" + std::to_string(2 * per) + " GPUs)");
  int second = -1;
  const auto* f = p.fabric();
  const int z0 = f->endpoints()[static_cast<std::size_t>(p.endpoint_of(sched::Place::nic(0, p.nic_for(sched::Place::dram(0, 0)))))].zone;
  for (int v = 0; v < p.cluster().nodes && second < 0; ++v)
    if (f->endpoints()[static_cast<std::size_t>(p.endpoint_of(sched::Place::nic(v, p.nic_for(sched::Place::dram(v, 0)))))].zone != z0)
      second = v;
  if (second < 0) throw UsageError("--cross-zone: the scenario's fabric has a single zone");
  const int a = (nodes + 1) / 2, b = nodes - a;
  if (a > second || second + b > p.cluster().nodes) throw UsageError("--cross-zone: not enough nodes in the zones");
  coll::Group g;
  for (int v = 0; v < a; ++v)
    for (int l = 0; l < per; ++l) g.ranks.push_back(sched::Place::gpu(v, l));
  for (int v = 0; v < b; ++v)
    for (int l = 0; l < per; ++l) g.ranks.push_back(sched::Place::gpu(second + v, l));
  return g;
}

}  // namespace

CollectiveResult run_collective(const plan::ScenarioSpec& sc, const config::Catalog& cat, const EngineChoice& engine_choice,
                                const CollectiveRequest& req) {
  const auto p = plan::make_platform(sc);
  const coll::LibraryParams lib = config::load_library_params(cat);
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
      if (n > sc.cluster.gpus()) throw UsageError("--gpus: " + std::to_string(n) + " exceeds the cluster's " + std::to_string(sc.cluster.gpus()) + " GPUs");
      // --size is nccl-tests' size: an allgather's gathered result, so each rank contributes
      // size / n; every other kind takes it per rank as it is.
      const coll::Group group = make_group(*p, n, req.cross_zone);
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
    rows[i] = {j.name, j.gpus, j.bytes, t, algbw, algbw * coll::busbw_factor(algo->kind(), j.gpus), est.host_traffic_per_byte, wall,
               est.bottleneck, est.note};
  };
  // The fluid engine keeps no state between runs: simulated rows run at once, one per hardware
  // thread, each on its own engine, all on the one platform (its router is thread-safe; the same
  // results as one after the other; wall_s is then each row's own time while the others run beside it).
  if (engine && engine_choice.caps.parallel_safe && req.threads > 1 && jobs.size() > 1) {
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
      const coll::Group g = make_group(*p, n, req.cross_zone);
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
    const auto v = coll::nccl_view(*p, lib, make_group(*p, req.gpus.front(), req.cross_zone));
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
