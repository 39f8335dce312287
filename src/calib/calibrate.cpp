// Fitting the simulator's parameters to measured runs.
// SPDX-License-Identifier: Apache-2.0
#include "calib/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "calib/lsq.hpp"
#include "core/error.hpp"

namespace ffsim::calib {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
bool set(double v) { return !std::isnan(v); }
Regime other(Regime r) { return r == Regime::Cache ? Regime::Dram : Regime::Cache; }
std::size_t ri(Regime r) { return static_cast<std::size_t>(r); }

// Prefers the regime's value, then the other regime's.
double pick(const std::array<double, 2>& v, Regime r) { return set(v[ri(r)]) ? v[ri(r)] : v[ri(other(r))]; }

// A value a fit is free to move: where it lives in the Calibration, and where it starts.
struct Free {
  std::string name;
  double* slot;
  double start;
  bool bandwidth;
  /// The smallest value the node model accepts (latencies must be positive: 1 ns, far below any
  /// measured time; an overhead may be 0). Bandwidths stay positive by their own floor.
  double floor = 0;
};
constexpr double kLatencyFloor = 1e-9;

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

class Fitter {
public:
  Fitter(const BenchModel& m, Calibration& c) : m_(m), c_(c) {}

  double sim(const Sample& s) { return simulate(m_, params_for(c_, s.point, s.regime), s.point, engine_); }

  // Fits `free` to `pts` by Levenberg-Marquardt through the simulator, starting from `free[j].start`
  // (a linear least-squares solution when `linear`), and records the fit.
  void fit(const std::string& name, const std::string& stages, const std::string& group, Regime r,
           const std::vector<const Sample*>& pts, std::vector<Free> free, bool linear) {
    if (pts.empty()) return;
    for (auto it = free.begin(); it != free.end();)  // nothing to start from: the model lacks the part
      it = set(it->start) && it->start >= 0 ? it + 1 : free.erase(it);
    for (Free& f : free) f.start = std::max(f.start, f.floor);
    if (free.empty() || pts.size() < free.size()) return;
    // Scaled unknowns x_j = value_j / scale_j start at 1 (bandwidths stay positive).
    std::vector<double> scale, x0, lower, start;
    for (const Free& f : free) {
      scale.push_back(f.bandwidth ? f.start : std::max(f.start, 1e-6));
      x0.push_back(f.start / scale.back());
      lower.push_back(f.bandwidth ? 1e-6 : f.floor / scale.back());
    }
    start = x0;
    auto put = [&](const std::vector<double>& x) {
      for (std::size_t j = 0; j < free.size(); ++j) *free[j].slot = x[j] * scale[j];
    };
    auto residuals = [&](const std::vector<double>& x) {
      put(x);
      std::vector<double> res;
      res.reserve(pts.size());
      for (const Sample* s : pts) res.push_back((sim(*s) - s->point.time_median) / s->point.time_median);
      return res;
    };
    // Makespans are piecewise linear in the parameters, with flat stretches where another resource
    // or other work hides a parameter; a local method sees no gradient there. So each parameter is
    // also scanned over factors 2^-10 .. 2^10 of its start (the others fixed), keeping the best.
    auto cost = [&](const std::vector<double>& x) {
      double c = 0;
      for (double v : residuals(x)) c += v * v;
      return c;
    };
    double best = cost(x0);
    for (std::size_t j = 0; j < free.size(); ++j) {
      const std::vector<double> base_x = x0;
      for (int e = -10; e <= 10; ++e) {
        if (e == 0) continue;
        std::vector<double> x = base_x;
        const double from = base_x[j] > 0 ? base_x[j] : 1.0;  // a zero start (an overhead) scans from its scale
        x[j] = std::max(from * std::ldexp(1.0, e), lower[j]);
        if (const double cx = cost(x); cx < best) {
          best = cx;
          x0 = x;
        }
      }
    }
    // Levenberg-Marquardt from the start and from the scan's best point; the lower cost wins.
    LmResult lm = levenberg_marquardt(residuals, start, lower);
    if (x0 != start) {
      LmResult other = levenberg_marquardt(residuals, x0, lower);
      if (other.cost < lm.cost) lm = std::move(other);
    }
    put(lm.x);
    Fit f;
    f.name = name;
    f.stages = stages;
    f.group = group;
    f.regime = r;
    bool moved = false;
    for (std::size_t j = 0; j < free.size(); ++j) moved = moved || std::fabs(lm.x[j] - start[j]) > 1e-9 * std::fabs(start[j]);
    f.method = linear ? (moved ? "linear least squares, refined by a scan and Levenberg-Marquardt through the simulator"
                               : "linear least squares (reproduced exactly by the simulator)")
                      : "Levenberg-Marquardt through the simulator (analytic engine), from the best of a log-spaced scan";
    for (std::size_t j = 0; j < free.size(); ++j) {
      FittedValue v;
      v.name = free[j].name;
      v.value = *free[j].slot;
      v.bandwidth = free[j].bandwidth;
      // Sensitivities are of relative residuals to the scaled value (both of order 1 when it binds).
      // A side is flat when it is below 1% of the other (a kink), or when doubling the value would
      // move the points' relative residuals by less than 1% in all (it hardly matters).
      const double rel = std::max(std::fabs(lm.x[j]), 1e-3);  // per relative change of the value
      const double su = lm.sensitivity_up[j] * rel, sd = lm.sensitivity_down[j] * rel;
      const bool up = su > 0.01 && su > 0.01 * sd, down = sd > 0.01 && sd > 0.01 * su;
      const bool at_bound = lm.x[j] <= lower[j];
      v.status = at_bound && !free[j].bandwidth && free[j].floor > 0
                     ? "at its floor: these points would take a smaller one (the fit's line crosses zero below it), "
                       "the node model needs a positive value"
                 : up && (down || at_bound) ? "fitted"
                 : up ? "an upper bound: any smaller value fits these points as well (below it, other work hides it)"
                 : down ? "a lower bound: any larger value fits these points as well (above it, no point is limited by it)"
                        : "not pinned: the points of this fit hardly depend on it";
      f.values.push_back(v);
    }
    for (const Sample* s : pts) f.points.push_back(FitPoint{s->file, s->point.pointer, s->point.bytes, s->point.time_median, sim(*s)});
    summarize(f);
    c_.fits.push_back(std::move(f));
  }

  // A fit outside the simulator: time = a + bytes x y by linear least squares (recorded only).
  void record_line(const std::string& name, const std::string& stages, const std::string& group, Regime r,
                   const std::vector<const Sample*>& pts, const std::string& prefix, const std::string& why) {
    if (pts.size() < 2) return;
    std::vector<std::vector<double>> a;
    std::vector<double> b, w;
    for (const Sample* s : pts) {
      a.push_back({1.0, s->point.bytes});
      b.push_back(s->point.time_median);
      w.push_back(1 / s->point.time_median);
    }
    auto x = linear_least_squares(a, b, w);
    if (x[0] < 0) {  // a latency is not negative: fit the bandwidth alone
      for (auto& row : a) row = {row[1]};
      x = {0.0, linear_least_squares(a, b, w)[0]};
    }
    Fit f;
    f.name = name;
    f.stages = stages;
    f.group = group;
    f.regime = r;
    f.method = "linear least squares: time = latency + bytes / bandwidth";
    f.values.push_back(FittedValue{prefix + "_latency", x[0], false, "recorded: " + why, false});
    f.values.push_back(FittedValue{prefix + "_bandwidth", x[1] > 0 ? 1 / x[1] : kNaN, true, "recorded: " + why, false});
    for (const Sample* s : pts)
      f.points.push_back(FitPoint{s->file, s->point.pointer, s->point.bytes, s->point.time_median, x[0] + x[1] * s->point.bytes});
    summarize(f);
    c_.fits.push_back(std::move(f));
  }

private:
  static void summarize(Fit& f) {
    double sq = 0;
    for (const auto& p : f.points) {
      sq += p.residual() * p.residual();
      f.max_abs = std::max(f.max_abs, std::fabs(p.residual()));
    }
    f.rms = f.points.empty() ? 0 : std::sqrt(sq / static_cast<double>(f.points.size()));
  }

  const BenchModel& m_;
  Calibration& c_;
  eval::FluidEngine engine_;
};

// Weighted (relative) linear least squares for time = latency + bytes x y, or bytes x y alone when
// the latency is known (`fixed_latency` set) or absent (`with_latency` false). Returns {latency, y}.
std::pair<double, double> line(const std::vector<const Sample*>& pts, double bytes_factor, bool with_latency,
                               double fixed_latency) {
  std::vector<std::vector<double>> a;
  std::vector<double> b, w;
  for (const Sample* s : pts) {
    const double t = s->point.time_median;
    const double S = bytes_factor * s->point.bytes;
    if (with_latency) a.push_back({1.0, S});
    else a.push_back({S});
    b.push_back(t - (set(fixed_latency) ? fixed_latency : 0.0));
    w.push_back(1 / t);
  }
  const auto x = linear_least_squares(a, b, w);
  if (with_latency && x[0] < 0) return line(pts, bytes_factor, false, 0.0);  // a latency is not negative
  return with_latency ? std::make_pair(x[0], x[1]) : std::make_pair(set(fixed_latency) ? fixed_latency : 0.0, x[0]);
}

}  // namespace

std::string series_key(const Sample& s) {
  const Point& p = s.point;
  char chunk[32];
  std::snprintf(chunk, sizeof chunk, "%.17g", p.chunk_bytes);
  return s.file + "|" + p.stage + "|" + p.backend + "|" + p.variant + "|" + p.dtype + "|" + p.store + "|" +
         std::to_string(p.k) + "|" + std::to_string(p.devices) + "|" + std::to_string(p.ranks) + "|" +
         std::to_string(p.threads) + "|" + chunk;
}

std::vector<Sample> samples_of(const BenchModel& m, const std::vector<MeasurementFile>& files) {
  std::vector<Sample> r;
  std::vector<std::vector<double>> runs;        // per sample: the median time of each run
  std::vector<std::vector<std::string>> from;   // per sample: its files
  std::map<std::string, std::size_t> of_config;  // configuration and size -> sample
  for (const auto& f : files) {
    // One calibration fits one machine: the node model's, and every file's the same (said before
    // the machine record's details, which a run of another machine fails too).
    if (f.machine.name != files.front().machine.name)
      throw ConfigError(f.file, "/machine/name",
                        "expected a run of \"" + files.front().machine.name + "\" as in " + files.front().file + ", got \"" +
                            f.machine.name + "\": one calibration fits one machine; calibrate each machine on its own");
    if (!m.node.measured_machine.empty() && f.machine.name != m.node.measured_machine)
      throw ConfigError(f.file, "/machine/name",
                        "expected a run of \"" + m.node.measured_machine + "\" (the machine node model " + m.node.name +
                            " describes), got \"" + f.machine.name + "\"; calibrate it with the node model of that machine");
    // Copy threads pinned or left to the scheduler are different conditions of the host backend
    // (on 2-CPU VMs a D2H and an H2D at once took turns unpinned; pinned, small copies and
    // oversubscribed ranks ran slower): one calibration takes one.
    if (f.machine.host_streams != files.front().machine.host_streams)
      throw ConfigError(f.file, "/machine/host_streams",
                        "expected \"" + files.front().machine.host_streams + "\" as in " + files.front().file + ", got \"" +
                            f.machine.host_streams + "\" (hfreduce-bench records \"pinned\" when run with HFREDUCE_HOST_PIN=1; "
                            "files without the field predate the option and ran unpinned); calibrate the two conditions separately");
    check_machine(m, f);
    for (const Point& p : f.points) {
      Sample s{f.file, p, regime_of(m, p), ""};
      char size[32];
      std::snprintf(size, sizeof size, "%.17g", p.bytes);
      const std::string key = series_key(Sample{"", p, s.regime, ""}) + "|" + size;
      const auto [it, fresh] = of_config.try_emplace(key, r.size());
      // A point's runs: its rounds (hfreduce-bench --rounds), else its one median.
      const std::vector<double> own = p.rounds.empty() ? std::vector<double>{p.time_median} : p.rounds;
      if (fresh) {
        r.push_back(std::move(s));
        runs.push_back(own);
        from.push_back({f.file});
        continue;
      }
      Sample& x = r[it->second];
      auto& fs = from[it->second];
      if (std::find(fs.begin(), fs.end(), f.file) == fs.end()) {
        fs.push_back(f.file);
        x.file += " + " + f.file;
      }
      x.point.time_min = std::min(x.point.time_min, p.time_min);
      x.point.time_max = std::max(x.point.time_max, p.time_max);
      x.point.reps += p.reps;
      runs[it->second].insert(runs[it->second].end(), own.begin(), own.end());
    }
  }
  for (std::size_t i = 0; i < r.size(); ++i) {
    const std::vector<double>& t = runs[i];
    if (t.size() < 2) continue;
    const std::size_t n = t.size();
    Point& p = r[i].point;
    // The rates follow the merged median (the parser checks them against bytes / median).
    p.time_median = median_of(t);
    p.algbw_Bps = p.time_median > 0 ? p.bytes / p.time_median : 0;
    p.traffic_Bps = p.time_median > 0 ? p.traffic_bytes / p.time_median : 0;
    double mean = 0;
    for (double x : t) mean += x / static_cast<double>(n);
    double dev = 0;
    for (double x : t) dev += std::fabs(x - mean) / mean / static_cast<double>(n);
    r[i].runs = static_cast<int>(n);
    r[i].run_spread = dev;
  }
  std::map<std::string, std::vector<std::size_t>> series;
  for (std::size_t i = 0; i < r.size(); ++i) series[series_key(r[i])].push_back(i);
  for (const auto& [key, idx] : series)
    for (std::size_t i : idx) {
      const Sample* faster = nullptr;  // the quickest larger point of the series
      for (std::size_t j : idx)
        if (r[j].point.bytes > r[i].point.bytes && (!faster || r[j].point.time_median < faster->point.time_median)) faster = &r[j];
      if (faster && r[i].point.time_median > faster->point.time_median) {
        char why[160];
        std::snprintf(why, sizeof why, "non-monotone: %.4g s for %.0f bytes, but %.4g s for %.0f bytes (%s)",
                      r[i].point.time_median, r[i].point.bytes, faster->point.time_median, faster->point.bytes,
                      faster->point.pointer.c_str());
        r[i].outlier = why;
      }
    }
  return r;
}

std::string reduce_group(const Point& pt) { return pt.variant + " " + pt.dtype + " " + pt.store; }

ParamSet params_for(const Calibration& c, const Point& pt, Regime r) {
  ParamSet p = c.published;
  for (std::size_t j = 0; j < p.size(); ++j) {
    const double v = pick({c.base[0][j], c.base[1][j]}, r);
    if (set(v)) p[j] = v;
  }
  const std::string g = pt.stage == "reduce" ? reduce_group(pt) : c.node_reduce_group;
  if (auto it = c.reduce.find(g); it != c.reduce.end() && set(pick(it->second, r)))
    at(p, Param::ReducePerCore) = pick(it->second, r);
  auto tr = c.transport.find(pt.ranks);
  if (tr == c.transport.end()) tr = c.transport.find(c.node_ranks);
  if (tr != c.transport.end()) {
    const auto& v = tr->second;
    const double bw = pick({v[0][0], v[1][0]}, r), lat = pick({v[0][1], v[1][1]}, r);
    if (set(bw)) at(p, Param::NicBandwidth) = bw;
    if (set(lat)) at(p, Param::NicLatency) = lat;
  }
  return p;
}

ParamSet node_params(const Calibration& c) {
  ParamSet p = unset_params();
  for (std::size_t j = 0; j < p.size(); ++j) p[j] = pick({c.base[0][j], c.base[1][j]}, Regime::Dram);
  if (auto it = c.reduce.find(c.node_reduce_group); it != c.reduce.end())
    at(p, Param::ReducePerCore) = pick(it->second, Regime::Dram);
  if (auto it = c.transport.find(c.node_ranks); it != c.transport.end()) {
    at(p, Param::NicBandwidth) = pick({it->second[0][0], it->second[1][0]}, Regime::Dram);
    at(p, Param::NicLatency) = pick({it->second[0][1], it->second[1][1]}, Regime::Dram);
  }
  return p;
}

Calibration calibrate(const BenchModel& m, const std::vector<Sample>& training) {
  Calibration c;
  c.node = m.node.name;
  c.llc = m.llc;
  c.published = published(m);
  c.base = {unset_params(), unset_params()};
  // The reduce group HFReduce's pipeline runs: the CPU's widest SIMD, fp32, ordinary stores (the
  // Reducer streams only above 64 MiB of traffic per call; a chunk's sum is far below that).
  std::set<std::string> groups;
  std::set<int> tree_ranks;
  for (const auto& s : training) {
    if (s.point.stage == "reduce") groups.insert(reduce_group(s.point));
    if (s.point.stage == "internode") tree_ranks.insert(s.point.ranks);
  }
  const std::string simd = m.node.sockets.front().cpu.simd;
  c.node_reduce_group = simd + " fp32 regular";
  for (const std::string& g : {simd + " fp32 regular", simd + " fp32 nt"})
    if (groups.count(g)) {
      c.node_reduce_group = g;
      break;
    }
  // The transport of the fewest ranks: the least oversubscribed run of ranks sharing one machine.
  c.node_ranks = tree_ranks.empty() ? 0 : *tree_ranks.begin();

  Fitter fitter(m, c);
  for (Regime r : {Regime::Cache, Regime::Dram}) {
    auto pts = [&](const std::function<bool(const Point&)>& want) {
      std::vector<const Sample*> v;
      for (const auto& s : training)
        if (s.regime == r && want(s.point)) v.push_back(&s);
      return v;
    };
    auto stage_is = [](std::initializer_list<const char*> stages) {
      return [stages](const Point& p) {
        for (const char* s : stages)
          if (p.stage == s) return true;
        return false;
      };
    };
    auto& base = c.base[ri(r)];
    auto cur = [&](Param p) {  // the value simulations use now
      const double v = pick({c.base[0][static_cast<std::size_t>(p)], c.base[1][static_cast<std::size_t>(p)]}, r);
      return set(v) ? v : at(c.published, p);
    };

    // DRAM: a copy of S reads and writes S (2S through DRAM); the simulator has no copy latency.
    const auto copies = pts(stage_is({"copy"}));
    if (!copies.empty()) {
      const auto [lat, y] = line(copies, 2.0, false, kNaN);
      (void)lat;
      fitter.fit("memory copy", "copy", "", r, copies,
                 {Free{param_name(Param::DramBandwidth), &at(base, Param::DramBandwidth), y > 0 ? 1 / y : kNaN, true}}, true);
      std::set<int> threads;
      for (const Sample* s : copies) threads.insert(s->point.threads);
      for (int t : threads) {
        std::vector<const Sample*> v;
        for (const Sample* s : copies)
          if (s->point.threads == t) v.push_back(s);
        fitter.record_line("memory copy per thread count", "copy", plural(static_cast<std::size_t>(t), "thread", "threads"), r, v,
                           "copy", "the simulator's copy is limited by DRAM whatever the threads");
      }
    }

    // Device copies: time = latency + bytes / link for D2H and H2D (one link rate, one latency),
    // and both directions at once, where the device port's duplex cap is the contention term. The
    // start comes from lines fitted by linear least squares; the joint fit runs through the simulator.
    const auto dev = pts(stage_is({"d2h", "h2d"}));
    const auto bidir = pts(stage_is({"bidir"}));
    if (!dev.empty() || !bidir.empty()) {
      const double known = r == Regime::Dram ? c.base[ri(Regime::Cache)][static_cast<std::size_t>(Param::DeviceLatency)] : kNaN;
      std::vector<Free> free;
      double lat = set(known) ? known : cur(Param::DeviceLatency);
      if (!dev.empty()) {
        const auto [l, y] = line(dev, 1.0, !set(known), known);
        lat = l;
        free.push_back(Free{param_name(Param::DeviceLink), &at(base, Param::DeviceLink), y > 0 ? 1 / y : kNaN, true});
        if (!set(known))
          free.push_back(Free{param_name(Param::DeviceLatency), &at(base, Param::DeviceLatency), std::max(lat, 0.0), false,
                              kLatencyFloor});
      }
      if (!bidir.empty()) {
        const auto [l2, y2] = line(bidir, 2.0, false, std::max(lat, 0.0));
        (void)l2;
        free.push_back(Free{param_name(Param::Duplex), &at(base, Param::Duplex), y2 > 0 ? 1 / y2 : cur(Param::Duplex), true});
      }
      std::vector<const Sample*> all = dev;
      all.insert(all.end(), bidir.begin(), bidir.end());
      fitter.fit("device copies", bidir.empty() ? "d2h+h2d" : dev.empty() ? "bidir" : "d2h+h2d+bidir", "", r, all, free,
                 !dev.empty());
    }

    // The CPU reduce, per (ISA, dtype, stores): k x S input bytes on `threads` cores.
    for (const std::string& g : groups) {
      const auto red = pts([&](const Point& p) { return p.stage == "reduce" && reduce_group(p) == g; });
      if (red.empty()) continue;
      std::vector<double> rates;
      for (const Sample* s : red)
        rates.push_back(s->point.k * s->point.bytes / std::max(1, s->point.threads) / s->point.time_median);
      std::sort(rates.begin(), rates.end());
      auto& slot = c.reduce.try_emplace(g, std::array<double, 2>{kNaN, kNaN}).first->second[ri(r)];
      fitter.fit("CPU reduce", "reduce", g, r, red,
                 {Free{param_name(Param::ReducePerCore), &slot, rates[rates.size() / 2], true}}, false);
    }

    // The pipeline (Algorithm 1) through the simulator's own HFReduce schedule: its chunk overhead.
    // Like the latencies, it is fitted where times are small (the cache regime) and kept by the DRAM
    // regime, whose pipelines are then a prediction from the other fits alone.
    const auto pipe = pts(stage_is({"pipeline"}));
    const bool overhead_known =
        r == Regime::Dram && set(c.base[ri(Regime::Cache)][static_cast<std::size_t>(Param::ChunkOverhead)]);
    if (!pipe.empty() && !overhead_known)
      fitter.fit("pipeline", "pipeline", "", r, pipe,
                 {Free{param_name(Param::ChunkOverhead), &at(base, Param::ChunkOverhead), cur(Param::ChunkOverhead), false}},
                 false);

    // The transport, per rank count (ranks of one machine share it).
    for (int n : tree_ranks) {
      const auto tree = pts([&](const Point& p) { return p.stage == "internode" && p.ranks == n; });
      if (tree.empty()) continue;
      auto& v = c.transport.try_emplace(n, std::array<std::array<double, 2>, 2>{{{kNaN, kNaN}, {kNaN, kNaN}}}).first->second;
      const auto at_n = [&](int k) {
        const double x = pick({v[0][static_cast<std::size_t>(k)], v[1][static_cast<std::size_t>(k)]}, r);
        return set(x) ? x : at(c.published, k == 0 ? Param::NicBandwidth : Param::NicLatency);
      };
      std::vector<Free> free{Free{param_name(Param::NicBandwidth), &v[ri(r)][0], at_n(0), true}};
      const bool latency_known = r == Regime::Dram && set(v[ri(Regime::Cache)][1]);
      if (!latency_known) free.push_back(Free{param_name(Param::NicLatency), &v[ri(r)][1], at_n(1), false, kLatencyFloor});
      fitter.fit("transport", "internode", plural(static_cast<std::size_t>(n), "rank", "ranks"), r, tree, free, false);
    }
  }
  return c;
}

std::vector<bool> holdout_mask(const std::vector<Sample>& samples, double fraction) {
  std::vector<bool> held(samples.size(), false);
  if (fraction <= 0) return held;
  std::map<std::string, std::vector<std::size_t>> series;
  for (std::size_t i = 0; i < samples.size(); ++i) series[series_key(samples[i])].push_back(i);
  for (auto& [key, idx] : series) {
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return samples[a].point.bytes < samples[b].point.bytes; });
    const auto n = static_cast<long long>(idx.size());
    const long long m = std::min(n - 1, std::llround(fraction * static_cast<double>(n)));
    for (long long j = 0; j < m; ++j)
      held[idx[static_cast<std::size_t>((2 * j + 1) * n / (2 * m))]] = true;
  }
  return held;
}

}  // namespace ffsim::calib
