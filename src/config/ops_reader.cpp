// JSON -> the parameters of `ffsim ops`.
// SPDX-License-Identifier: Apache-2.0
#include "config/ops_reader.hpp"

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/spell.hpp"

namespace ffsim::config {

namespace {

namespace fs = std::filesystem;

// Times of operations: from a millisecond (a restart is never shorter) to a century.
constexpr PlausibleRange kOpsTime{
    1e-3,
    100 * 365.0 * 86400,
    "1 ms",
    "100 d x 365",
    "operations time",
    "job lengths, checkpoint and repair times and horizons lie between milliseconds and years"};

// A job's "placement": "packed", "spread" or "random[:SEED]" (the vocabulary of `--placement`; the
// scheduler decides which jobs cross zones, so "cross-zone" has no meaning here).
void parse_job_placement(const Reader& pl, ops::JobSpec& j) {
  const std::string forms = "\"packed\" (the default), \"spread\" or \"random[:SEED]\"";
  if (!pl.is_string()) pl.fail("expected a placement, " + forms + ", got " + pl.describe());
  const std::string v = pl.as_string();
  if (v == "packed") {
    j.placement = ops::JobSpec::Placement::Packed;
  } else if (v == "spread") {
    j.placement = ops::JobSpec::Placement::Spread;
  } else if (v == "random" || v.rfind("random:", 0) == 0) {
    j.placement = ops::JobSpec::Placement::Random;
    if (v.size() > 7) {
      const std::string seed = v.substr(7);
      const bool digits =
          !seed.empty() && seed.size() <= 19 && seed.find_first_not_of("0123456789") == std::string::npos;
      if (!digits)
        pl.fail("expected random:SEED with SEED a non-negative integer (e.g. \"random:7\"), got \"" + v + "\"");
      j.placement_seed = std::stoull(seed);
    }
  } else if (v.rfind("cross-zone", 0) == 0) {
    pl.fail("\"" + v +
            "\" is for collective and train: in ops the scheduler decides which job crosses zones (one at a "
            "time, of at least \"cross_zone_min_gpus\" GPUs); give " +
            forms);
  } else {
    pl.fail("unknown placement \"" + v + "\"" + did_you_mean(v, {"packed", "spread", "random"}) + "; give " + forms);
  }
}

ops::JobSpec parse_job(const Reader& r, const ops::ClusterShape& c) {
  ops::JobSpec j;
  j.name = r.name("name");
  r.allow({"description", "source"});
  j.gpus = static_cast<int>(r.integer("gpus", 1, 1 << 24));
  if (c.gpus() > 0 && j.gpus > c.gpus())
    r.fail_at("gpus", "job \"" + j.name + "\" needs " + std::to_string(j.gpus) + " GPUs; the cluster has " +
                          std::to_string(c.gpus()) + " (" + std::to_string(c.nodes) + " nodes x " +
                          std::to_string(c.gpus_per_node) + "); give at most " + std::to_string(c.gpus()));
  const bool dur = r.has("duration"), steps = r.has("steps");
  if (dur == steps)
    r.fail(dur ? "give \"duration\" or \"steps\" (with \"step_time\"), not both"
               : "missing the job's length: give \"duration\" (e.g. \"30d\") or \"steps\" with \"step_time\"");
  if (dur) {
    j.work_s = r.fact_quantity<Seconds>("duration", false, &kOpsTime).si();
    if (r.has("step_time")) r.fail_at("step_time", "\"step_time\" goes with \"steps\", not with \"duration\"");
    if (r.has("workload"))
      r.fail_at("workload", "\"workload\" gives the step time of \"steps\": give \"steps\" in place of \"duration\"");
  } else {
    const auto n = r.fact_integer("steps", 1, std::int64_t{1} << 50);
    if (r.has("workload")) {
      // The step time comes from the workload at the job's GPU count (app/ops.cpp).
      if (r.has("step_time"))
        r.fail_at("step_time", "give \"step_time\" or \"workload\" (whose step time is computed), not both");
      const Reader wl = r.child("workload");
      const std::string given = wl.as_string();
      const fs::path path = fs::path(r.file()).parent_path() / given;
      std::error_code ec;
      if (given.empty() || !fs::is_regular_file(path, ec))
        wl.fail(
            "expected a scenario file with a \"workload\" section (a path relative to this file, e.g. "
            "\"train-llama13b-pp.json\" beside it), got \"" +
            given + "\": " + path.lexically_normal().string() + " is not a file");
      j.workload = path.lexically_normal().string();
      j.steps = n;
    } else {
      const double st = r.fact_quantity<Seconds>("step_time", false, &kOpsTime).si();
      j.work_s = static_cast<double>(n) * st;
    }
  }
  j.submit_s = r.optional_fact_quantity<Seconds>("submit", true, &kOpsTime).value_or(Seconds(0)).si();
  j.count = static_cast<int>(r.integer_or("count", 1, 1, 1 << 20));
  j.repeat = r.boolean_or("repeat", false);
  if (auto ar = r.optional_child("arrivals")) {
    // A Poisson stream of instances: {"rate_per_hour": R, "from": T0, "until": T1}.
    if (!ar->is_object())
      ar->fail("expected the arrivals {\"rate_per_hour\": R, \"from\": T, \"until\": T}, got " + ar->describe());
    for (const char* k : {"count", "repeat", "submit"})
      if (r.has(k))
        r.fail_at(k, std::string("a job with \"arrivals\" has no \"") + k +
                         "\": each arrival is one instance; give the arrivals' start as \"arrivals\": {\"from\": ...}");
    ar->allow({"description", "source"});
    j.arrival_rate_per_hour = ar->fact_number("rate_per_hour", 0, 1e6);
    if (!(j.arrival_rate_per_hour > 0))
      ar->fail_at("rate_per_hour",
                  "expected a rate > 0 of arrivals per hour, got 0 (for a job submitted once, leave "
                  "\"arrivals\" out)");
    j.submit_s = ar->optional_fact_quantity<Seconds>("from", true, &kOpsTime).value_or(Seconds(0)).si();
    if (auto until = ar->optional_fact_quantity<Seconds>("until", false, &kOpsTime)) {
      j.arrivals_until_s = until->si();
      if (!(j.arrivals_until_s > j.submit_s))
        ar->fail_at("until", "the arrivals end (at " + fmt_g(j.arrivals_until_s / 3600.0) +
                                 " h) before they begin (at " + fmt_g(j.submit_s / 3600.0) +
                                 " h); give \"until\" after \"from\"");
    }
    ar->finish();
  }
  j.restart_cost_s = r.optional_fact_quantity<Seconds>("restart_cost", true, &kOpsTime).value_or(Seconds(0)).si();
  if (auto pl = r.optional_child("placement")) parse_job_placement(*pl, j);
  if (auto ck = r.optional_child("checkpoint")) {
    if (ck->is_string()) {
      if (ck->as_string() != "none") ck->fail("expected a checkpoint policy object or \"none\", got " + ck->describe());
    } else {
      j.checkpoint_interval_s = ck->fact_quantity<Seconds>("interval", false, &kOpsTime).si();
      j.checkpoint_through_fabric = ck->choice_or("through", {"closed-form", "fabric"}, "closed-form") == "fabric";
      const bool cost = ck->has("cost"), size = ck->has("size");
      if (cost == size)
        ck->fail(cost ? "give \"cost\" or \"size\" (with \"write_bandwidth_per_node\"), not both"
                      : "missing the checkpoint's cost: give \"cost\" (a time) or \"size\" (the job's checkpoint, all "
                        "nodes together) with \"write_bandwidth_per_node\"");
      if (cost && j.checkpoint_through_fabric)
        ck->fail_at("cost",
                    "\"through\": \"fabric\" times the checkpoint's write through the fabric, from its size: give "
                    "\"size\" and \"write_bandwidth_per_node\" in place of \"cost\"");
      if (!j.checkpoint_through_fabric)
        for (const char* k : {"targets_per_node", "read_bandwidth_per_node"})
          if (ck->has(k))
            ck->fail_at(k,
                        std::string("\"") + k + "\" goes with \"through\": \"fabric\"; add it or drop \"" + k + "\"");
      if (cost) {
        j.checkpoint_cost_s = ck->fact_quantity<Seconds>("cost", true, &kOpsTime).si();
      } else if (ck->child("size").is_string() && ck->child("size").as_string() == "model") {
        // The model's weights and optimizer state, from the job's workload (app/ops.cpp).
        if (j.workload.empty())
          ck->fail_at("size",
                      "\"model\" takes the checkpoint's size from the job's \"workload\", and the job has "
                      "none; give a size (e.g. \"182GB\") or a \"workload\"");
        j.checkpoint_size_from_model = true;
        j.checkpoint_bw_per_node = ck->fact_quantity<BytesPerSecond>("write_bandwidth_per_node").si();
      } else {
        const double bytes = ck->fact_quantity<Bytes>("size", false, &plausible::kMemory).si();
        const double bw = ck->fact_quantity<BytesPerSecond>("write_bandwidth_per_node").si();
        const int nodes = c.gpus_per_node > 0 ? (j.gpus + c.gpus_per_node - 1) / c.gpus_per_node : 1;
        j.checkpoint_bytes = bytes;
        j.checkpoint_bw_per_node = bw;
        j.checkpoint_cost_s = bytes / (bw * nodes);  // every node of the job writes its share at once
      }
      if (j.checkpoint_through_fabric) {
        // app/ops.cpp replaces the cost with the fabric's time once the platform is built.
        j.checkpoint_targets_per_node = static_cast<int>(ck->integer_or("targets_per_node", 1, 1, 1 << 16));
        j.checkpoint_read_bw_per_node = ck->optional_fact_quantity<BytesPerSecond>("read_bandwidth_per_node")
                                            .value_or(BytesPerSecond(j.checkpoint_bw_per_node))
                                            .si();
      }
      ck->finish();
    }
  }
  r.finish();
  return j;
}

// A failure process's bursts: {"size": N or {"mean": M}, "spread": T} over `units` units.
void parse_burst(const Reader& b, ops::FailureSpec& s, long long units) {
  if (!b.is_object()) b.fail("expected a burst {\"size\": N or {\"mean\": M}, \"spread\": T}, got " + b.describe());
  b.allow({"description", "source"});
  const Reader size = b.child("size", "the units a burst hits: N, or {\"mean\": M}");
  const std::string what = s.unit == ops::FailureUnit::Gpu    ? "GPUs"
                           : s.unit == ops::FailureUnit::Node ? "nodes"
                                                              : "node links";
  if (size.is_object() && size.has("mean")) {
    size.allow({"description", "source"});
    s.burst_mean = size.fact_number("mean", 1, 1e9);
    if (s.burst_mean > static_cast<double>(units))
      size.fail_at("mean", "a burst hits distinct units, and the cluster has " + std::to_string(units) + " " + what +
                               "; give a mean of at most " + std::to_string(units));
    size.finish();
  } else {
    s.burst_size = static_cast<int>(b.fact_integer("size", 1, 1 << 30));
    if (s.burst_size > units)
      b.fail_at("size", "a burst hits distinct units, and the cluster has " + std::to_string(units) + " " + what +
                            "; give at most " + std::to_string(units) + " (or {\"mean\": M})");
  }
  if (!b.has("spread"))
    b.fail(
        "missing the burst's \"spread\": the time within which its units fail (e.g. \"10min\"; \"0s\": all at once)");
  s.burst_spread_s = b.fact_quantity<Seconds>("spread", true, &kOpsTime).si();
  b.finish();
}

}  // namespace

std::vector<ops::JobSpec> parse_ops_jobs(const Reader& r, const ops::ClusterShape& c) {
  std::vector<ops::JobSpec> jobs;
  std::set<std::string> names;
  const auto items = r.elements("jobs");
  if (items.empty()) r.fail("expected at least one job, got an empty array");
  for (const auto& e : items) {
    jobs.push_back(parse_job(e, c));
    if (!names.insert(jobs.back().name).second)
      e.fail_at("name", "job name \"" + jobs.back().name + "\" is used twice");
  }
  return jobs;
}

std::vector<ops::JobSpec> load_ops_jobs(const std::string& path, const ops::ClusterShape& c) {
  const Document d = Document::load(path, false);
  const Reader r = d.root();
  if (!r.is_object()) r.fail("expected a job mix object {\"jobs\": [...]}, got " + r.describe());
  r.allow({"description"});
  auto jobs = parse_ops_jobs(r.child("jobs", "an array of jobs"), c);
  r.finish();
  return jobs;
}

ops::OpsParams parse_ops(const Reader& r, int nodes, int gpus_per_node) {
  ops::OpsParams p;
  r.allow({"description"});
  p.cluster.nodes = nodes;
  p.cluster.gpus_per_node = gpus_per_node;
  p.cluster.zones = r.has("zones") ? static_cast<int>(r.integer("zones", 1, nodes)) : 0;
  p.cluster.cross_zone_min_gpus = static_cast<int>(r.integer_or("cross_zone_min_gpus", 128, 1, 1 << 24));
  p.seed = static_cast<std::uint64_t>(r.integer_or("seed", 1, 0, INT64_MAX));
  p.horizon_s = r.fact_quantity<Seconds>("horizon", false, &kOpsTime).si();
  p.jobs = parse_ops_jobs(r.child("jobs", "an array of jobs"), p.cluster);
  std::set<std::string> names;
  if (auto fs = r.optional_child("failures")) {
    for (const auto& f : fs->elements("failure processes")) {
      ops::FailureSpec s;
      s.name = f.name("name");
      if (!names.insert(s.name).second) f.fail_at("name", "failure process \"" + s.name + "\" is named twice");
      f.allow({"description", "source"});
      const std::string unit = f.choice("unit", {"gpu", "node", "link"});
      s.unit = unit == "gpu" ? ops::FailureUnit::Gpu : unit == "node" ? ops::FailureUnit::Node : ops::FailureUnit::Link;
      s.rate_per_hour = f.fact_number("rate_per_hour", 0, 1);
      if (s.unit == ops::FailureUnit::Link) {
        // A node's network link: down for a time, the node stays in the pool (for jobs on it alone).
        if (f.has("repair"))
          f.fail_at("repair",
                    "a link failure takes no node out of the pool, so it has no \"repair\": give how long the "
                    "link stays down as \"down\" (e.g. \"10min\"; \"0s\": a flap)");
        if (!f.has("down"))
          f.fail(
              "missing the link's \"down\": how long a failed link stays down (e.g. \"10min\"; \"0s\": a flap, "
              "its multi-node jobs end and the link is back at once)");
        s.down_s = f.fact_quantity<Seconds>("down", true, &kOpsTime).si();
      } else {
        if (f.has("down"))
          f.fail_at("down", "\"down\" is how long a \"link\" failure's link stays down; a " + unit +
                                " failure has a \"repair\" (how long its node leaves the pool): give \"repair\", "
                                "or unit \"link\"");
        s.repair_s = f.optional_fact_quantity<Seconds>("repair", true, &kOpsTime).value_or(Seconds(0)).si();
      }
      if (auto b = f.optional_child("burst"))
        parse_burst(*b, s, s.unit == ops::FailureUnit::Gpu ? p.cluster.gpus() : nodes);
      f.finish();
      p.failures.push_back(std::move(s));
    }
  }
  r.finish();
  return p;
}

}  // namespace ffsim::config
