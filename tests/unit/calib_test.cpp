// Tests of calibration: the least-squares solvers, the planted check (the simulator's own
// measurements give back the parameters they came from), the holdout split, the outlier rule,
// regimes, machine checks and calibration files.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "app/engines.hpp"
#include "calib/bench_model.hpp"
#include "calib/calibrate.hpp"
#include "calib/calibration_file.hpp"
#include "calib/lsq.hpp"
#include "config/calibration_reader.hpp"
#include "config/catalog.hpp"
#include "config/hw_reader.hpp"
#include "config/measurement_reader.hpp"
#include "core/error.hpp"
#include "test_catalog.hpp"

using namespace ffsim;
using namespace ffsim::calib;
using namespace ffsim::config;

namespace {

constexpr double KiB = 1024.0, MiB = 1048576.0;

Point point(const std::string& stage, double bytes) {
  Point p;
  p.stage = stage;
  p.backend = stage == "copy" || stage == "reduce" ? "cpu" : stage == "internode" ? "mpi" : "host";
  p.dtype = "fp32";
  p.ranks = 1;
  p.bytes = bytes;
  return p;
}

// An empty measurement file of the Zen 5 CI VM (the machine record epyc_zen5_2c_vm's node model
// checks: its name, CPU, 2 CPUs, one NUMA node, its 25.3 GB).
MeasurementFile zen5_file(const std::string& name) {
  MeasurementFile f;
  f.file = name;
  f.machine.name = "epyc-zen5-2c-vm";
  f.machine.cpu_model = "AMD EPYC";
  f.machine.memory_bytes = 25276026880;
  f.machine.usable_cpus = 2;
  f.machine.numa_nodes = 1;
  return f;
}

}  // namespace

TEST_CASE("calib::linear_least_squares: exact lines, weights, rank deficiency") {
  SUBCASE("a line through exact points comes back exactly") {
    // time = 2 us + bytes / 10 GB/s at 1, 2, 4 MB: x = (2e-6, 1e-10)
    std::vector<std::vector<double>> a{{1, 1e6}, {1, 2e6}, {1, 4e6}};
    std::vector<double> b{2e-6 + 1e-4, 2e-6 + 2e-4, 2e-6 + 4e-4}, w{1, 1, 1};
    const auto x = linear_least_squares(a, b, w);
    CHECK(x[0] == doctest::Approx(2e-6).epsilon(1e-9).scale(ffsim::testing::kRelative));
    CHECK(x[1] == doctest::Approx(1e-10).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  SUBCASE("weights move the fit towards the heavier point") {
    // y = c fitted to {0, 1}: unweighted mean 0.5; weights 1 and 3: (0 + 9 x 1) / (1 + 9) = 0.9
    const auto x = linear_least_squares({{1}, {1}}, {0, 1}, {1, 3});
    CHECK(x[0] == doctest::Approx(0.9).epsilon(1e-12).scale(ffsim::testing::kRelative));
  }
  SUBCASE("a column of zeros gets the minimum-norm answer 0") {
    const auto x = linear_least_squares({{1, 0}, {2, 0}}, {1, 2}, {1, 1});
    CHECK(x[0] == doctest::Approx(1.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(x[1] == doctest::Approx(0.0));
  }
}

TEST_CASE("calib::levenberg_marquardt: a nonlinear fit, bounds, and a parameter nothing depends on") {
  // r_i = a * exp(-b t_i) - y_i with y from a = 3, b = 0.5: LM recovers (3, 0.5) from (1, 1).
  const std::vector<double> t{0, 1, 2, 3, 4};
  auto r = [&](const std::vector<double>& x) {
    std::vector<double> v;
    for (double ti : t) v.push_back(x[0] * std::exp(-x[1] * ti) - 3 * std::exp(-0.5 * ti) + 0 * x[2]);
    return v;
  };
  const LmResult res = levenberg_marquardt(r, {1, 1, 7}, {0, 0, 0});
  CHECK(res.x[0] == doctest::Approx(3.0).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(res.x[1] == doctest::Approx(0.5).epsilon(1e-9).scale(ffsim::testing::kRelative));
  // x[2] enters no residual: it keeps its start value and both of its sensitivities are 0.
  CHECK(res.x[2] == 7);
  CHECK(res.sensitivity_up[2] == 0);
  CHECK(res.sensitivity_down[2] == 0);
  CHECK(res.sensitivity_up[0] > 0);
  SUBCASE("a lower bound holds") {
    // minimize (x - (-2))^2 with x >= 0: the answer is the bound 0.
    const LmResult b = levenberg_marquardt([](const std::vector<double>& x) { return std::vector<double>{x[0] + 2}; },
                                           {5}, {0});
    CHECK(b.x[0] == 0);
  }
  SUBCASE("a bound that holds one parameter: the others reach the bounded optimum") {
    // r = (a + b - 1, a + 2b + 1): unbounded optimum b = -2, a = 3; with b >= 0 the optimum is
    // b = 0 and a minimizing (a - 1)^2 + (a + 1)^2: a = 0, cost 2. From (2, 1) the unbounded step
    // leaves b below its bound; held there (the gradient pushes it down), a's step is the
    // one-parameter problem's and the fit ends in a few iterations. Cut back at the bound with b
    // still in the system, the step moved a toward 3 (what b could not do), was refused, and the
    // damping crawled along the bound.
    auto rb = [](const std::vector<double>& x) { return std::vector<double>{x[0] + x[1] - 1, x[0] + 2 * x[1] + 1}; };
    const LmResult b = levenberg_marquardt(rb, {2, 1}, {-10, 0});
    CHECK(b.x[1] == 0);
    CHECK(std::fabs(b.x[0]) < 1e-6);  // (finite-difference Jacobians: 3e-8 here)
    CHECK(b.cost == doctest::Approx(2.0).epsilon(1e-12).scale(ffsim::testing::kRelative));
    CHECK(b.iterations <= 10);
  }
}

namespace {

// A memory model with every value set: the Xeon VM's caches (48 KiB L1, 2 MiB L2, 105 MiB LLC),
// rates per kind and level (traffic bytes per second and thread), gains below 1, and shared caps
// chosen to bind. The caps bound physical traffic, of which a memcpy's counted traffic is 2/3
// (ordinary stores read each line first: counted_share): DRAM 45 x 2/3 = 30 GB/s < 18 GB/s x
// (1 + 0.9) on 2 threads; the LLC 60 x 2/3 = 40 GB/s < 25 x 1.9.
MemoryModel planted_memory() {
  MemoryModel mm = unset_memory_model();
  mm.call_latency = 0.4e-6;
  mm.fork_cost = 12e-6;
  mm.sharpness = 3.5;
  mm.shared[static_cast<std::size_t>(Level::Llc)] = 60e9;
  mm.shared[static_cast<std::size_t>(Level::Dram)] = 45e9;
  mm.kinds["copy memcpy"] = KindRates{{300e9, 80e9, 25e9, 18e9}, 0.9};
  mm.kinds["copy kernel_regular"] = KindRates{{250e9, 60e9, 20e9, 12e9}, 0.95};
  mm.kinds["copy kernel_nt"] = KindRates{{140e9, 120e9, 35e9, 16e9}, 0.85};
  mm.kinds["reduce avx512 fp32 regular"] = KindRates{{110e9, 70e9, 22e9, 17e9}, 0.6};
  mm.kinds["reduce scalar bf16 nt"] = KindRates{{2.6e9, 2.4e9, 2.2e9, 2.1e9}, 0.4};
  return mm;
}

// The memory model above and node values chosen so that each binds where it is fitted on the
// Xeon VM's node model: a D2H's link is the memory model's one-thread memcpy (half its traffic
// rate), both directions at once are capped by the duplex (12 GB/s < 2 links: 2 x 9 GB/s from
// DRAM), the pipeline's per-chunk overhead is on its critical path, and the tree's transport binds.
ModelParams planted_params() {
  ModelParams truth;
  truth.memory = planted_memory();
  truth.reduce_kind = "reduce avx512 fp32 regular";
  at(truth.node, Param::DeviceLatency) = 9e-6;
  at(truth.node, Param::Duplex) = 12e9;
  at(truth.node, Param::ChunkOverhead) = 100e-6;
  at(truth.node, Param::NicBandwidth) = 5e9;
  at(truth.node, Param::NicLatency) = 40e-6;
  return truth;
}

// Copies and k = 8 reduces of every planted kind at the bench's sizes (copies 18 KiB x 4^i, reduces
// 4 KiB x 4^i: every level, and straddling each boundary), on 1 and 2 threads.
std::vector<Point> kernel_points(const MemoryModel& mm, int max_threads, int sizes) {
  std::vector<Point> pts;
  for (const auto& [kind, rates] : mm.kinds) {
    (void)rates;
    const bool copy = kind.rfind("copy ", 0) == 0;
    for (int t = 1; t <= max_threads; ++t)
      for (int i = 0; i < sizes; ++i) {
        Point p = point(copy ? "copy" : "reduce", (copy ? 18 * KiB : 4 * KiB) * std::pow(4.0, i));
        p.threads = t;
        if (copy) {
          p.variant = kind.substr(5);
        } else {
          const std::string g = kind.substr(7);
          p.variant = g.substr(0, g.find(' '));
          p.dtype = g.substr(g.find(' ') + 1, g.rfind(' ') - g.find(' ') - 1);
          p.store = g.substr(g.rfind(' ') + 1);
          p.k = 8;
        }
        pts.push_back(p);
      }
  }
  return pts;
}

std::vector<Sample> measure(const BenchModel& m, const ModelParams& truth, std::vector<Point> pts) {
  eval::FluidEngine fluid;
  std::vector<Sample> samples;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    Point& p = pts[i];
    p.pointer = "/points/" + std::to_string(i);
    p.time_median = simulate(m, truth, p, fluid);
    REQUIRE(p.time_median > 0);
    samples.push_back(Sample{"planted.json", p, regime_of(m, p), ""});
  }
  return samples;
}

void check_rel(double got, double want) { CHECK(got == doctest::Approx(want).epsilon(1e-6).scale(ffsim::testing::kRelative)); }

// Every planted kind's rate at every level came back (1e-6 relative).
void check_rates(const MemoryModel& got, const MemoryModel& planted) {
  for (const auto& [kind, rates] : planted.kinds)
    for (int l = 0; l < kLevels; ++l) {
      CAPTURE(kind);
      CAPTURE(l);
      check_rel(got.kinds.at(kind).rate[static_cast<std::size_t>(l)], rates.rate[static_cast<std::size_t>(l)]);
    }
}

// The Xeon VM's node model without glibc's streaming switch (memcpy_streaming = 0: every memcpy takes
// the memcpy kind's rates), which the tests of the memory model itself use; the switch has its own.
BenchModel xeon_without_switch() {
  BenchModel m = make_bench_model(ffsim::testing::catalog(), "xeon_2c_vm");
  m.memcpy_streaming = 0;
  return m;
}

}  // namespace

TEST_CASE("calib: the memory model is the time of a kernel call, level by level") {
  // One memcpy on 2 threads of 1 GiB: per-thread working set 1 GiB, far above L1 and L2 (fractions
  // 1/(1 + (W/C)^3.5) ~ 1e-14 and 1e-10) and W = 2 GiB above the LLC (105 MiB: h = 3e-5): DRAM serves
  // the rest. R = min((1 + 0.9) x 18 GB/s, 45 GB/s x 2/3) = 30 GB/s (the cap bounds physical traffic,
  // 3 bytes for the 2 a copy with ordinary stores counts); t = 0.4 us + 12 us + 2 GiB / 30 GB/s, the
  // LLC's share at min(1.9 x 25 GB/s, 60 GB/s x 2/3).
  const BenchModel m = xeon_without_switch();
  CHECK(m.l1 == 48 * KiB);
  CHECK(m.l2 == 2 * MiB);
  CHECK(m.llc == 105 * MiB);
  const MemoryModel mm = planted_memory();
  Point p = point("copy", 1024 * MiB);
  p.variant = "memcpy";
  p.threads = 2;
  const auto f = level_fractions(m, mm.sharpness, 2 * p.bytes, 2);
  CHECK(f[3] > 0.9999);
  CHECK(f[0] + f[1] + f[2] + f[3] == doctest::Approx(1.0));
  const double llc_part = f[2] * 2 * p.bytes / 30e9 - f[2] * 2 * p.bytes / std::min(1.9 * 25e9, 60e9 * 2 / 3);
  check_rel(kernel_seconds(m, mm, p), 0.4e-6 + 12e-6 + 2 * p.bytes / 30e9 - llc_part);
  // The Reducer hands each thread >= 64 KiB of output: a 4 KiB reduce on 2 threads runs on 1 (no
  // fork cost); a 256 KiB one on 2. The bench's memcpy splits over every thread at any size.
  Point r = point("reduce", 4 * KiB);
  r.variant = "avx512";
  r.store = "regular";
  r.k = 8;
  r.threads = 2;
  CHECK(kernel_threads(r) == 1);
  r.bytes = 256 * KiB;
  CHECK(kernel_threads(r) == 2);
  p.bytes = 4 * KiB;
  CHECK(kernel_threads(p) == 2);
  // A streaming-store copy in L1: the read half at the L1 rate, the written half at DRAM's; only
  // the read half passes through the caches (cached_bytes: 18 KiB, h(L1) = 1/(1 + 0.375^3.5) =
  // 0.969, h(L2) over the rest = 1/(1 + (18 KiB / 2 MiB)^3.5) ~ 1 - 6e-8), so
  // t = 0.4 us + 18 KiB x (0.969 / 140 GB/s + 0.031 / 120 GB/s) + 18 KiB / 16 GB/s.
  Point nt = point("copy", 18 * KiB);
  nt.variant = "kernel_nt";
  nt.threads = 1;
  CHECK(cached_bytes(m, nt) == 18 * KiB);
  {
    const double h1 = 1 / (1 + std::pow(18.0 / 48, 3.5)), h2 = 1 / (1 + std::pow(18.0 / 2048, 3.5));
    const double h3 = 1 / (1 + std::pow(18.0 / (105 * 1024), 3.5));
    const double l2 = (1 - h1) * h2, l3 = (1 - h1) * (1 - h2) * h3, l4 = 1 - h1 - l2 - l3;
    check_rel(kernel_seconds(m, mm, nt),
              0.4e-6 + 18 * KiB * (h1 / 140e9 + l2 / 120e9 + l3 / 35e9 + l4 / 16e9) + 18 * KiB / 16e9);
  }
  // The caches hold what is read, and what is written with ordinary stores: a copy 2S, a reduce of
  // k inputs (k + 1)S, with streaming stores S and kS.
  Point regular = nt;
  regular.variant = "kernel_regular";
  CHECK(cached_bytes(m, regular) == 36 * KiB);
  r.store = "nt";
  CHECK(cached_bytes(m, r) == 8 * r.bytes);
  r.store = "regular";
  CHECK(cached_bytes(m, r) == 9 * r.bytes);
  // The simulator runs it: the same time from the engine.
  eval::FluidEngine fluid;
  ModelParams mp;
  mp.memory = mm;
  for (const Point& q : {p, r, nt}) check_rel(simulate(m, mp, q, fluid), kernel_seconds(m, mm, q));
}

TEST_CASE("calib: the shared caps bound physical traffic: ordinary stores read each line before writing it") {
  // Counted traffic is a call's reads plus its writes; an ordinary store that misses the core's
  // caches also reads the line (write-allocate). A copy counts 2 bytes per byte copied and moves 3:
  // share 2/3. A reduce of k inputs counts k + 1 and moves k + 2: k = 1 2/3, k = 8 9/10, k = 16
  // 17/18. Streaming stores write around the caches (share 1), as does an unknown kind.
  CHECK(counted_share("copy memcpy", 0) == doctest::Approx(2.0 / 3));
  CHECK(counted_share("copy kernel_regular", 8) == doctest::Approx(2.0 / 3));
  CHECK(counted_share("copy kernel_nt", 0) == 1);
  CHECK(counted_share("reduce avx512 fp32 regular", 1) == doctest::Approx(2.0 / 3));
  CHECK(counted_share("reduce avx512 fp32 regular", 8) == doctest::Approx(9.0 / 10));
  CHECK(counted_share("reduce avx2 bf16 regular", 16) == doctest::Approx(17.0 / 18));
  CHECK(counted_share("reduce avx2 bf16 regular", 0) == doctest::Approx(2.0 / 3));  // at least one input
  CHECK(counted_share("reduce scalar bf16 nt", 8) == 1);
  CHECK(counted_share("something else", 8) == 1);
  // level_rate: min((1 + (n - 1) g) x rate, cap x share). The planted memcpy at DRAM, 18 GB/s per
  // thread, gain 0.9, cap 45 GB/s: 1 thread 18 (below 30), 2 threads min(34.2, 30) = 30, and a
  // share of 1 (a streaming copy's) leaves the cap at 45: min(34.2, 45) = 34.2.
  const MemoryModel mm = planted_memory();
  const KindRates& memcpy = mm.kinds.at("copy memcpy");
  CHECK(level_rate(mm, memcpy, Level::Dram, 1, 2.0 / 3) == doctest::Approx(18e9));
  CHECK(level_rate(mm, memcpy, Level::Dram, 2, 2.0 / 3) == doctest::Approx(30e9));
  CHECK(level_rate(mm, memcpy, Level::Dram, 2, 1) == doctest::Approx(34.2e9));
  // Two threads of a 4 GiB regular-store copy (DRAM serves all but 1e-4): the same memcpy with
  // streaming stores would run at DRAM's 34.2 GB/s on its read half and 34.2 on its written half;
  // with ordinary stores the cap holds it to 30 GB/s of counted traffic.
  const BenchModel m = xeon_without_switch();
  CHECK(mixed_rate(m, mm, "copy memcpy", 8.0 * 1024 * MiB, 2, 0) == doctest::Approx(30e9).epsilon(1e-3));
}

TEST_CASE("calib: the host backend's bidir waits for a second round trip, a lone copy and CUDA's bidir for one") {
  // hfreduce-bench's bidir synchronizes the D2H stream, then the H2D one; a host stream's copy
  // thread sleeps once its queue is empty, so the second synchronize wakes it again: two latencies
  // (9 us planted) where a lone D2H has one. At 4 bytes the copies themselves take 4 B / 9 GB/s
  // (well under 1 ns), so d2h = 9 us and host bidir = 18 us to 1e-4; CUDA's bidir (its
  // synchronize on a finished stream returns at once) stays at one latency.
  const BenchModel m = xeon_without_switch();
  const ModelParams mp = planted_params();
  eval::FluidEngine fluid;
  for (const char* backend : {"host", "cuda"}) {
    CAPTURE(backend);
    Point d = point("d2h", 4), b = point("bidir", 4);
    d.devices = b.devices = 1;
    d.backend = b.backend = backend;
    CHECK(simulate(m, mp, d, fluid) == doctest::Approx(9e-6).epsilon(1e-4));
    CHECK(simulate(m, mp, b, fluid) == doctest::Approx(std::string(backend) == "host" ? 18e-6 : 9e-6).epsilon(1e-4));
  }
}

TEST_CASE("calib: planted parameters come back from the simulator's own measurements (1e-6 relative)") {
  // The Xeon VM's node model and planted_params(), each value binding where it is fitted.
  const BenchModel m = xeon_without_switch();
  const ModelParams truth = planted_params();

  std::vector<Point> pts = kernel_points(truth.memory, 2, 9);
  for (double S : {16 * KiB, 256 * KiB, 4 * MiB, 64 * MiB, 256 * MiB})
    for (const char* st : {"d2h", "h2d", "bidir"}) {
      Point p = point(st, S);
      p.devices = 1;
      pts.push_back(p);
    }
  for (double S : {1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB}) {
    Point p = point("pipeline", S);
    p.devices = 2;
    p.threads = 2;
    p.chunk_bytes = 256 * KiB;
    pts.push_back(p);
  }
  for (int n : {2, 4})
    for (double S : {128 * KiB, 256 * KiB, 4 * MiB, 8 * MiB}) {
      Point p = point("internode", S);
      p.ranks = n;
      p.chunk_bytes = 512 * KiB;
      pts.push_back(p);
    }
  const std::vector<Sample> samples = measure(m, truth, pts);
  const Calibration c = calibrate(m, samples, *app::make_engine("fluid"));

  // Every memory-model value, shared and per kind.
  const MemoryModel& got = c.memory;
  const MemoryModel& want = truth.memory;
  check_rel(got.call_latency, want.call_latency);
  check_rel(got.fork_cost, want.fork_cost);
  check_rel(got.sharpness, want.sharpness);
  for (Level l : {Level::Llc, Level::Dram}) {
    CAPTURE(level_name(l));
    check_rel(got.shared[static_cast<std::size_t>(l)], want.shared[static_cast<std::size_t>(l)]);
  }
  REQUIRE(got.kinds.size() == want.kinds.size());
  for (const auto& [kind, rates] : want.kinds) {
    CAPTURE(kind);
    REQUIRE(got.kinds.count(kind));
    check_rel(got.kinds.at(kind).gain, rates.gain);
  }
  check_rates(got, want);
  // The composed stages' values, in both regimes.
  for (Regime r : {Regime::Cache, Regime::Dram}) {
    CAPTURE(regime_name(r));
    const ParamSet p = params_for(c, pts.front(), r).node;
    for (Param q : {Param::DeviceLatency, Param::Duplex, Param::ChunkOverhead}) {
      CAPTURE(param_name(q));
      check_rel(at(p, q), at(truth.node, q));
    }
    for (int n : {2, 4}) {
      CAPTURE(n);
      Point q = point("internode", 1);
      q.ranks = n;
      const ParamSet t = params_for(c, q, r).node;
      check_rel(at(t, Param::NicBandwidth), at(truth.node, Param::NicBandwidth));
      check_rel(at(t, Param::NicLatency), at(truth.node, Param::NicLatency));
    }
  }
  // Every fit reproduces its points and says "fitted" for every value.
  for (const Fit& f : c.fits) {
    CAPTURE(f.name);
    CAPTURE(f.group);
    CHECK(f.max_abs < 1e-6);
    for (const FittedValue& v : f.values) {
      CAPTURE(v.name);
      CHECK(v.status == "fitted");
    }
  }
  eval::FluidEngine fluid;
  for (const Sample& smp : samples) {
    CAPTURE(smp.point.pointer);
    check_rel(simulate(m, params_for(c, smp.point, smp.regime), smp.point, fluid), smp.point.time_median);
  }
  // The node model's DRAM view: all cores' memcpy at DRAM, min(1.9 x 18 GB/s, 45 GB/s x 2/3) = 30 GB/s;
  // one core's reduce input rate 17 GB/s x 8/9.
  check_rel(at(node_params(c), Param::DramBandwidth), 30e9);
  check_rel(at(node_params(c), Param::ReducePerCore), 17e9 * 8 / 9);
  CHECK(c.node_ranks == 2);
}

TEST_CASE("calib: the fits give the same values on 1 and 3 threads, bit for bit") {
  // Each evaluation of a fit simulates its points on --threads threads, each residual in its own
  // slot: the vectors Levenberg-Marquardt sees are the ones a run on one thread builds, so every
  // value and every point's model time must be equal, not close. Planted measurements (off the
  // planted values by a size-dependent factor, so that the fits have residuals and move) over
  // every kind of fit: kernels on 1 and 2 threads, device copies, a pipeline, the tree of 2 ranks.
  const BenchModel m = xeon_without_switch();
  const ModelParams truth = planted_params();
  std::vector<Point> pts = kernel_points(truth.memory, 2, 5);
  for (double S : {16 * KiB, 4 * MiB, 64 * MiB})
    for (const char* st : {"d2h", "h2d", "bidir"}) {
      Point p = point(st, S);
      p.devices = 1;
      pts.push_back(p);
    }
  for (double S : {1 * MiB, 16 * MiB}) {
    Point p = point("pipeline", S);
    p.devices = 2;
    p.threads = 2;
    p.chunk_bytes = 256 * KiB;
    pts.push_back(p);
  }
  for (double S : {256 * KiB, 8 * MiB}) {
    Point p = point("internode", S);
    p.ranks = 2;
    p.chunk_bytes = 512 * KiB;
    pts.push_back(p);
  }
  std::vector<Sample> samples = measure(m, truth, pts);
  for (std::size_t i = 0; i < samples.size(); ++i)
    samples[i].point.time_median *= 1 + 0.05 * static_cast<double>(i % 3);
  const Calibration one = calibrate(m, samples, *app::make_engine("fluid"), 1);
  const Calibration three = calibrate(m, samples, *app::make_engine("fluid"), 3);
  REQUIRE(one.fits.size() == three.fits.size());
  REQUIRE(!one.fits.empty());
  // A value no point pins is NaN ("not pinned") in both.
  auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  for (std::size_t i = 0; i < one.fits.size(); ++i) {
    const Fit &a = one.fits[i], &b = three.fits[i];
    CAPTURE(a.name);
    CAPTURE(a.group);
    CHECK(a.name == b.name);
    REQUIRE(a.values.size() == b.values.size());
    for (std::size_t j = 0; j < a.values.size(); ++j) {
      CAPTURE(a.values[j].name);
      CHECK(same(a.values[j].value, b.values[j].value));
      CHECK(a.values[j].status == b.values[j].status);
    }
    REQUIRE(a.points.size() == b.points.size());
    for (std::size_t j = 0; j < a.points.size(); ++j) CHECK(a.points[j].model == b.points[j].model);
  }
  for (const Sample& smp : samples) {
    CAPTURE(smp.point.pointer);
    eval::FluidEngine fluid;
    CHECK(simulate(m, params_for(one, smp.point, smp.regime), smp.point, fluid) ==
          simulate(m, params_for(three, smp.point, smp.regime), smp.point, fluid));
  }
}

TEST_CASE("calib: memory-model edges: one thread, one size per level, a level without points") {
  const BenchModel m = xeon_without_switch();
  ModelParams truth;
  truth.memory = planted_memory();
  auto status = [](const Calibration& c, const std::string& name) {
    for (const Fit& f : c.fits)
      for (const FittedValue& v : f.values)
        if (v.name == name) return v.status;
    return std::string("(absent)");
  };
  SUBCASE("one thread: the fork cost, the gains and the shared caps are not pinned, the rest comes back") {
    const auto samples = measure(m, truth, kernel_points(truth.memory, 1, 9));
    const Calibration c = calibrate(m, samples, *app::make_engine("fluid"));
    CHECK(status(c, "fork_cost").rfind("not pinned", 0) == 0);
    CHECK(status(c, "memcpy_thread_gain").rfind("not pinned", 0) == 0);
    CHECK(status(c, "dram_shared_bandwidth").rfind("not pinned", 0) == 0);
    CHECK(std::isnan(c.memory.fork_cost));
    CHECK(std::isnan(c.memory.kinds.at("copy memcpy").gain));
    CHECK(std::isnan(c.memory.shared[static_cast<std::size_t>(Level::Dram)]));
    check_rel(c.memory.call_latency, truth.memory.call_latency);
    check_rel(c.memory.sharpness, truth.memory.sharpness);
    check_rates(c.memory, truth.memory);
  }
  SUBCASE("no point reaches DRAM: its rates are not pinned (unset, not invented), the others come back") {
    // Copies up to 1.125 MiB and reduces up to 256 KiB: working sets <= 2.25 MiB, far below the LLC.
    const auto samples = measure(m, truth, kernel_points(truth.memory, 2, 4));
    const Calibration c = calibrate(m, samples, *app::make_engine("fluid"));
    // (With 4 sizes per series the other values are weakly conditioned; the full planted case checks
    // their recovery. Here: nothing is invented for the level no point reaches.)
    for (const auto& [kind, rates] : truth.memory.kinds) {
      CAPTURE(kind);
      CHECK(std::isnan(c.memory.kinds.at(kind).rate[static_cast<std::size_t>(Level::Dram)]));
    }
    CHECK(std::isnan(c.memory.shared[static_cast<std::size_t>(Level::Dram)]));
    CHECK(status(c, "memcpy_dram_rate").rfind("not pinned", 0) == 0);
    CHECK(std::isnan(at(node_params(c), Param::DramBandwidth)));
  }
  SUBCASE("rates are monotone: a level's rate is at least the slower levels', and calibration stores them so") {
    // kind_rate reads a level as the fastest of its own and the slower levels' set rates; an unset
    // level takes the nearest slower one's, else (nothing slower is set) the nearest faster one's.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const KindRates k{{10e9, 50e9, 30e9, 20e9}, 1};
    CHECK(kind_rate(k, Level::L1) == 50e9);
    CHECK(kind_rate(k, Level::L2) == 50e9);
    CHECK(kind_rate(k, Level::Llc) == 30e9);
    CHECK(kind_rate(k, Level::Dram) == 20e9);
    const KindRates gaps{{nan, 50e9, nan, 60e9}, 1};
    CHECK(kind_rate(gaps, Level::L1) == 60e9);
    CHECK(kind_rate(gaps, Level::Llc) == 60e9);
    const KindRates top{{10e9, nan, nan, nan}, 1};
    CHECK(kind_rate(top, Level::Dram) == 10e9);
    CHECK(std::isnan(kind_rate(KindRates{{nan, nan, nan, nan}, 1}, Level::L2)));
    // A planted streaming copy whose L1 rate (40 GB/s) is below its L2's (120): the model reads
    // L1 at 120 GB/s, and that is what the measurements pin. The fit's unknowns are increments (the
    // DRAM rate, then what each faster level adds, >= 0): L1's ends at its floor (a relative 1e-6
    // of its scale), the stored L1 rate is L2's, and the fit's record says so. Fitting the rates
    // themselves, an L1 rate below L2's (where its points' traffic rates start it: their written
    // half goes to DRAM at 16 GB/s) would change nothing and stay there.
    ModelParams nt;
    nt.memory = unset_memory_model();
    nt.memory.call_latency = 0.4e-6;
    nt.memory.sharpness = 3.5;
    nt.memory.kinds["copy kernel_nt"] = KindRates{{40e9, 120e9, 35e9, 16e9}, 1};
    const auto samples = measure(m, nt, kernel_points(nt.memory, 1, 9));
    const Calibration c = calibrate(m, samples, *app::make_engine("fluid"));
    const auto& r = c.memory.kinds.at("copy kernel_nt").rate;
    check_rel(r[static_cast<std::size_t>(Level::L2)], 120e9);
    check_rel(r[static_cast<std::size_t>(Level::L1)], r[static_cast<std::size_t>(Level::L2)]);
    CHECK(r[static_cast<std::size_t>(Level::L1)] >= r[static_cast<std::size_t>(Level::L2)]);
    CHECK(status(c, "kernel_nt_l1_rate").rfind("at the l2's rate", 0) == 0);
    for (const Sample& s : samples) check_rel(kernel_seconds(m, c.memory, s.point), s.point.time_median);
  }
  SUBCASE("a level no point of a kind reaches borrows its peers' ratio to the next pinned level") {
    // memcpy without its L1 points (a per-thread working set under 200 KiB: 18 KiB on 1 and 2
    // threads, 72 KiB on 2, whose L1 shares at the start's sharpness are >= 5%): its L1 rate is
    // its L2 rate times kernel_regular's L1 / L2 (the same stores; kernel_nt streams: not a peer).
    // Planted so: memcpy L1 = 80 GB/s x 250 / 60, so the model with the borrowed rate is the truth
    // and every value comes back, the borrowed one too (the 72 KiB one-thread point keeps 2% of its
    // bytes in L1 at the planted sharpness: the fit sees the borrowed rate).
    ModelParams t = truth;
    t.memory.kinds["copy memcpy"].rate[0] = 80e9 * 250 / 60;
    std::vector<Point> pts;
    for (const Point& p : kernel_points(t.memory, 2, 9))
      if (!(p.variant == "memcpy" && 2 * p.bytes / p.threads < 200 * KiB)) pts.push_back(p);
    const auto samples = measure(m, t, pts);
    const Calibration c = calibrate(m, samples, *app::make_engine("fluid"));
    check_rates(c.memory, t.memory);
    CHECK(status(c, "memcpy_l1_rate").find("median ratio of the two levels' rates of the other copy regular kinds") !=
          std::string::npos);
    // No peer with both levels (kernel_regular left out): nothing to borrow, the level stays unset
    // and the model reads it as L2's.
    std::vector<Point> alone;
    for (const Point& p : pts)
      if (p.variant != "kernel_regular") alone.push_back(p);
    const Calibration d = calibrate(m, measure(m, t, alone), *app::make_engine("fluid"));
    CHECK(std::isnan(d.memory.kinds.at("copy memcpy").rate[0]));
    CHECK(status(d, "memcpy_l1_rate")
              .rfind("not pinned: no training point of this kind that measured a rate (not its fixed costs) is served "
                     "from the l1 (",
                     0) == 0);
  }
  SUBCASE("a point of fixed costs pins no rate: two threads' 18 KiB memcpy measures the pool's wake-up") {
    // As the Xeon 480 MiB VM measured (18.4 us for two threads' 18 KiB memcpy, 0.091 us on one):
    // memcpy's only L1 point is the two-thread 18 KiB one, which takes the fork cost (12 us) and
    // 18 KiB per thread at 300 GB/s (0.06 us): 1.5 GB/s a thread, under 5% of what memcpy reaches
    // at its L2 or slower (80 GB/s), so it pins no rate; memcpy's L1 rate is borrowed, L2's times
    // kernel_regular's L1 / L2, planted so (80 GB/s x 250 / 60). Its time carries 2% of noise, 30x
    // what its L1 share of it could explain: fitted from it (the rule before), the L1 rate ended at
    // its floor, the L2 rate (80.1 GB/s here; on the VM the held-out one-thread point came out +315%).
    ModelParams t = truth;
    t.memory.kinds["copy memcpy"].rate[0] = 80e9 * 250 / 60;
    std::vector<Point> pts;
    for (const Point& p : kernel_points(t.memory, 2, 9))
      if (!(p.variant == "memcpy" && 2 * p.bytes / p.threads < 200 * KiB) || (p.threads == 2 && p.bytes == 18 * KiB))
        pts.push_back(p);
    auto samples = measure(m, t, pts);
    for (Sample& s : samples)
      if (s.point.variant == "memcpy" && s.point.threads == 2 && s.point.bytes == 18 * KiB) {
        CHECK(2 * s.point.bytes / 2 / s.point.time_median < 0.05 * 80e9);  // the rule's premise
        s.point.time_median *= 1.02;
      }
    const Calibration c = calibrate(m, samples, *app::make_engine("fluid"));
    CHECK(status(c, "memcpy_l1_rate").find("median ratio of the two levels' rates of the other copy regular kinds") !=
          std::string::npos);
    // Borrowed, it is memcpy's fitted L2 rate times kernel_regular's fitted L1 / L2 (the only peer).
    // The noise, through the shared values, moves every kind's L1 rate (each rests on its one 18 KiB
    // one-thread point): kernel_regular's 250 -> 288 GB/s here, so memcpy's comes back 15% high with
    // it; noiseless, every value comes back (the subcase above).
    const auto& mc = c.memory.kinds.at("copy memcpy").rate;
    const auto& kr = c.memory.kinds.at("copy kernel_regular").rate;
    check_rel(mc[0], mc[1] * kr[0] / kr[1]);
    CHECK(mc[1] == doctest::Approx(80e9).epsilon(0.003));
  }
  SUBCASE("one size per level: each kind's rates still come back where the shared values are pinned") {
    // Copies of 18 KiB (L1), 288 KiB (L2), 18 MiB (LLC), 1.1 GiB (DRAM) on 1 and 2 threads, plus the
    // straddling 1.125 MiB that pins the sharpness; reduces likewise.
    std::vector<Point> pts;
    for (const Point& p : kernel_points(truth.memory, 2, 9)) {
      const double i = std::log(p.bytes / (p.stage == "copy" ? 18 * KiB : 4 * KiB)) / std::log(4.0);
      const long j = std::lround(i);
      if (j == 0 || j == 2 || j == 3 || j == 5 || j == 8) pts.push_back(p);
    }
    const auto samples = measure(m, truth, pts);
    const Calibration c = calibrate(m, samples, *app::make_engine("fluid"));
    check_rates(c.memory, truth.memory);
  }
}

TEST_CASE("calib: a memcpy from the machine's streaming threshold on is glibc's streaming loop, a kind of its own") {
  // glibc's memcpy writes with non-temporal stores from glibc.cpu.x86_non_temporal_threshold per call
  // on (the Xeon VM's CPU model: 40.875 MiB). The model times such a call with the streaming memcpy's
  // own rates (kStreamingMemcpy) and its written half at DRAM, as the streaming kernel's: with the
  // kernel's rates planted for it, a memcpy of 2 x T per 2 threads (T per thread, the edge) takes
  // exactly what a kernel_nt copy of the same size and threads takes; one byte per thread less,
  // exactly what the memcpy kind gives without the switch.
  const BenchModel m = make_bench_model(ffsim::testing::catalog(), "xeon_2c_vm");
  const double T = 40.875 * MiB;
  CHECK(m.memcpy_streaming == T);
  const BenchModel off = xeon_without_switch();
  MemoryModel mm = planted_memory();
  mm.kinds[kStreamingMemcpy] = mm.kinds.at("copy kernel_nt");
  CHECK(streaming_copy(kStreamingMemcpy));
  CHECK(streaming_copy("copy kernel_nt"));
  CHECK_FALSE(streaming_copy("copy memcpy"));
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    Point at = point("copy", threads * T);
    at.variant = "memcpy";
    at.threads = threads;
    Point nt = at;
    nt.variant = "kernel_nt";
    CHECK(model_kind(m, at) == kStreamingMemcpy);
    CHECK(kernel_seconds(m, mm, at) == kernel_seconds(m, mm, nt));
    CHECK(kernel_seconds(m, mm, at) != kernel_seconds(off, mm, at));
    Point below = at;
    below.bytes = threads * (T - 1);
    CHECK(model_kind(m, below) == "copy memcpy");
    CHECK(kernel_seconds(m, mm, below) == kernel_seconds(off, mm, below));
    // The other kinds are what they are at any size.
    Point regular = at;
    regular.variant = "kernel_regular";
    CHECK(model_kind(m, regular) == "copy kernel_regular");
  }
  // A device copy is one memcpy of its size, a pipeline's one of its chunk: the streaming memcpy's
  // rates where the model has them, else the streaming kernel's, else the memcpy's own.
  CHECK(memcpy_kind(m, mm, T) == kStreamingMemcpy);
  CHECK(memcpy_kind(m, mm, T - 1) == "copy memcpy");
  CHECK(memcpy_kind(off, mm, 1e12) == "copy memcpy");
  MemoryModel no_streaming = mm;
  no_streaming.kinds.erase(kStreamingMemcpy);
  CHECK(memcpy_kind(m, no_streaming, T) == "copy kernel_nt");
  no_streaming.kinds.erase("copy kernel_nt");
  CHECK(memcpy_kind(m, no_streaming, 1e12) == "copy memcpy");  // no streaming kind measured: the memcpy's own rates
  // Planted values come back with the switch on: the streaming memcpy 1.3x the kernel's rates (the
  // Xeon 480 MiB VM measured 1.36x from DRAM) and another gain. A threshold of 200 MiB leaves every
  // memcpy level with points below it (1 thread up to 72 MiB, 2 threads up to 288 MiB); above it,
  // samples of the streaming memcpy.
  BenchModel sw = m;
  sw.memcpy_streaming = 200 * MiB;
  ModelParams truth;
  truth.memory = planted_memory();
  KindRates streaming = truth.memory.kinds.at("copy kernel_nt");
  for (double& r : streaming.rate) r *= 1.3;
  streaming.gain = 0.7;
  truth.memory.kinds[kStreamingMemcpy] = streaming;
  std::vector<Point> pts;
  for (const Point& p : kernel_points(truth.memory, 2, 9))
    if (p.variant != "memcpy_streaming") pts.push_back(p);  // no bench variant: memcpys above the threshold
  const auto samples = measure(sw, truth, pts);
  int streamed = 0;
  for (const Sample& x : samples) streamed += model_kind(sw, x.point) == kStreamingMemcpy;
  // Memcpy sizes 18 KiB x 4^i: at or above 200 MiB per thread are 1 thread of 288 MiB and of 1.125
  // GiB, and 2 threads of 1.125 GiB (576 MiB each); 2 threads of 288 MiB (144 each) are not.
  CHECK(streamed == 3);
  const Calibration c = calibrate(sw, samples, *app::make_engine("fluid"));
  // The streaming memcpy's points are all served from DRAM (the cached read half: 288 MiB, 2.7x the
  // 105 MiB LLC, 3% from it, under the 5% that pins a level): its DRAM rate and gain come back from
  // them, its faster levels by the ratios of its one peer, kernel_nt (the same planted ones).
  check_rates(c.memory, truth.memory);
  for (const auto& [kind, rates] : truth.memory.kinds) {
    CAPTURE(kind);
    check_rel(c.memory.kinds.at(kind).gain, rates.gain);
  }
}

TEST_CASE("calib: the streaming threshold a run recorded is the one its points take") {
  // glibc derives the threshold from the cache size the VM reports at boot, which moved between
  // boots of one VM, so a file's own record (Point::memcpy_streaming, from
  // /machine/memcpy_streaming_threshold_bytes) wins over the node model's CPU, and a file without one
  // takes the CPU's. Node without a threshold (`off`), run recorded T: a memcpy of T per thread
  // streams and T - 1 does not; node with T, run recorded 2T: T per thread does not stream.
  const BenchModel off = xeon_without_switch();
  const BenchModel m = make_bench_model(ffsim::testing::catalog(), "xeon_2c_vm");
  const MemoryModel mm = planted_memory();
  const double T = 40.875 * MiB;
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    Point at = point("copy", threads * T);
    at.variant = "memcpy";
    at.threads = threads;
    CHECK(model_kind(off, at) == "copy memcpy");  // nothing recorded, nothing stated
    at.memcpy_streaming = T;
    CHECK(model_kind(off, at) == kStreamingMemcpy);
    Point below = at;
    below.bytes = threads * (T - 1);
    CHECK(model_kind(off, below) == "copy memcpy");
    Point later = at;
    later.memcpy_streaming = 2 * T;
    CHECK(model_kind(m, later) == "copy memcpy");
    later.bytes = threads * 2 * T;
    CHECK(model_kind(m, later) == kStreamingMemcpy);
  }
  // A device copy or a pipeline's chunk: the same rule per call.
  CHECK(memcpy_kind(off, mm, T, T) == "copy kernel_nt");
  CHECK(memcpy_kind(off, mm, T - 1, T) == "copy memcpy");
  CHECK(memcpy_kind(m, mm, T, 2 * T) == "copy memcpy");
  CHECK(memcpy_kind(m, mm, T, 0) == "copy kernel_nt");
}

TEST_CASE("calib::slot_copy_gain: a chunk copy's slot side is in the cache where the slots fit") {
  // The Xeon VM's node model (LLC 105 MiB) and the planted memory model with a step for the caches
  // (sharpness unset: a set of x bytes is served by a cache of C bytes wholly if x <= C, else not).
  // Its one-thread memcpy: LLC 25 GB/s, DRAM 18 GB/s.
  const BenchModel m = make_bench_model(ffsim::testing::catalog(), "xeon_2c_vm");
  MemoryModel mm = planted_memory();
  mm.sharpness = std::numeric_limits<double>::quiet_NaN();
  Point p = point("pipeline", 256 * MiB);
  p.backend = "host";
  p.devices = 1;
  p.chunk_bytes = 1 * MiB;
  // One device, 1 MiB chunks, in place (the pipeline stage; a point without a placement): 3 slots
  // (3 MiB) and the 3 MiB of device bytes read between two uses of a slot (the H2D writes back the
  // lines the D2H read), 6 MiB <= 105: the slot side at the LLC. The device side goes to DRAM, in
  // place too (the H2D's lines are in the cache but dirty: written back). The whole working set,
  // 256 MiB of device memory and the slots, is beyond the LLC: DRAM. A chunk's D2H and H2D: half
  // their traffic from DRAM, half from the LLC: 1 / (0.5 / 18 + 0.5 / 25) = 900 / 43 GB/s; gain =
  // that / 18 = 50 / 43.
  CHECK(slot_copy_gain(m, mm, "copy memcpy", p) == doctest::Approx(50.0 / 43).epsilon(1e-12));
  // 16 MiB chunks: 48 + 48 = 96 MiB <= 105, still 50 / 43; 32 MiB chunks: 96 + 96 = 192 MiB > 105:
  // DRAM both sides, 1.
  p.chunk_bytes = 16 * MiB;
  CHECK(slot_copy_gain(m, mm, "copy memcpy", p) == doctest::Approx(50.0 / 43).epsilon(1e-12));
  p.chunk_bytes = 32 * MiB;
  CHECK(slot_copy_gain(m, mm, "copy memcpy", p) == 1);
  // Two devices, 4 MiB chunks: slots 3 x 4 MiB per device and as many result slots (36 MiB) + 2 x
  // 12 MiB of device bytes = 60 MiB <= 105 on one node: 50 / 43; an allreduce on 2 ranks shares
  // the cache: 120 MiB, 1.
  p.devices = 2;
  p.chunk_bytes = 4 * MiB;
  CHECK(slot_copy_gain(m, mm, "copy memcpy", p) == doctest::Approx(50.0 / 43).epsilon(1e-12));
  Point a = p;
  a.stage = "allreduce";
  a.ranks = 2;
  CHECK(slot_copy_gain(m, mm, "copy memcpy", a) == 1);
  a.ranks = 1;  // one rank: the pipeline's footprint again
  CHECK(slot_copy_gain(m, mm, "copy memcpy", a) == doctest::Approx(50.0 / 43).epsilon(1e-12));
  // Out of place the H2D writes other lines than the D2H read: 36 + 2 x 2 x 12 = 84 MiB <= 105, the
  // slot sides at the LLC and the device sides at DRAM, as in place: 50 / 43; on 2 ranks 168 MiB, 1.
  a.placement = "out_of_place";
  CHECK(slot_copy_gain(m, mm, "copy memcpy", a) == doctest::Approx(50.0 / 43).epsilon(1e-12));
  a.ranks = 2;
  CHECK(slot_copy_gain(m, mm, "copy memcpy", a) == 1);
  // Where the whole working set is in the cache already the copies are no faster than it says: 1.
  p.bytes = 16 * MiB;  // 2 x 16 MiB + 36 MiB of slots = 68 MiB <= 105: the LLC's 25 GB/s
  CHECK(slot_copy_gain(m, mm, "copy memcpy", p) == 1);
  // Unless the bench evicts it between two calls: a one-rank host pipeline runs beside a copy of
  // half its traffic ((5 D + 1) S = 176 MiB: 88 MiB copied, 176 MiB touched), 68 + 176 MiB > 105:
  // the whole working set at DRAM, the slots' 60 MiB still in the cache: 50 / 43.
  p.traffic_bytes = 11 * p.bytes;
  CHECK(between_repetitions(p) == 11 * p.bytes);
  CHECK(slot_copy_gain(m, mm, "copy memcpy", p) == doctest::Approx(50.0 / 43).epsilon(1e-12));
  p.traffic_bytes = 0;
  // Other stages, a kind the model lacks, a node without an LLC size: 1.
  CHECK(slot_copy_gain(m, mm, "copy memcpy", point("copy", 256 * MiB)) == 1);
  p.bytes = 256 * MiB;
  CHECK(slot_copy_gain(m, mm, "copy no_such_kind", p) == 1);
  BenchModel no_llc = m;
  no_llc.llc = 0;
  CHECK(slot_copy_gain(no_llc, mm, "copy memcpy", p) == 1);
}

TEST_CASE("calib::thread_limits: what a rank's threads can use of the machine (its reduce cores)") {
  // The Xeon VM's node model: one socket of 2 cores, 8 emulated devices behind one copy port.
  const BenchModel m = make_bench_model(ffsim::testing::catalog(), "xeon_2c_vm");
  const double per_core = m.node.sockets.front().cpu.reduce_bandwidth_per_core->si();
  // threads -> cores: min(threads, 2); 0 means all of them.
  for (const auto& [threads, cores] : std::vector<std::pair<int, double>>{{0, 2}, {1, 1}, {2, 2}, {3, 2}}) {
    CAPTURE(threads);
    hw::NodeSpec n = m.node;
    thread_limits(n, threads);
    // The reduce rate of those cores as one "core"; DRAM and the copy port stay the machine's (the
    // ranks of one machine share them through the platform's host pool, not by a fixed split).
    CHECK(n.sockets.front().cpu.reduce_bandwidth_per_core->si() == doctest::Approx(per_core * cores));
    CHECK(n.sockets.front().cpu.cores == 1);
    CHECK(n.sockets.front().dram_bandwidth.si() == m.node.sockets.front().dram_bandwidth.si());
    for (std::size_t i = 0; i < n.ports.size(); ++i) CHECK(n.ports[i].bandwidth.si() == m.node.ports[i].bandwidth.si());
  }
}

TEST_CASE(
    "platform: ranks of one machine (PlatformOptions::host_pool) share its DRAM as they use it, in both engines") {
  // Two ranks of the Xeon VM as two simulated nodes, each with the machine's DRAM rate D as its own
  // limit, and the machine's DRAM (rate D) that both load. A DRAM-to-DRAM copy reads and writes
  // (its path crosses the DRAM twice): alone it runs at D / 2.
  const BenchModel m = make_bench_model(ffsim::testing::catalog(), "xeon_2c_vm");
  const double D = m.node.sockets.front().dram_bandwidth.si();
  const double S = 64.0 * MiB;
  platform::PlatformOptions opts;
  opts.host_pool = std::make_shared<hw::NodeSpec>(m.node);
  const platform::Platform pooled(hw::ClusterSpec{m.node, 2, {}}, nullptr, {}, opts);
  const platform::Platform apart(hw::ClusterSpec{m.node, 2, {}}, nullptr, {});
  // The machine's DRAM is one resource after the fabric's, named as the machine's.
  const std::uint32_t dram = pooled.pool_resource(pooled.model(sched::Place::dram(0, 0)).dram[0]);
  REQUIRE(dram != platform::kNoResource);
  CHECK(pooled.resource_name(dram) == "machine.cpu0.dram");
  CHECK(pooled.node_of_resource(dram) == std::pair<bool, int>{false, -1});
  CHECK(apart.pool_resource(0) == platform::kNoResource);
  for (const char* engine : {"fluid", "simgrid"}) {
    CAPTURE(engine);
    auto run = [&](const platform::Platform& p, double second) {
      sched::Schedule s;
      (void)s.transfer(sched::Place::dram(0, 0), sched::Place::dram(0, 0), Bytes(S), sched::TrafficClass::Other);
      if (second > 0)
        (void)s.transfer(sched::Place::dram(1, 0), sched::Place::dram(1, 0), Bytes(second), sched::TrafficClass::Other);
      return app::make_engine(engine)->run(s, p);
    };
    const double e = 1e-6;
    // One rank copying alone has the whole machine: 2S / D (a fixed 1/2 share would take 4S / D).
    CHECK(run(pooled, 0).makespan == doctest::Approx(2 * S / D).epsilon(e).scale(ffsim::testing::kRelative));
    // Both at once: the machine's DRAM is shared, D / 4 each, both end at 4S / D; apart (each rank a
    // machine of its own) each would end at 2S / D.
    const auto both = run(pooled, S);
    CHECK(both.ops[0].end == doctest::Approx(4 * S / D).epsilon(e).scale(ffsim::testing::kRelative));
    CHECK(both.ops[1].end == doctest::Approx(4 * S / D).epsilon(e).scale(ffsim::testing::kRelative));
    CHECK(run(apart, S).ops[1].end == doctest::Approx(2 * S / D).epsilon(e).scale(ffsim::testing::kRelative));
    // Unequal: 3S on rank 1. Until 4S / D both move S at D / 4; then rank 1's remaining 2S alone at
    // D / 2 takes 4S / D more: 8S / D.
    const auto uneven = run(pooled, 3 * S);
    CHECK(uneven.ops[0].end == doctest::Approx(4 * S / D).epsilon(e).scale(ffsim::testing::kRelative));
    CHECK(uneven.ops[1].end == doctest::Approx(8 * S / D).epsilon(e).scale(ffsim::testing::kRelative));
  }
}

TEST_CASE("platform: host threads share the machine's cores (PlatformOptions::host_cpu), in both engines") {
  // One rank of the Xeon VM, two emulated devices copying S bytes each to DRAM at once, each copy's
  // thread spending 1 ns per byte (1 GB/s alone, far under the byte paths' rates, so the cores
  // bind): on 1 core the two copies take turns, 2S x 1 ns; on 2 cores each has its own, S x 1 ns;
  // without host_cpu the bytes alone set the time (well under S x 1 ns).
  const BenchModel m = make_bench_model(ffsim::testing::catalog(), "xeon_2c_vm");
  REQUIRE(m.node.gpus.size() >= 2);
  REQUIRE(m.node.gpus.front().gpu.emulated());
  const double S = 16.0 * MiB, c = 1e-9;
  auto platform_with = [&](int cores) {
    platform::PlatformOptions opts;
    opts.host_pool = std::make_shared<hw::NodeSpec>(m.node);
    opts.host_cpu.cores = cores;
    opts.host_cpu.copy_s_per_byte = cores > 0 ? c : 0;
    return std::make_unique<platform::Platform>(hw::ClusterSpec{m.node, 1, {}}, nullptr, platform::TrafficConfig{},
                                                opts);
  };
  const auto one = platform_with(1), two = platform_with(2), none = platform_with(0);
  CHECK(one->resource_name(one->host_cores()) == "machine.cores");
  CHECK(none->host_cores() == platform::kNoResource);
  for (const char* engine : {"fluid", "simgrid"}) {
    CAPTURE(engine);
    auto run = [&](const platform::Platform& p) {
      sched::Schedule s;
      for (int g = 0; g < 2; ++g)
        (void)s.transfer(sched::Place::gpu(0, g), sched::Place::dram(0, 0), Bytes(S), sched::TrafficClass::Other);
      return app::make_engine(engine)->run(s, p).makespan;
    };
    // (Each copy also pays its path's latency, the device copy's fixed time.)
    const double lat = m.node.pcie_latency.si();
    CHECK(run(*one) == doctest::Approx(lat + 2 * S * c).epsilon(1e-6).scale(ffsim::testing::kRelative));
    CHECK(run(*two) == doctest::Approx(lat + S * c).epsilon(1e-6).scale(ffsim::testing::kRelative));
    CHECK(run(*none) < lat + S * c / 2);
  }
}

namespace {

// Series (in key order, which series_key gives: the copy series with 1 thread, then 2 threads,
// then d2h) of 9 sizes (inserted in reverse size order), 6 sizes and 2 sizes, the second size of
// the last measured in two files: a series is a configuration, whatever files measured its sizes.
std::vector<Sample> three_series() {
  std::vector<Sample> s;
  for (int i = 8; i >= 0; --i) s.push_back(Sample{"a.json", point("copy", std::pow(4.0, i) * KiB), Regime::Dram, ""});
  for (int i = 0; i < 6; ++i) {
    Point p = point("copy", std::pow(4.0, i) * KiB);
    p.threads = 2;
    s.push_back(Sample{"b.json", p, Regime::Dram, ""});
  }
  for (int i = 0; i < 2; ++i)
    s.push_back(Sample{i == 0 ? "c.json" : "c.json + d.json", point("d2h", std::pow(4.0, i) * KiB), Regime::Dram, ""});
  return s;
}

}  // namespace

TEST_CASE("calib::holdout_mask: deterministic, spread over sizes, per series") {
  const std::vector<Sample> s = three_series();
  const auto h = holdout_mask(s, 0.3);
  // n = 9: m = round(2.7) = 3 at floor((2j + 1) 9 / 6) = 1, 4, 7 (sizes 4^1, 4^4, 4^7 KiB; stored in reverse)
  std::vector<int> held_a;
  for (int i = 0; i < 9; ++i)
    if (h[static_cast<std::size_t>(i)]) held_a.push_back(8 - i);
  CHECK(held_a == std::vector<int>{7, 4, 1});
  // n = 6: m = round(1.8) = 2 at floor((2j + 1) 6 / 4) = 1, 4
  for (int i = 0; i < 6; ++i) CHECK(h[static_cast<std::size_t>(9 + i)] == (i == 1 || i == 4));
  // n = 2: m = round(0.6) = 1 (at most n - 1) at floor(2 / 2) = 1
  CHECK(!h[15]);
  CHECK(h[16]);
  CHECK(holdout_mask(s, 0.3) == h);
  for (bool b : holdout_mask(s, 0)) CHECK(!b);
  // Edges: nothing in, nothing out; a series of one point keeps it (m = min(n - 1, ...) = 0); a
  // fraction near 1 holds out all but one point of each series (m = n - 1), never the whole series.
  CHECK(holdout_mask({}, 0.3).empty());
  const std::vector<Sample> one{Sample{"d.json", point("copy", KiB), Regime::Dram, ""}};
  CHECK(holdout_mask(one, 0.3) == std::vector<bool>{false});
  CHECK(holdout_mask(one, 0.99) == std::vector<bool>{false});
  const auto most = holdout_mask(s, 0.99);
  CHECK(std::count(most.begin(), most.begin() + 9, true) == 8);
  CHECK(std::count(most.begin() + 9, most.begin() + 15, true) == 5);
  CHECK(std::count(most.begin() + 15, most.end(), true) == 1);
}

TEST_CASE("calib::fold_of: every point of a series held out once, the series' start rotated") {
  // The three series of holdout_mask's test, and a d2h series of 1 point of another device count.
  std::vector<Sample> s = three_series();
  Point lone = point("d2h", KiB);
  lone.devices = 3;
  s.push_back(Sample{"c.json", lone, Regime::Dram, ""});
  std::vector<std::string> keys;
  for (const auto& x : s) keys.push_back(series_key(x));
  // The q-th series in key order deals its sizes, smallest first, to folds q, q + 1, ... mod K.
  std::map<std::string, int> q;
  for (const auto& k : keys) q.emplace(k, 0);
  int next = 0;
  for (auto& [k, v] : q) v = next++;
  const int K = 4;
  const auto f = fold_of(s, K);
  REQUIRE(f.size() == s.size());
  // The 9-size series: index i holds size 4^(8 - i), its rank in size order 8 - i.
  for (int i = 0; i < 9; ++i) CHECK(f[static_cast<std::size_t>(i)] == (q[keys[0]] + 8 - i) % K);
  for (int i = 0; i < 6; ++i) CHECK(f[static_cast<std::size_t>(9 + i)] == (q[keys[9]] + i) % K);
  for (int i = 0; i < 2; ++i) CHECK(f[static_cast<std::size_t>(15 + i)] == (q[keys[15]] + i) % K);
  // A series of one point: in no fold (held out, its configuration would have no point in the fit).
  CHECK(f[17] == -1);
  // Every fold leaves points of the long series in the fit, and its smallest sizes fall in
  // different folds (the rotation): 4^0 of the 1- and 2-thread copies in folds q0 and q1.
  for (int k = 0; k < K; ++k) CHECK(std::count(f.begin(), f.begin() + 9, k) <= 3);
  CHECK(f[8] != f[9]);
  CHECK(fold_of(s, K) == f);  // deterministic
  // Two folds: alternate sizes; more folds than points: each point in a fold of its own.
  const auto two = fold_of(s, 2);
  for (int i = 0; i < 8; ++i) CHECK(two[static_cast<std::size_t>(i)] != two[static_cast<std::size_t>(i + 1)]);
  const auto many = fold_of(s, 20);
  CHECK(std::set<int>(many.begin(), many.begin() + 9).size() == 9);
  CHECK(fold_of({}, 3).empty());
}

TEST_CASE("calib: the outlier rule marks points slower than a larger size of their series") {
  BenchModel m = make_bench_model(ffsim::testing::catalog(), "epyc_zen5_2c_vm");
  MeasurementFile f = zen5_file("m.json");
  // d2h times 116 us, 9 us, 13 us at 4, 16, 64 KiB: the 4 KiB point took longer than 16 KiB.
  const double t[] = {116e-6, 9e-6, 13e-6};
  for (int i = 0; i < 3; ++i) {
    Point p = point("d2h", 4 * KiB * std::pow(4.0, i));
    p.devices = 1;
    p.time_median = t[i];
    p.pointer = "/points/" + std::to_string(i);
    f.points.push_back(p);
  }
  const auto s = samples_of(m, {f});
  CHECK(s[0].outlier == "non-monotone: 0.000116 s for 4096 bytes, but 9e-06 s for 16384 bytes (/points/1)");
  CHECK(s[1].outlier.empty());
  CHECK(s[2].outlier.empty());
}

TEST_CASE("calib: repeated runs of a configuration are one sample, their median, with their spread") {
  BenchModel m = make_bench_model(ffsim::testing::catalog(), "epyc_zen5_2c_vm");
  // Three runs (files a, b, c) of a D2H at 16 KiB and 64 KiB; c also measured an H2D nobody else did.
  auto file = [](const std::string& name, std::vector<double> d2h, double h2d) {
    MeasurementFile f = zen5_file(name);
    for (std::size_t i = 0; i < d2h.size(); ++i) {
      Point p = point("d2h", 16 * KiB * std::pow(4.0, static_cast<double>(i)));
      p.devices = 1;
      p.time_min = 0.9 * d2h[i];
      p.time_median = d2h[i];
      p.time_max = 1.5 * d2h[i];
      p.reps = 5;
      p.traffic_bytes = 2 * p.bytes;
      p.traffic_Bps = p.traffic_bytes / p.time_median;
      f.points.push_back(p);
    }
    if (h2d > 0) {
      Point p = point("h2d", 16 * KiB);
      p.devices = 1;
      p.time_min = p.time_median = p.time_max = h2d;
      f.points.push_back(p);
    }
    return f;
  };
  const auto s = samples_of(m, {file("a.json", {10e-6, 20e-6}, 0), file("b.json", {30e-6, 22e-6}, 0),
                                file("c.json", {11e-6, 27e-6}, 9e-6)});
  REQUIRE(s.size() == 3);
  // 16 KiB: runs 10, 30, 11 us: median 11; mean 17, deviations 7, 13, 6 -> 26 / 3 / 17.
  CHECK(s[0].file == "a.json + b.json + c.json");
  CHECK(s[0].runs == 3);
  CHECK(s[0].point.time_median == doctest::Approx(11e-6).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(s[0].run_spread == doctest::Approx(26.0 / 3 / 17).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // min and max over every run, repetitions summed, rates from the merged median.
  CHECK(s[0].point.time_min == doctest::Approx(9e-6).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(s[0].point.time_max == doctest::Approx(45e-6).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(s[0].point.reps == 15);
  CHECK(s[0].point.algbw_Bps == doctest::Approx(16 * KiB / 11e-6).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(s[0].point.traffic_Bps == doctest::Approx(2 * 16 * KiB / 11e-6).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // 64 KiB: runs 20, 22, 27 us: median 22; mean 23, deviations 3, 1, 4 -> 8 / 3 / 23.
  CHECK(s[1].point.time_median == doctest::Approx(22e-6).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(s[1].run_spread == doctest::Approx(8.0 / 3 / 23).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // The H2D was measured once: as it was, from its one file.
  CHECK(s[2].file == "c.json");
  CHECK(s[2].runs == 1);
  CHECK(s[2].run_spread == 0);
  CHECK(s[2].point.time_median == 9e-6);
  // Two runs: the median is their mean; the series (for holdout and outliers) is the merged one.
  const auto two = samples_of(m, {file("a.json", {10e-6, 20e-6}, 0), file("b.json", {30e-6, 22e-6}, 0)});
  CHECK(two[0].point.time_median == doctest::Approx(20e-6).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(two[0].run_spread == doctest::Approx(0.5).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(series_key(two[0]) == series_key(two[1]));
  // 16 KiB (20 us) is faster than 64 KiB (21 us): no outlier.
  CHECK(two[0].outlier.empty());
  // Rounds (hfreduce-bench --rounds) are runs too: one file whose 16 KiB point has rounds of 10, 30
  // and 11 us gives what the three files gave; with a fourth run of 12 us in another file the runs
  // are 10, 11, 12, 30: median 11.5, mean 15.75, deviations 5.75, 4.75, 3.75, 14.25 -> 28.5 / 4 / 15.75.
  MeasurementFile r = file("r.json", {11e-6}, 0);
  r.points[0].rounds = {10e-6, 30e-6, 11e-6};
  const auto one = samples_of(m, {r});
  CHECK(one[0].runs == 3);
  CHECK(one[0].file == "r.json");
  CHECK(one[0].point.time_median == doctest::Approx(11e-6).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(one[0].run_spread == doctest::Approx(26.0 / 3 / 17).epsilon(1e-12).scale(ffsim::testing::kRelative));
  const auto four = samples_of(m, {r, file("s.json", {12e-6}, 0)});
  CHECK(four[0].runs == 4);
  CHECK(four[0].file == "r.json + s.json");
  CHECK(four[0].point.time_median == doctest::Approx(11.5e-6).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(four[0].run_spread == doctest::Approx(28.5 / 4 / 15.75).epsilon(1e-12).scale(ffsim::testing::kRelative));
  // A size repeated in a second file stays in its configuration's series: u.json measured 16 KiB in
  // 30 us and 64 KiB in 20 us, v.json 16 KiB again in 40 us. The 16 KiB sample (median 35 us, of
  // "u.json + v.json") is slower than the 64 KiB one (20 us, of "u.json" alone): non-monotone,
  // which a series per file (the two samples apart) could not see.
  const auto partial = samples_of(m, {file("u.json", {30e-6, 20e-6}, 0), file("v.json", {40e-6}, 0)});
  REQUIRE(partial.size() == 2);
  CHECK(partial[0].file == "u.json + v.json");
  CHECK(partial[1].file == "u.json");
  CHECK(series_key(partial[0]) == series_key(partial[1]));
  CHECK(partial[0].outlier.rfind("non-monotone", 0) == 0);
  CHECK(partial[1].outlier.empty());
}

TEST_CASE("calib: an allreduce out of place and in place are two configurations, not two runs") {
  BenchModel m = make_bench_model(ffsim::testing::catalog(), "epyc_zen5_2c_vm");
  // hfreduce-bench writes each allreduce size twice, nccl-tests' two rows: out of place (68.6 ms,
  // rounds 60, 68.6, 70) and in place (51.3 ms, rounds 50, 51.3, 52), the Zen 3 VM's 256 MiB tree
  // on 2 ranks. Merged as runs of one configuration they would be one sample of six runs, median
  // (52 + 60) / 2 = 56 ms, whose "run spread" is the placements' difference; apart, two samples
  // in two series, each with its own rounds: out of place mean 66.2, deviations 6.2, 2.4, 3.8 ->
  // 12.4 / 3 / 66.2; in place mean 51.1, deviations 1.1, 0.2, 0.9 -> 2.2 / 3 / 51.1.
  MeasurementFile f = zen5_file("t.json");
  const double S = 256 * MiB;
  for (const auto& [placement, rounds] : std::vector<std::pair<std::string, std::vector<double>>>{
           {"out_of_place", {60e-3, 68.6e-3, 70e-3}}, {"in_place", {50e-3, 51.3e-3, 52e-3}}}) {
    Point p = point("internode", S);
    p.backend = "mpi";
    p.variant = "double_tree";
    p.ranks = 2;
    p.chunk_bytes = 512 * KiB;
    p.placement = placement;
    p.rounds = rounds;
    p.time_min = rounds.front();
    p.time_median = rounds[1];
    p.time_max = rounds.back();
    f.points.push_back(p);
  }
  const auto s = samples_of(m, {f});
  REQUIRE(s.size() == 2);
  CHECK(series_key(s[0]) != series_key(s[1]));
  CHECK(s[0].point.placement == "out_of_place");
  CHECK(s[0].runs == 3);
  CHECK(s[0].point.time_median == doctest::Approx(68.6e-3).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(s[0].run_spread == doctest::Approx(12.4 / 3 / 66.2).epsilon(1e-9).scale(ffsim::testing::kRelative));
  CHECK(s[1].point.placement == "in_place");
  CHECK(s[1].point.time_median == doctest::Approx(51.3e-3).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(s[1].run_spread == doctest::Approx(2.2 / 3 / 51.1).epsilon(1e-9).scale(ffsim::testing::kRelative));
  // The placement is one more field of the key; a point without one (every stage but the allreduce
  // ones) keeps the key it had.
  Point q = s[1].point;
  q.placement.clear();
  CHECK(series_key(s[1]) == series_key(Sample{"x.json", q, Regime::Dram, ""}) + "|in_place");
}

TEST_CASE("calib: a memcpy that streamed by its run's threshold is not a run of one that did not") {
  BenchModel m = make_bench_model(ffsim::testing::catalog(), "epyc_zen5_2c_vm");
  // One thread copying 288 MiB with memcpy in three runs: one that recorded no threshold (10 ms),
  // one that recorded 288 MiB (the call streams: 288 >= 288; 7 ms) and one that recorded 384 MiB
  // (it does not; 11 ms). The first and the third are two runs of the regular kernel, one sample
  // of median (10 + 11) / 2 = 10.5 ms; the second ran glibc's streaming loop: a sample of its own.
  auto file = [](const std::string& name, double threshold, double t) {
    MeasurementFile f = zen5_file(name);
    f.machine.memcpy_streaming_threshold = threshold;
    Point p = point("copy", 288 * MiB);
    p.variant = "memcpy";
    p.threads = 1;
    p.memcpy_streaming = threshold;
    p.time_min = p.time_median = p.time_max = t;
    f.points.push_back(p);
    return f;
  };
  const auto s =
      samples_of(m, {file("a.json", 0, 10e-3), file("b.json", 288 * MiB, 7e-3), file("c.json", 384 * MiB, 11e-3)});
  REQUIRE(s.size() == 2);
  CHECK(s[0].file == "a.json + c.json");
  CHECK(s[0].point.time_median == doctest::Approx(10.5e-3).epsilon(1e-12).scale(ffsim::testing::kRelative));
  CHECK(s[1].file == "b.json");
  CHECK(s[1].point.time_median == 7e-3);
  CHECK(model_kind(m, s[1].point) == kStreamingMemcpy);
  CHECK(model_kind(m, s[0].point) == "copy memcpy");
  // Which calls stream by the record: a memcpy per thread, a device copy whole, a pipeline's chunk.
  Point d = point("d2h", 288 * MiB);
  d.memcpy_streaming = 288 * MiB;
  CHECK(streams_by_its_record(d));
  Point pl = point("pipeline", 1024 * MiB);
  pl.chunk_bytes = 4 * MiB;
  pl.memcpy_streaming = 288 * MiB;
  CHECK_FALSE(streams_by_its_record(pl));
  pl.memcpy_streaming = 0;
  CHECK_FALSE(streams_by_its_record(pl));
}

TEST_CASE("calib::between_repetitions: what the bench's interleaved bounds touch between two calls") {
  // hfreduce-bench alternates a host-backend device copy with one thread's copy of its size (2S
  // touched) and a one-rank host pipeline with a copy of half its traffic on every core (at most
  // 512 MiB copied); nothing else is interleaved (CUDA copies, MPI ranks, copies, reduces).
  for (const char* stage : {"d2h", "h2d", "bidir"}) {
    CAPTURE(stage);
    Point d = point(stage, 64 * MiB);
    d.backend = "host";
    CHECK(between_repetitions(d) == 128 * MiB);
    d.backend = "cuda";
    CHECK(between_repetitions(d) == 0);
  }
  Point p = point("pipeline", 64 * MiB);
  p.backend = "host";
  p.devices = 1;
  p.traffic_bytes = 4 * p.bytes;  // one device: 4 S
  CHECK(between_repetitions(p) == 256 * MiB);
  p.traffic_bytes = 4 * 1024 * MiB;  // a copy of 2 GiB capped at 512 MiB: 1 GiB touched
  CHECK(between_repetitions(p) == 1024 * MiB);
  p.ranks = 2;
  CHECK(between_repetitions(p) == 0);
  for (const char* stage : {"copy", "reduce", "internode", "allreduce"}) {
    Point q = point(stage, 64 * MiB);
    q.backend = "host";
    q.traffic_bytes = 4 * q.bytes;
    CHECK(between_repetitions(q) == 0);
  }
}

TEST_CASE("calib: working sets and regimes") {
  BenchModel m = make_bench_model(ffsim::testing::catalog(), "epyc_zen5_2c_vm");
  // The CI machine's CPU model gives a 54 MiB last-level cache (what one thread finds cached,
  // measured: models/cpus/epyc_zen5_2c_vm.json).
  CHECK(m.llc == 54 * MiB);
  Point c = point("copy", 54 * MiB);  // 2 S = 108 MiB = 2 x LLC: the cache regime's edge
  CHECK(working_set(c) == 108 * MiB);
  CHECK(regime_of(m, c) == Regime::Cache);
  c.bytes = 55 * MiB;
  CHECK(regime_of(m, c) == Regime::Dram);
  Point r = point("reduce", 1 * MiB);
  r.k = 8;
  CHECK(working_set(r) == 9 * MiB);
  // pipeline: D x S + min(depth, chunks) x min(chunk, S) x (D + 1) = 8 x 16 + 3 x 1 x 9 MiB
  Point p = point("pipeline", 16 * MiB);
  p.devices = 8;
  p.chunk_bytes = 1 * MiB;
  CHECK(working_set(p) == 155 * MiB);
  // one chunk of 4 MiB holds a 1 MiB tensor: 1 slot of 1 MiB for each of 2 devices and the result
  p.devices = 2;
  p.bytes = 1 * MiB;
  p.chunk_bytes = 4 * MiB;
  CHECK(working_set(p) == 2 * MiB + 3 * MiB);
  Point a = p;
  a.stage = "allreduce";
  a.ranks = 4;
  CHECK(working_set(a) == 4 * 5 * MiB);
  m.llc = 0;
  CHECK(regime_of(m, point("copy", 1)) == Regime::Dram);
}

TEST_CASE("calib::check_machine: the measured machine must fit the node model") {
  BenchModel m = make_bench_model(ffsim::testing::catalog(), "epyc_zen5_2c_vm");
  MeasurementFile f;
  f.file = "m.json";
  f.machine.usable_cpus = 2;
  f.machine.numa_nodes = 1;
  f.machine.cpu_model = "AMD EPYC";     // the node model's measured_cpu_model
  f.machine.memory_bytes = 25276026880;  // its 25.3 GB
  f.machine.isa = {"scalar", "avx2", "avx512"};
  auto h200_machine = [&] { f.machine.cpu_model = "any"; f.machine.memory_bytes = 134e9; };  // 125 GiB, no CPU recorded
  auto epyc_machine = [&] { f.machine.cpu_model = "AMD EPYC"; f.machine.memory_bytes = 25276026880; };
  Point p = point("copy", 1024);
  p.threads = 4;
  p.pointer = "/points/7";
  f.points.push_back(p);
  CHECK_THROWS_WITH_AS(check_machine(m, f),
                       "m.json:/points/7/threads: expected at most 2 threads (node model epyc_zen5_2c_vm has 2 cores), got 4",
                       ConfigError);
  f.points[0].threads = 1;
  f.machine.usable_cpus = 16;
  CHECK_THROWS_WITH_AS(check_machine(m, f),
                       "m.json:/machine/usable_cpus: expected at most 2 CPUs (node model epyc_zen5_2c_vm has 2 cores), got 16",
                       ConfigError);
  f.machine.usable_cpus = 2;
  // A real GPU machine cannot have run the host backend's emulated devices.
  const BenchModel h200 = make_bench_model(ffsim::testing::catalog(), "h200_probe_machine");
  Point d = point("d2h", 1024);
  d.devices = 1;
  d.pointer = "/points/0";
  f.points = {d};
  h200_machine();
  CHECK_THROWS_WITH_AS(check_machine(h200, f),
                       "m.json:/points/0/backend: the host backend emulates devices in host memory, but node model "
                       "h200_probe_machine's GPUs are h200_sxm (form factor sxm); use a node model whose GPUs have form "
                       "factor \"emulated\"",
                       ConfigError);
  f.points[0].backend = "cuda";
  CHECK_NOTHROW(check_machine(h200, f));
  // 8 virtual devices on the one GPU are a CUDA pipeline the H200 machine can run.
  f.points[0].stage = "pipeline";
  f.points[0].devices = 8;
  f.points[0].chunk_bytes = 4 * MiB;
  CHECK_NOTHROW(check_machine(h200, f));
  epyc_machine();
  CHECK_THROWS_WITH_AS(check_machine(m, f),
                       "m.json:/points/0/backend: CUDA copies need a GPU, but node model epyc_zen5_2c_vm's devices are "
                       "emulated in host memory",
                       ConfigError);
  // Inter-node stages need a transport: the H200 probe machine has no NIC.
  Point t = point("internode", 1024);
  t.ranks = 2;
  t.chunk_bytes = 512 * KiB;
  t.pointer = "/points/3";
  f.points = {t};
  h200_machine();
  CHECK_THROWS_WITH_AS(check_machine(h200, f),
                       "m.json:/points/3/stage: an inter-node stage needs a node model with a NIC (or transport); "
                       "h200_probe_machine has none",
                       ConfigError);
  // The machine record itself against the node model (an audit of 2026-12-01 found these accepted):
  // another CPU under the machine's name, GPUs on a machine of emulated devices, the memory in GiB
  // where bytes are expected, a reduce on a path the record says the CPU lacks.
  epyc_machine();
  Point c = point("copy", 1024);
  c.pointer = "/points/0";
  f.points = {c};
  CHECK_NOTHROW(check_machine(m, f));
  f.machine.cpu_model = "Intel(R) Xeon(R) Processor";
  CHECK_THROWS_WITH_AS(check_machine(m, f),
                       "m.json:/machine/cpu_model: expected \"AMD EPYC\" (the CPU node model epyc_zen5_2c_vm was measured "
                       "on), got \"Intel(R) Xeon(R) Processor\"; a run of another machine under this name needs a node "
                       "model of its own",
                       ConfigError);
  epyc_machine();
  f.machine.gpus = {"NVIDIA H200"};
  CHECK_THROWS_WITH_AS(check_machine(m, f),
                       "m.json:/machine/gpus: expected no GPUs: node model epyc_zen5_2c_vm's devices are emulated in host "
                       "memory, got 1 (\"NVIDIA H200\")",
                       ConfigError);
  f.machine.gpus.clear();
  f.machine.memory_bytes = 23.54;  // 25.3 GB written in GiB
  CHECK_THROWS_WITH_AS(check_machine(m, f),
                       "m.json:/machine/memory_bytes: expected about 23.6 GiB (node model epyc_zen5_2c_vm's memory; within a "
                       "factor of 2), got 23.54 bytes; the field counts bytes",
                       ConfigError);
  epyc_machine();
  Point r = point("reduce", 1024);
  r.variant = "avx512";
  r.k = 8;
  r.threads = 1;
  r.pointer = "/points/5";
  f.points = {r};
  CHECK_NOTHROW(check_machine(m, f));
  f.machine.isa = {"scalar", "avx2"};
  CHECK_THROWS_WITH_AS(check_machine(m, f),
                       "m.json:/points/5/variant: the point ran the avx512 path, which the file's machine record "
                       "(/machine/isa: scalar, avx2) says this CPU cannot run",
                       ConfigError);
}

TEST_CASE("calib: a calibration file overrides catalog facts, and says where they came from") {
  config::Catalog cat = ffsim::testing::catalog();
  const std::string text = R"({"kind": "calibration", "name": "t", "node": "epyc_zen5_2c_vm",
    "measurements": [{"file": "m.json", "machine": "vm", "date": "d", "points": 1}],
    "regimes": {"last_level_cache": "32MiB", "rule": "r"}, "left_out": [], "predictions": [], "fits": [],
    "overrides": [{"kind": "node", "name": "epyc_zen5_2c_vm", "pointer": "/sockets/0/dram_bandwidth",
                   "value": "33GB/s", "source": "t.json: fitted", "parameter": "dram_bandwidth", "scope": "machine",
                   "scope_reason": "the measured socket's DRAM"},
                  {"kind": "cpu", "name": "epyc_zen5_2c_vm", "pointer": "/reduce_bandwidth_per_core",
                   "value": "20GB/s", "source": "t.json: fitted too", "parameter": "reduce_bandwidth_per_core",
                   "scope": "machine", "scope_reason": "the measured CPU"}]})";
  const CalibrationFile c = parse_calibration(config::Document::parse(text, "t.json", false));
  CHECK(c.node == "epyc_zen5_2c_vm");
  CHECK(c.machines == std::vector<std::string>{"vm"});
  apply_calibration(cat, c);
  const config::CatalogEntry& e = *cat.find("node", "epyc_zen5_2c_vm");
  const hw::NodeSpec n = config::parse_node(e, cat);
  CHECK(n.sockets[0].dram_bandwidth.si() == doctest::Approx(33e9));
  CHECK(n.sockets[0].cpu.reduce_bandwidth_per_core->si() == doctest::Approx(20e9));
  bool found = false;
  for (const auto& s : e.document.sources())
    found = found || (s.pointer == "/sockets/0/dram_bandwidth" && s.source == "t.json: fitted");
  CHECK(found);

  SUBCASE("an override of an unknown model names the valid ones") {
    std::string bad = text;
    const std::string from = "\"name\": \"epyc_zen5_2c_vm\", \"pointer\": \"/reduce";
    bad.replace(bad.find(from), from.size(), "\"name\": \"epyc_zen5_2c\", \"pointer\": \"/reduce");
    config::Catalog cat2 = ffsim::testing::catalog();
    const CalibrationFile c2 = parse_calibration(config::Document::parse(bad, "t.json", false));
    CHECK_THROWS_WITH_AS(apply_calibration(cat2, c2),
                         doctest::Contains("t.json:/overrides/1: unknown cpu model \"epyc_zen5_2c\" (did you mean "
                                           "\"epyc_zen5_2c_vm\"?)"),
                         ConfigError);
  }
  SUBCASE("a value without a unit") {
    std::string bad = text;
    bad.replace(bad.find("\"33GB/s\""), 8, "33");
    CHECK_THROWS_WITH_AS(parse_calibration(config::Document::parse(bad, "t.json", false)),
                         "t.json:/overrides/0/value: expected a bandwidth or a time with unit (e.g. \"33.1GB/s\" or "
                         "\"9.4us\"), got number 33",
                         ConfigError);
  }
}

TEST_CASE("calib: a CUDA pipeline of 8 virtual devices on the H200 machine shares its one link") {
  // shared/reference/h200-probe.md: 8 "virtual GPUs" on the one H200, 186 MiB each, so all 16
  // copies of a chunk cross the one PCIe link. Bounds from the node model: the port's duplex cap
  // (99.9 GB/s) carries 8 S down and 8 S up, 16 S / 99.9 GB/s; DRAM (71 GB/s) carries the 8 D2H
  // writes, the reduce's 8 reads and 1 write, and the 8 H2D reads, 25 S / 71 GB/s. The pipeline of
  // 47 chunks of 4 MiB adds its fill (about 3 chunk times, 6%) to the larger bound.
  const BenchModel m = make_bench_model(ffsim::testing::catalog(), "h200_probe_machine");
  Point p = point("pipeline", 186 * MiB);
  p.backend = "cuda";
  p.devices = 8;
  p.threads = 16;
  p.chunk_bytes = 4 * MiB;
  eval::FluidEngine fluid;
  const double t = simulate(m, ModelParams{published(m), unset_memory_model(), ""}, p, fluid);
  const double S = 186 * MiB;
  const double bound = std::max(16 * S / 99.9e9, 25 * S / 71e9);
  CHECK(t >= bound);
  CHECK(t <= 1.15 * bound);
  // One virtual device: D2H and H2D of S, nothing to sum, the two directions overlapping. Bounds:
  // the link, S / 55.2 GB/s per direction; the duplex cap, 2 S / 99.9 GB/s; DRAM, which the D2H
  // writes and the H2D reads, 2 S / 71 GB/s (3.0, 3.9 and 5.5 ms): DRAM binds (the probe's 71 GB/s
  // is a CPU copy rate; calibrating the machine would say what its DMA traffic gets).
  p.devices = 1;
  const double t1 = simulate(m, ModelParams{published(m), unset_memory_model(), ""}, p, fluid);
  const double bound1 = std::max({S / 55.2e9, 2 * S / 99.9e9, 2 * S / 71e9});
  CHECK(bound1 == doctest::Approx(2 * S / 71e9));
  CHECK(t1 >= bound1);
  CHECK(t1 <= 1.15 * bound1);
}

TEST_CASE("calib: the tree out of place reads each added slice once more (write-allocate), in place not") {
  // hfreduce's tree adds a rank's contribution and its children's into `data`: in place that is the
  // contribution's own buffer, just read; out of place another one, whose lines an ordinary store
  // reads from memory first (src/hfreduce/tree.cpp). The model reads the slice once more per add out
  // of place: DRAM traffic (and the add's inputs on its cores, here 1e15 B/s: nothing). So with
  // memory that costs nothing the two placements take the same time but for the slices' interplay
  // on the transport (an add that ends a hair later reorders the window's sends: up to 0.14%, 3
  // ranks at 8 MiB; held to 0.5%), and with memory that binds (5 GB/s per socket) out of place
  // takes longer by more than 1%; 2, 3 and 4 ranks, one slice and many, an odd size.
  BenchModel m = make_bench_model(ffsim::testing::catalog(), "epyc_zen5_2c_vm");
  auto eng = app::make_engine("fluid");
  for (const int ranks : {2, 3, 4})
    for (const double S : {512 * KiB, 8 * MiB + 4 * 13}) {
      CAPTURE(ranks);
      CAPTURE(S);
      Point p = point("internode", S);
      p.variant = "double_tree";
      p.ranks = ranks;
      p.chunk_bytes = 512 * KiB;
      auto time = [&](const std::string& placement, double dram) {
        Point q = p;
        q.placement = placement;
        ModelParams mp;
        at(mp.node, Param::DramBandwidth) = dram;
        at(mp.node, Param::ReducePerCore) = 1e15;
        at(mp.node, Param::NicBandwidth) = 10e9;
        at(mp.node, Param::NicLatency) = 0;
        return simulate(m, mp, q, *eng);
      };
      CHECK(time("out_of_place", 1e18) ==
            doctest::Approx(time("in_place", 1e18)).epsilon(5e-3).scale(ffsim::testing::kRelative));
      CHECK(time("out_of_place", 5e9) > time("in_place", 5e9) * 1.01);
    }
}
