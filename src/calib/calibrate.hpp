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
/// regime. Outlier rule (deterministic): within a series (same configuration), a point
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
  bool number = false;  ///< dimensionless (a thread gain, a sharpness); else a bandwidth or a time
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
  bool levels = false;  ///< a fit of the memory model, over every memory level (its regime is not used)
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
  MemoryModel memory = unset_memory_model();                     ///< copies and reduces, every level
  std::map<int, std::array<std::array<double, 2>, 2>> transport; ///< by ranks, by regime: {bandwidth, latency}
  std::string node_reduce_group;  ///< the reduce group the node model takes (what HFReduce's pipeline runs)
  bool emulated_devices = false;  ///< the node's devices are host memory (their link: a copy thread's memcpy)
  int cores = 1;                  ///< the node model's cores (the memory model's DRAM rate of all of them)
  int node_reduce_k = 8;          ///< inputs of that group's measured reduces (its traffic rate x k / (k + 1) is the input rate)
  int node_ranks = 0;             ///< the rank count whose transport the node model takes (0: none)
  std::vector<Fit> fits;
};

/// Fits first the memory model (bench_model.hpp) to the copies and reduces of every level together:
/// the call latency, fork cost, transition sharpness, the LLC's and DRAM's shared caps and each copy
/// kind's rates per level and thread gain to the copies, then each reduce group's rates and gain
/// to its reduces. Then, for each regime (cache, then DRAM), the composed stages: the device link
/// (unless the memory model gives it: an emulated device's copy thread is a memcpy), copy latency and the port's duplex
/// cap together (D2H, H2D and both at once; started from linear least squares), the per-core reduce rate per (ISA,
/// dtype, stores) group, the pipeline's per-chunk overhead, and the transport's latency and bandwidth per rank count
/// (by Levenberg-Marquardt through the simulator on `engine`: the fluid engine, which the application layer passes in).
/// Latencies and the chunk overhead come from the cache regime (small sizes) when it has points; the DRAM regime keeps
/// them, so that its pipelines and whole allreduces are predictions of the other fits. `threads`: each evaluation of a
/// fit simulates its points on up to this many threads at once
/// (`engine` must allow concurrent runs, as the fluid engine does); the result does not depend on it.
[[nodiscard]] Calibration calibrate(const BenchModel& m, const std::vector<Sample>& training, eval::Engine& engine,
                                    int threads = 1);

/// "avx512 fp32 regular": the group a reduce point's rate is fitted in.
[[nodiscard]] std::string reduce_group(const Point& pt);

/// What to simulate `pt` (of regime `r`) with: the regime's fitted values, else the other
/// regime's, else the node model's.
[[nodiscard]] ModelParams params_for(const Calibration& c, const Point& pt, Regime r);

/// The values the node model takes (NaN where nothing was fitted): the DRAM regime's, else the
/// cache regime's; from the memory model, the DRAM rate all cores' memcpy reaches and the DRAM
/// input rate of one core of node_reduce_group; the transport of node_ranks.
[[nodiscard]] ParamSet node_params(const Calibration& c);

/// Series key of a point: its configuration (everything but the size), whichever files measured
/// it. samples_of makes one sample per configuration and size, so a series is one configuration's
/// sizes: a size repeated in a second file (its sample's `file` then names both) stays in the
/// series of the sizes measured once, and adding a repeat run does not split the series that the
/// outlier rule and the holdout split work on.
[[nodiscard]] std::string series_key(const Sample& s);

/// The holdout split of `validate`: within each series (same configuration, sorted by
/// size) of n points, m = round(fraction x n) points (at most n - 1) at positions
/// floor((j + 1/2) n / m), j = 0..m-1, are held out. Deterministic; fraction 0 holds out none.
[[nodiscard]] std::vector<bool> holdout_mask(const std::vector<Sample>& samples, double fraction);

/// The folds of `validate --folds K` (cross-validation: every point predicted once, by a fit to the
/// other folds): the q-th series in key order (same configuration, sorted by size) deals its points
/// in size order to folds q, q + 1, ... (mod K), so that no fold holds every series' smallest or
/// largest size. A series of one point is in no fold (-1): held out, its configuration would have
/// no point in the fit. Deterministic; K >= 2.
[[nodiscard]] std::vector<int> fold_of(const std::vector<Sample>& samples, int folds);

}  // namespace ffsim::calib
