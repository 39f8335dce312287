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
#include "core/parallel.hpp"

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
  bool number = false;  ///< dimensionless (a gain, a sharpness): scaled by its start like a bandwidth
};
constexpr double kLatencyFloor = 1e-9;

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

class Fitter {
public:
  Fitter(const BenchModel& m, Calibration& c, eval::Engine& engine, int threads)
      : m_(m), c_(c), engine_(engine), threads_(threads) {}

  double sim(const Sample& s) { return simulate(m_, params_for(c_, s.point, s.regime), s.point, engine_); }

  // Fits `free` to `pts` by Levenberg-Marquardt through the simulator, starting from `free[j].start`
  // (a linear least-squares solution when `linear`), and records the fit.
  void fit(const std::string& name, const std::string& stages, const std::string& group, Regime r,
           const std::vector<const Sample*>& pts, std::vector<Free> free, bool linear, bool levels = false,
           std::vector<FittedValue> unpinned = {}, const std::function<void()>& after_put = {}) {
    if (pts.empty()) return;
    for (auto it = free.begin(); it != free.end();)  // nothing to start from: the model lacks the part
      it = set(it->start) && it->start >= 0 ? it + 1 : free.erase(it);
    for (Free& f : free) f.start = std::max(f.start, f.floor);
    if (free.empty() || pts.size() < free.size()) return;
    // Scaled unknowns x_j = value_j / scale_j start at 1 (bandwidths stay positive).
    std::vector<double> scale, x0, lower, start;
    for (const Free& f : free) {
      const bool ratio = f.bandwidth || f.number;  // scaled by its start, kept positive
      scale.push_back(ratio ? f.start : std::max(f.start, 1e-6));
      x0.push_back(f.start / scale.back());
      lower.push_back(ratio ? std::max(1e-6, f.floor / scale.back()) : f.floor / scale.back());
    }
    start = x0;
    auto put = [&](const std::vector<double>& x) {
      for (std::size_t j = 0; j < free.size(); ++j) *free[j].slot = x[j] * scale[j];
      if (after_put) after_put();  // values derived from the slots (the memory model's rates)
    };
    // The points of one evaluation are independent simulations of the same values: on threads_
    // threads, each residual in its own slot (the same vector as one after the other).
    auto residuals = [&](const std::vector<double>& x) {
      put(x);
      std::vector<double> res(pts.size());
      parallel_for(pts.size(), threads_, [&](std::size_t i) {
        res[i] = (sim(*pts[i]) - pts[i]->point.time_median) / pts[i]->point.time_median;
      });
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
    // Two values (a transport's bandwidth and latency) are also scanned together, over factors
    // 4^-5 .. 4^5 of their starts (121 evaluations): a latency and a bandwidth trade against each
    // other across a series' sizes, and the cost can have a basin at each end. One value at a time
    // missed it: on the Xeon 480 MiB VM (both 2026-12-07 runs, 5 folds) the four-rank tree's fit of
    // one fold went from (9.42 GB/s, 1 ns; RMS 6.6%) to (56.5 GB/s, 41.9 us; RMS 14.1%) when the
    // copies' fit before it moved its L1 rates, which the tree's points barely see.
    std::vector<double> grid_best;
    if (free.size() == 2 && !levels) {
      double best_grid = std::numeric_limits<double>::infinity();
      for (int a = -5; a <= 5; ++a)
        for (int b = -5; b <= 5; ++b) {
          std::vector<double> x = start;
          const int e[2] = {a, b};
          for (std::size_t j = 0; j < 2; ++j)
            x[j] = std::max((start[j] > 0 ? start[j] : 1.0) * std::ldexp(1.0, 2 * e[j]), lower[j]);
          if (const double cx = cost(x); cx < best_grid) {
            best_grid = cx;
            grid_best = x;
          }
        }
    }
    // Levenberg-Marquardt from the start, from the scan's best point and from the grid's; the
    // lowest cost wins.
    LmOptions opt;
    if (levels) opt.max_iterations = 400;  // the memory model: many values, kinks where caps take over
    LmResult lm = levenberg_marquardt(residuals, start, lower, opt);
    for (const std::vector<double>* from : {&x0, &grid_best}) {
      if (from->empty() || *from == start) continue;
      LmResult other = levenberg_marquardt(residuals, *from, lower, opt);
      if (other.cost < lm.cost) lm = std::move(other);
    }
    // Restarts from the result (a fresh damping) while each still lowers the cost by 0.1%. Until
    // 2026-12-06 a restart went on while it lowered it by 1e-6: on a noisy machine (the Zen 3 VM's
    // 2026-12-06 set, cost 0.49, values the data do not pin running off to 1e15 B/s) each restart
    // gained about 1e-5, and the copies' fit took 100 restarts of 400 iterations, 1.7 million
    // evaluations and 8 minutes, to move the relative RMS residual by under 0.01%. The committed
    // fits (EPYC and Xeon VMs) stop at their first restart either way.
    for (int restart = 0; levels && restart < 100 && lm.cost > 0; ++restart) {
      LmResult again = levenberg_marquardt(residuals, lm.x, lower, opt);
      const bool better = again.cost < lm.cost * (1 - 1e-3);
      if (again.cost <= lm.cost) lm = std::move(again);
      if (!better) break;
    }
    put(lm.x);
    Fit f;
    f.name = name;
    f.stages = stages;
    f.group = group;
    f.regime = r;
    f.levels = levels;
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
      v.number = free[j].number;
      // Sensitivities are of relative residuals to the scaled value (both of order 1 when it binds).
      // A side is flat when it is below 1% of the other (a kink), or when doubling the value would
      // move the points' relative residuals by less than 1% in all (it hardly matters).
      const double rel = std::max(std::fabs(lm.x[j]), 1e-3);  // per relative change of the value
      const double su = lm.sensitivity_up[j] * rel, sd = lm.sensitivity_down[j] * rel;
      const bool up = su > 0.01 && su > 0.01 * sd, down = sd > 0.01 && sd > 0.01 * su;
      const bool at_bound = lm.x[j] <= lower[j];
      v.status = at_bound && !free[j].bandwidth && !free[j].number && free[j].floor > 0
                     ? "at its floor: these points would take a smaller one (the fit's line crosses zero below it), "
                       "the node model needs a positive value"
                 : up && (down || at_bound) ? "fitted"
                 : up ? "an upper bound: any smaller value fits these points as well (below it, other work hides it)"
                 : down ? "a lower bound: any larger value fits these points as well (above it, no point is limited by it)"
                        : "not pinned: the points of this fit hardly depend on it";
      f.values.push_back(v);
    }
    for (FittedValue& v : unpinned) f.values.push_back(std::move(v));
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
    f.values.push_back(FittedValue{prefix + "_latency", x[0], false, false, "recorded: " + why, false});
    f.values.push_back(FittedValue{prefix + "_bandwidth", x[1] > 0 ? 1 / x[1] : kNaN, true, false, "recorded: " + why, false});
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
  eval::Engine& engine_;
  int threads_;
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
  return p.stage + "|" + p.backend + "|" + p.variant + "|" + p.dtype + "|" + p.store + "|" + std::to_string(p.k) + "|" +
         std::to_string(p.devices) + "|" + std::to_string(p.ranks) + "|" + std::to_string(p.threads) + "|" + chunk +
         (p.placement.empty() ? "" : "|" + p.placement);
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
      // A run whose recorded threshold made this size's memcpy stream ran another kernel than runs
      // that did not (or recorded none): not a run of the same point.
      const std::string key = series_key(s) + "|" + size + (streams_by_its_record(p) ? "|streams" : "");
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

ModelParams params_for(const Calibration& c, const Point& pt, Regime r) {
  ModelParams mp;
  ParamSet& p = mp.node;
  p = c.published;
  for (std::size_t j = 0; j < p.size(); ++j) {
    const double v = pick({c.base[0][j], c.base[1][j]}, r);
    if (set(v)) p[j] = v;
  }
  auto tr = c.transport.find(pt.ranks);
  if (tr == c.transport.end()) tr = c.transport.find(c.node_ranks);
  if (tr != c.transport.end()) {
    const auto& v = tr->second;
    const double bw = pick({v[0][0], v[1][0]}, r), lat = pick({v[0][1], v[1][1]}, r);
    if (set(bw)) at(p, Param::NicBandwidth) = bw;
    if (set(lat)) at(p, Param::NicLatency) = lat;
  }
  mp.memory = c.memory;
  mp.reduce_kind = "reduce " + c.node_reduce_group;
  return mp;
}

ParamSet node_params(const Calibration& c) {
  ParamSet p = unset_params();
  for (std::size_t j = 0; j < p.size(); ++j) p[j] = pick({c.base[0][j], c.base[1][j]}, Regime::Dram);
  // From the memory model: DRAM as every core's memcpy reaches it, one core's reduce input rate.
  const auto dram = static_cast<std::size_t>(Level::Dram);
  if (auto it = c.memory.kinds.find("copy memcpy"); it != c.memory.kinds.end() && set(it->second.rate[dram])) {
    const double v = level_rate(c.memory, it->second, Level::Dram, c.cores, counted_share("copy memcpy", 0));
    if (set(v)) at(p, Param::DramBandwidth) = v;
    // An emulated device's link: one copy thread's memcpy from DRAM, half of its traffic the payload.
    if (c.emulated_devices) at(p, Param::DeviceLink) = it->second.rate[dram] / 2;
  }
  if (auto it = c.memory.kinds.find("reduce " + c.node_reduce_group); it != c.memory.kinds.end() && set(it->second.rate[dram])) {
    const double v = kind_rate(it->second, Level::Dram);
    if (set(v)) at(p, Param::ReducePerCore) = v * c.node_reduce_k / (c.node_reduce_k + 1.0);
  }
  if (auto it = c.transport.find(c.node_ranks); it != c.transport.end()) {
    at(p, Param::NicBandwidth) = pick({it->second[0][0], it->second[1][0]}, Regime::Dram);
    at(p, Param::NicLatency) = pick({it->second[0][1], it->second[1][1]}, Regime::Dram);
  }
  return p;
}

namespace {

// Per-thread traffic rate a copy or reduce point measured.
double measured_rate(const Point& pt) {
  const double W = pt.stage == "copy" ? 2 * pt.bytes : (pt.k + 1.0) * pt.bytes;
  return W / pt.time_median / kernel_threads(pt);
}

// The level that serves most of a point's bytes (start values; which levels a kind has points of).
constexpr double kSharpnessStart = 4;
constexpr double kCovered = 0.05;  // a level serving less of every point of a kind does not pin its rate

// A kind's rate at a level nearer the core than any its training points reach (unpinned) is its
// nearest slower pinned level's rate times how much faster the first is than the second for its
// peers: the kinds of the same stage with the same stores (streaming or not) that have both pinned,
// the median of their ratios (at least 1). Left unset, the model read it as the slower level's rate:
// with one thread's 18 KiB memcpy held out of a fold on the Xeon 480 MiB VM, memcpy had no L1 rate
// and the point came out at its L2 rate, 4x the time (+300%), where kernel_regular, the same
// stores, measured 4.3x faster in L1 than in L2. How much faster a cache level serves than the next
// is the machine's, within a kind of store; where no peer has both the level stays unset.
// `pinned`: each kind's levels its fit sets (the increments); the fits call this after every step,
// so that they fit the other values with the borrowed rates in place.
std::string store_family(const std::string& kind) {
  const bool copy = kind.rfind("copy ", 0) == 0;
  const bool streams = copy ? streaming_copy(kind) : kind.size() >= 3 && kind.compare(kind.size() - 3, 3, " nt") == 0;
  return std::string(copy ? "copy" : "reduce") + (streams ? " streaming" : " regular");
}

void borrow_unpinned_levels(MemoryModel& mm, const std::map<std::string, std::array<double, kLevels>>& pinned) {
  auto is_pinned = [&](const std::string& kind, int l) {
    const auto it = pinned.find(kind);
    return it != pinned.end() && set(it->second[static_cast<std::size_t>(l)]);
  };
  std::map<std::string, std::array<double, kLevels>> borrowed;
  for (const auto& [kind, kr] : mm.kinds) {
    if (!pinned.count(kind)) continue;
    auto& b = borrowed[kind];
    b.fill(kNaN);
    int j = kLevels;  // the pinned level nearest the core
    for (int l = kLevels - 1; l >= 0; --l)
      if (is_pinned(kind, l)) j = l;
    for (int l = j - 1; l >= 0; --l) {
      std::vector<double> ratios;
      for (const auto& [peer, pr] : mm.kinds)
        if (peer != kind && store_family(peer) == store_family(kind) && is_pinned(peer, l) && is_pinned(peer, j) &&
            pr.rate[static_cast<std::size_t>(j)] > 0)
          ratios.push_back(pr.rate[static_cast<std::size_t>(l)] / pr.rate[static_cast<std::size_t>(j)]);
      if (!ratios.empty())
        b[static_cast<std::size_t>(l)] = kr.rate[static_cast<std::size_t>(j)] * std::max(1.0, median_of(ratios));
    }
  }
  for (const auto& [kind, b] : borrowed) {
    KindRates& kr = mm.kinds[kind];
    for (int l = 0; l < kLevels; ++l)
      if (!is_pinned(kind, l)) kr.rate[static_cast<std::size_t>(l)] = b[static_cast<std::size_t>(l)];
  }
}

// The fits' records of the borrowed rates: their values and where they came from. A rate's record is
// named as kind_free named it: "memcpy_l1_rate" in the copies' fit, "l1_rate" in a reduce group's own
// fit (its group the kind's), "avx512 fp32 regular l1_rate" where the reduces are fitted together.
void record_borrowed(Calibration& c, const std::map<std::string, std::array<double, kLevels>>& pinned) {
  for (const auto& [kind, inc] : pinned) {
    const KindRates& kr = c.memory.kinds.at(kind);
    const bool copy = kind.rfind("copy ", 0) == 0;
    for (int l = 0; l < kLevels; ++l) {
      const auto ul = static_cast<std::size_t>(l);
      if (set(inc[ul]) || !set(kr.rate[ul])) continue;
      const std::string rate = std::string(level_name(static_cast<Level>(l))) + "_rate";
      for (Fit& fit : c.fits)
        for (FittedValue& v : fit.values)
          if (!set(v.value) &&
              (copy ? v.name == kind.substr(5) + "_" + rate
                    : v.name == kind.substr(7) + " " + rate || (fit.group == kind.substr(7) && v.name == rate))) {
            v.value = kr.rate[ul];
            v.status =
                std::string(
                    "not pinned: no training point of this kind that measured a rate (not its fixed costs) is served "
                    "from the ") +
                level_name(static_cast<Level>(l)) +
                "; the nearest pinned level's rate times the median ratio of the two levels' rates of the other " +
                store_family(kind) + " kinds";
          }
    }
  }
}

// The memory model (bench_model.hpp): first the copies (shared values and each copy kind), then each
// reduce group with the shared values kept. A kind's rate at a level no training point of it is
// served from (>= 5% of its bytes at the start's sharpness; a point of fixed costs counts for none:
// see measures_rates) is not fitted: it stays unset ("not
// pinned"), and the model takes the nearest slower level's there.
void fit_memory(Fitter& fitter, const BenchModel& m, Calibration& c, const std::vector<Sample>& training) {
  MemoryModel& mm = c.memory;
  std::map<std::string, std::vector<const Sample*>> by_kind;
  std::vector<std::string> copy_kinds, reduce_kinds;
  for (const auto& s : training) {
    const std::string k = model_kind(m, s.point);  // a streaming memcpy is a sample of the streaming kernel
    if (k.empty()) continue;
    auto& v = by_kind[k];
    if (v.empty()) (s.point.stage == "copy" ? copy_kinds : reduce_kinds).push_back(k);
    v.push_back(&s);
  }
  if (by_kind.empty()) return;
  std::sort(copy_kinds.begin(), copy_kinds.end());
  std::sort(reduce_kinds.begin(), reduce_kinds.end());
  auto fractions = [&](const Point& p) {
    return level_fractions(m, kSharpnessStart, cached_bytes(m, p), kernel_threads(p));
  };
  auto dominant = [&](const Point& p) {
    const auto f = fractions(p);
    return static_cast<int>(std::max_element(f.begin(), f.end()) - f.begin());
  };
  // The best per-thread rate each kind measured among the training points each level serves most
  // of. A level nearer the core serves at least as fast as the levels behind it (the model reads
  // rates so: kind_rate), so a point that moved its bytes at under kCovered of the best its kind
  // reached at its own level or a slower one measured fixed costs, not a rate: it pins no level's
  // rate (see kind_free) and gives no start value. Measured on the Xeon 480 MiB VM: two threads'
  // 18 KiB memcpy takes 18.4 us (the pool's wake-up; 1.0 GB/s a thread) where one thread's takes
  // 0.091 us (405 GB/s) and one thread's 72 KiB 1.5 us (97 GB/s, the L2). With the one-thread
  // 18 KiB point held out, the two-thread one alone pinned memcpy's L1 rate, the fit left it at its
  // floor (the L2 rate: the point says nothing about it) and the held-out point came out 4x its
  // time (+315%); unpinned, the rate is borrowed from the other kinds of its stores
  // (borrow_unpinned_levels). (A best over a family of kinds instead would drop a slow kind whole:
  // the scalar fp16 reduce runs at 2% of the AVX-512 fp32 one at every level.)
  std::map<std::string, std::array<double, kLevels>> kind_best;
  for (const auto& [kind, pts] : by_kind)
    for (const Sample* s : pts) {
      double& v = kind_best[kind][static_cast<std::size_t>(dominant(s->point))];
      v = std::max(v, measured_rate(s->point));
    }
  auto measures_rates = [&](const std::string& kind, const Point& p) {
    const auto& best = kind_best.at(kind);
    const double slower_best = *std::max_element(best.begin() + dominant(p), best.end());
    return measured_rate(p) >= kCovered * slower_best;
  };
  // Each kind's rate increments (kind_free) and the rates they give.
  std::map<std::string, std::array<double, kLevels>> increments;
  auto apply_increments = [&]() {
    for (const auto& [kind, inc] : increments) {
      KindRates& kr = mm.kinds[kind];
      double rate = 0;
      for (int l = kLevels - 1; l >= 0; --l) {
        const auto ul = static_cast<std::size_t>(l);
        kr.rate[ul] = set(inc[ul]) ? (rate += inc[ul]) : kNaN;
      }
    }
    borrow_unpinned_levels(mm, increments);
  };
  // A fit's record names the rates, not the increments; an increment at its floor (0) is a rate at
  // the next slower level's, which the record says.
  auto record_rates = [&](Fit& fit, const std::string& kind, const std::string& prefix) {
    const auto& inc = increments.at(kind);
    const KindRates& kr = mm.kinds.at(kind);
    for (int l = 0; l < kLevels; ++l) {
      const auto ul = static_cast<std::size_t>(l);
      if (!set(inc[ul])) continue;
      const std::string name = prefix + level_name(static_cast<Level>(l)) + "_rate";
      int next = l + 1;
      while (next < kLevels && !set(inc[static_cast<std::size_t>(next)])) ++next;
      for (FittedValue& v : fit.values)
        if (v.name == name) {
          v.value = kr.rate[ul];
          if (next < kLevels && inc[ul] <= 1e-5 * kr.rate[ul])
            v.status = std::string("at the ") + level_name(static_cast<Level>(next)) +
                       "'s rate: these points would take a lower one, but a level nearer the core serves its bytes "
                       "at least as fast as the levels behind it";
        }
    }
  };
  // Free values of one kind: its rates at the levels its points reach, its gain if a point runs
  // on several threads. The unpinned ones are listed as such.
  auto kind_free = [&](const std::string& kind, const std::string& prefix, std::vector<Free>& free,
                       std::vector<FittedValue>& unpinned) {
    const auto& pts = by_kind[kind];
    KindRates& kr = mm.kinds[kind];
    kr.rate.fill(kNaN);
    kr.gain = kNaN;
    std::array<std::vector<double>, kLevels> rates;
    std::array<bool, kLevels> covered{};
    bool multi = false;
    for (const Sample* s : pts) {
      const auto f = fractions(s->point);
      if (measures_rates(kind, s->point)) {
        for (int l = 0; l < kLevels; ++l)
          covered[static_cast<std::size_t>(l)] =
              covered[static_cast<std::size_t>(l)] || f[static_cast<std::size_t>(l)] >= kCovered;
        rates[static_cast<std::size_t>(dominant(s->point))].push_back(measured_rate(s->point));
      }
      multi = multi || kernel_threads(s->point) > 1;
    }
    std::vector<double> all;
    for (const Sample* s : pts) all.push_back(measured_rate(s->point));
    const double fallback = median_of(all);
    // The model reads a kind's rates as monotone (kind_rate: a level's is at least the slower
    // levels'), so the fit's unknowns are increments: the slowest pinned level's rate, and what each
    // faster pinned level adds to the next slower one's (>= 0; apply_increments). Fitting the rates
    // themselves left a faster level started below a slower one where nothing depends on it (a
    // level's points measure below its rate: the slower levels serve part of them) and let an
    // iteration strand it there. Each rate starts 10% above the next slower level's start.
    std::array<double, kLevels> step{};  // each pinned level's increment's start
    double slower = 0;                   // the next slower pinned level's rate's start
    for (int l = kLevels - 1; l >= 0; --l) {
      const auto ul = static_cast<std::size_t>(l);
      if (!covered[ul]) continue;
      const double start = std::max(rates[ul].empty() ? fallback : median_of(rates[ul]), 1.1 * slower);
      step[ul] = start - slower;
      slower = start;
    }
    auto& inc = increments[kind];
    inc.fill(kNaN);
    for (int l = 0; l < kLevels; ++l) {
      const auto ul = static_cast<std::size_t>(l);
      const std::string name = prefix + level_name(static_cast<Level>(l)) + "_rate";
      if (!covered[ul]) {
        unpinned.push_back(FittedValue{name, kNaN, true, false,
                                       std::string("not pinned: no training point of this kind that measured a rate "
                                                   "(not its fixed costs) is served from the ") +
                                           level_name(static_cast<Level>(l)) +
                                           " (the model takes the nearest slower level's rate there)",
                                       true});
        continue;
      }
      free.push_back(Free{name, &inc[ul], step[ul], true});
    }
    if (multi) free.push_back(Free{prefix + "thread_gain", &kr.gain, 1.0, false, 0.0, true});
    else
      unpinned.push_back(FittedValue{prefix + "thread_gain", kNaN, false, true,
                                     "not pinned: every training point of this kind ran on one thread", true});
  };
  // Shared values: from the copies, else from the reduces (then fitted with every reduce group at once).
  const bool have_copies = !copy_kinds.empty();
  std::vector<const Sample*> first;
  for (const auto& k : have_copies ? copy_kinds : reduce_kinds) first.insert(first.end(), by_kind[k].begin(), by_kind[k].end());
  std::vector<Free> free;
  std::vector<FittedValue> unpinned;
  double smallest = std::numeric_limits<double>::infinity();
  bool multi = false;
  std::array<double, kLevels> top{};
  std::array<bool, kLevels> capped{};
  for (const Sample* s : first) {
    smallest = std::min(smallest, s->point.time_median);
    const int n = kernel_threads(s->point);
    if (n > 1) {
      multi = true;
      const auto f = fractions(s->point);
      for (int l : {static_cast<int>(Level::Llc), static_cast<int>(Level::Dram)})
        if (f[static_cast<std::size_t>(l)] >= kCovered) {
          capped[static_cast<std::size_t>(l)] = true;
          top[static_cast<std::size_t>(l)] =
              std::max(top[static_cast<std::size_t>(l)],
                       measured_rate(s->point) * n / counted_share(model_kind(m, s->point), s->point.k));
        }
    }
  }
  free.push_back(Free{"call_latency", &mm.call_latency, 0.1 * smallest, false, 0.0});
  if (multi) free.push_back(Free{"fork_cost", &mm.fork_cost, 0.5 * smallest, false, 0.0});
  else unpinned.push_back(FittedValue{"fork_cost", kNaN, false, false, "not pinned: every training point ran on one thread", true});
  free.push_back(Free{"transition_sharpness", &mm.sharpness, kSharpnessStart, false, 0.5, true});
  for (Level l : {Level::Llc, Level::Dram}) {
    const auto ul = static_cast<std::size_t>(l);
    const std::string name = std::string(level_name(l)) + "_shared_bandwidth";
    if (capped[ul]) free.push_back(Free{name, &mm.shared[ul], 2 * top[ul], true});
    else
      unpinned.push_back(FittedValue{name, kNaN, true, false,
                                     std::string("not pinned: no training point on several threads is served from the ") + level_name(l),
                                     true});
  }
  const std::string method =
      "Levenberg-Marquardt through the simulator (analytic engine), from the best of a log-spaced scan";
  // Where several threads share a cap, a rate above it is flat (min(n r, cap) ignores it) and a local
  // method started there stays: the one-thread points (below the caps) give the rates first.
  auto warm_start = [&](const std::vector<std::string>& kinds, std::size_t prefix, std::vector<Free>& all) {
    std::vector<const Sample*> one;
    for (const auto& k : kinds)
      for (const Sample* s : by_kind[k])
        if (kernel_threads(s->point) == 1) one.push_back(s);
    std::vector<Free> f{all[0]};
    for (const Free& x : all)
      if (x.name == "transition_sharpness") f.push_back(x);
    std::vector<FittedValue> u;
    for (const auto& k : kinds) {
      std::vector<Free> kf;
      kind_free(k, k.substr(prefix) + "_", kf, u);
      for (const Free& x : kf)
        if (x.name.find("thread_gain") == std::string::npos) f.push_back(x);
    }
    const std::size_t before = c.fits.size();
    fitter.fit("warm start", "", "", Regime::Dram, one, f, false, true, {}, apply_increments);
    while (c.fits.size() > before) c.fits.pop_back();
    for (Free& x : all)  // start the full fit where the warm start ended
      if (set(*x.slot) && *x.slot > 0) x.start = *x.slot;
  };
  if (have_copies) {
    for (const auto& k : copy_kinds) kind_free(k, k.substr(5) + "_", free, unpinned);
    warm_start(copy_kinds, 5, free);
    const std::size_t fits = c.fits.size();
    fitter.fit("memory model: copies", "copy", "", Regime::Dram, first, free, false, true, unpinned, apply_increments);
    if (c.fits.size() > fits)
      for (const auto& k : copy_kinds) record_rates(c.fits.back(), k, k.substr(5) + "_");
    for (const auto& k : reduce_kinds) {
      std::vector<Free> f;
      std::vector<FittedValue> u;
      kind_free(k, "", f, u);
      const std::size_t before = c.fits.size();
      fitter.fit("memory model: reduce", "reduce", k.substr(7), Regime::Dram, by_kind[k], f, false, true, u,
                 apply_increments);
      if (c.fits.size() > before) record_rates(c.fits.back(), k, "");
    }
  } else {
    for (const auto& k : reduce_kinds) kind_free(k, k.substr(7) + " ", free, unpinned);
    const std::size_t fits = c.fits.size();
    fitter.fit("memory model: reduces", "reduce", "", Regime::Dram, first, free, false, true, unpinned,
               apply_increments);
    if (c.fits.size() > fits)
      for (const auto& k : reduce_kinds) record_rates(c.fits.back(), k, k.substr(7) + " ");
  }
  (void)method;
  record_borrowed(c, increments);
}

}  // namespace

Calibration calibrate(const BenchModel& m, const std::vector<Sample>& training, eval::Engine& engine, int threads) {
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

  c.emulated_devices = !m.node.gpus.empty() && m.node.gpus.front().gpu.emulated();
  c.cores = 0;
  for (const auto& sk : m.node.sockets) c.cores += sk.cpu.cores;
  c.cores = std::max(1, c.cores);
  {  // the inputs of the node group's reduces (the most common k)
    std::map<int, int> ks;
    for (const auto& s : training)
      if (s.point.stage == "reduce" && reduce_group(s.point) == c.node_reduce_group) ++ks[s.point.k];
    int best = 0;
    for (const auto& [k, n] : ks)
      if (n > best) {
        best = n;
        c.node_reduce_k = k;
      }
  }
  c.memory = unset_memory_model();
  Fitter fitter(m, c, engine, threads);
  fit_memory(fitter, m, c, training);
  // An emulated device's copy is a copy thread's memcpy: the memory model gives its link.
  const bool link_from_memory = c.memory.kinds.count("copy memcpy") && !m.node.gpus.empty() && m.node.gpus.front().gpu.emulated();
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
        if (!link_from_memory)
          free.push_back(Free{param_name(Param::DeviceLink), &at(base, Param::DeviceLink), y > 0 ? 1 / y : kNaN, true});
        if (!set(known))
          free.push_back(Free{param_name(Param::DeviceLatency), &at(base, Param::DeviceLatency), std::max(lat, 0.0), false,
                              kLatencyFloor});
      }
      if (!bidir.empty()) {
        // The host backend's bidir holds two latencies (bench_model.cpp's simulate: its second synchronize).
        const bool host = bidir.front()->point.backend == "host";
        const auto [l2, y2] = line(bidir, 2.0, false, (host ? 2 : 1) * std::max(lat, 0.0));
        (void)l2;
        free.push_back(Free{param_name(Param::Duplex), &at(base, Param::Duplex), y2 > 0 ? 1 / y2 : cur(Param::Duplex), true});
      }
      std::vector<const Sample*> all = dev;
      all.insert(all.end(), bidir.begin(), bidir.end());
      fitter.fit("device copies", bidir.empty() ? "d2h+h2d" : dev.empty() ? "bidir" : "d2h+h2d+bidir", "", r, all, free,
                 !dev.empty());
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

std::vector<int> fold_of(const std::vector<Sample>& samples, int folds) {
  FFSIM_ASSERT(folds >= 2, "fold_of: at least 2 folds");
  std::vector<int> fold(samples.size(), -1);
  std::map<std::string, std::vector<std::size_t>> series;
  for (std::size_t i = 0; i < samples.size(); ++i) series[series_key(samples[i])].push_back(i);
  std::size_t q = 0;
  for (auto& [key, idx] : series) {
    std::stable_sort(idx.begin(), idx.end(),
                     [&](std::size_t a, std::size_t b) { return samples[a].point.bytes < samples[b].point.bytes; });
    if (idx.size() > 1)
      for (std::size_t j = 0; j < idx.size(); ++j)
        fold[idx[j]] = static_cast<int>((q + j) % static_cast<std::size_t>(folds));
    ++q;
  }
  return fold;
}

}  // namespace ffsim::calib
