// The checkpoint-interval sweep of `ffsim ops --checkpoint-sweep`.
// SPDX-License-Identifier: Apache-2.0
#include <array>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "ops/simulate.hpp"

namespace ffsim::ops {

std::vector<double> default_sweep_grid(double young_daly_s) {
  std::vector<double> g;
  for (int k = -6; k <= 6; ++k) g.push_back(young_daly_s * std::exp2(k / 6.0));
  return g;
}

namespace {

// Least squares of w = a / x + b x + c: the 3x3 normal equations by Gaussian elimination with
// partial pivoting. Returns {a, b, c}, or zeros when the system is singular.
std::array<double, 3> fit_waste(const std::vector<SweepPoint>& pts) {
  double m[3][4] = {};
  for (const auto& p : pts) {
    const double f[3] = {1.0 / p.interval_s, p.interval_s, 1.0};
    const double w = 1.0 - p.efficiency;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m[i][j] += f[i] * f[j];
      m[i][3] += f[i] * w;
    }
  }
  for (int c = 0; c < 3; ++c) {
    int piv = c;
    for (int r = c + 1; r < 3; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[piv][c])) piv = r;
    if (m[piv][c] == 0) return {0.0, 0.0, 0.0};
    for (int k = 0; k < 4; ++k) std::swap(m[c][k], m[piv][k]);
    for (int r = 0; r < 3; ++r) {
      if (r == c) continue;
      const double q = m[r][c] / m[c][c];
      for (int k = 0; k < 4; ++k) m[r][k] -= q * m[c][k];
    }
  }
  return {m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]};
}

}  // namespace

CheckpointSweep sweep_checkpoint(const OpsParams& p, std::size_t job, const std::vector<double>& intervals, int seeds) {
  validate(p);
  if (job >= p.jobs.size()) throw ValueError("checkpoint sweep: no job " + std::to_string(job));
  if (seeds < 1) throw ValueError("checkpoint sweep: seeds must be at least 1");
  if (intervals.size() < 3) throw ValueError("checkpoint sweep: give at least 3 intervals");
  const JobSpec& j = p.jobs[job];
  CheckpointSweep s;
  s.job = j.name;
  s.seeds = seeds;
  s.checkpoint_cost_s = j.checkpoint_cost_s;
  const double rate = job_failure_rate(p, j);
  s.mtbf_s = rate > 0 ? 1.0 / rate : std::numeric_limits<double>::infinity();
  s.young_daly_s = std::sqrt(2.0 * s.checkpoint_cost_s * s.mtbf_s);
  double best = -1;
  for (double tau : intervals) {
    if (!(tau > 0)) throw ValueError("checkpoint sweep: intervals must be positive");
    OpsParams q = p;
    q.jobs[job].checkpoint_interval_s = tau;
    double useful = 0, busy = 0;
    for (int k = 0; k < seeds; ++k) {
      q.seed = p.seed + static_cast<std::uint64_t>(k);
      const OpsResult r = simulate(q);
      useful += r.jobs[job].gpu_s.useful;
      busy += r.jobs[job].gpu_s.busy();
    }
    const double eff = busy > 0 ? useful / busy : 0;
    s.points.push_back({tau, eff});
    if (eff > best) {
      best = eff;
      s.best_s = tau;
    }
  }
  const auto [a, b, c] = fit_waste(s.points);
  (void)c;
  s.fit_best_s = a > 0 && b > 0 ? std::sqrt(a / b) : 0;
  return s;
}

}  // namespace ffsim::ops
