// Fitting the simulator's parameters to measured runs (`ffsim calibrate`), and the holdout split
// `ffsim validate` refits on.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "calib/bench_model.hpp"
#include "calib/measurement.hpp"

namespace ffsim::calib {

/// One measured configuration as calibration uses it.
struct Sample {
  std::string file;  ///< the measurement file it came from
  Point point;
  Regime regime = Regime::Dram;
  /// Why the point is an outlier ("" if it is not): see samples_of.
  std::string outlier;
  /// Runs of the configuration merged into this sample (see samples_of), and their spread: the mean
  /// of |t_i - mean| / mean over the runs' median times (0 for one run).
  int runs = 1;
  double run_spread = 0;
};

/// The points of `files`, each checked against the node model (check_machine) and given its
/// regime. Outlier rule (deterministic): within a series (same file and configuration), a point
/// whose median time exceeds that of a larger size is non-monotone (moving more bytes cannot take
/// less time on an undisturbed machine) and is marked as an outlier. hfreduce-bench sweeps sizes
/// upwards, so the smaller point is the one measured first (thread start-up, first-touch faults).
/// Calibration does not fit outliers; validate reports them apart.
/// Repeated runs: a configuration (stage, parameters and size) found in several files (or twice in
/// one), or measured in several rounds of one file (hfreduce-bench --rounds), is one sample whose
/// time is the median of the runs' (rounds') median times (min and max over all runs); `file` names
/// every file, and the runs' spread is kept: on a shared machine it is the noise floor that no
/// model's error can be expected to beat.
[[nodiscard]] std::vector<Sample> samples_of(const BenchModel& m, const std::vector<MeasurementFile>& files);

/// A value a fit produced.
struct FittedValue {
  std::string name;     ///< param_name(), or a recorded quantity ("copy_bandwidth")
  double value = 0;     ///< SI: bytes per second or seconds
  bool bandwidth = true;
  std::string status;   ///< "fitted", "not pinned: ...", "recorded: ..."
  bool applied = true;  ///< feeds the simulator (params_for); recorded values do not
};

/// A measured point and what the fitted model gives for it.
struct FitPoint {
  std::string file, pointer;
  double bytes = 0;
  double measured = 0;  ///< seconds (the median of the repetitions)
  double model = 0;     ///< seconds
  [[nodiscard]] double residual() const { return (model - measured) / measured; }
};

/// One least-squares fit: which stages and points, by what method, with what result.
struct Fit {
  std::string name;    ///< "memory copy", "device copies", ...
  std::string stages;  ///< "copy", "d2h+h2d", ...
  std::string group;   ///< "", "1 thread", "avx512 fp32 regular", "2 ranks"
  Regime regime = Regime::Dram;
  std::string method;
  std::vector<FittedValue> values;
  std::vector<FitPoint> points;
  double rms = 0;      ///< root mean square of the relative residuals (model - measured) / measured
  double max_abs = 0;  ///< largest |relative residual|
};

/// Everything a calibration fitted. Weighting: every fit minimizes the squared *relative*
/// residuals, so that a 4 KiB copy counts as much as a 1 GiB one.
struct Calibration {
  std::string node;
  double llc = 0;
  ParamSet published;
  std::array<ParamSet, 2> base;                                  ///< by regime; NaN: not fitted
  std::map<std::string, std::array<double, 2>> reduce;           ///< per-core reduce rate by group, by regime
  std::map<int, std::array<std::array<double, 2>, 2>> transport; ///< by ranks, by regime: {bandwidth, latency}
  std::string node_reduce_group;  ///< the reduce group the node model takes (what HFReduce's pipeline runs)
  int node_ranks = 0;             ///< the rank count whose transport the node model takes (0: none)
  std::vector<Fit> fits;
};

/// Fits, for each regime (cache, then DRAM), in this order: DRAM bandwidth (memory copies; linear
/// least squares), the device link, copy latency and the port's duplex cap together (D2H, H2D and
/// both at once; started from linear least squares), the per-core reduce rate per (ISA, dtype,
/// stores) group, the pipeline's per-chunk overhead, and the transport's latency and bandwidth per
/// rank count (by Levenberg-Marquardt through the simulator, analytic engine). Latencies and the
/// chunk overhead come from the cache regime (small sizes) when it has points; the DRAM regime
/// keeps them, so that its pipelines and whole allreduces are predictions of the other fits.
[[nodiscard]] Calibration calibrate(const BenchModel& m, const std::vector<Sample>& training);

/// "avx512 fp32 regular": the group a reduce point's rate is fitted in.
[[nodiscard]] std::string reduce_group(const Point& pt);

/// What to simulate `pt` (of regime `r`) with: the regime's fitted values, else the other
/// regime's, else the node model's.
[[nodiscard]] ParamSet params_for(const Calibration& c, const Point& pt, Regime r);

/// The values the node model takes (NaN where nothing was fitted): the DRAM regime's, else the
/// cache regime's; the reduce rate of node_reduce_group; the transport of node_ranks.
[[nodiscard]] ParamSet node_params(const Calibration& c);

/// Series key of a point: its file and configuration (everything but the size).
[[nodiscard]] std::string series_key(const Sample& s);

/// The holdout split of `validate`: within each series (same file and configuration, sorted by
/// size) of n points, m = round(fraction x n) points (at most n - 1) at positions
/// floor((j + 1/2) n / m), j = 0..m-1, are held out. Deterministic; fraction 0 holds out none.
[[nodiscard]] std::vector<bool> holdout_mask(const std::vector<Sample>& samples, double fraction);

}  // namespace ffsim::calib
