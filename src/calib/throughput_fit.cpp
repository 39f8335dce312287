// SPDX-License-Identifier: Apache-2.0
#include "calib/throughput_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "calib/lsq.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace ffsim::calib {

namespace {

constexpr int kParams = 3;  // conv, gemm (linear and attention), memory (with attention scores')
const char* const kNames[kParams] = {"conv", "gemm", "memory"};

std::array<double, kParams> features(const train::ShapedTimes& t) {
  return {t.conv_s, t.linear_s + t.attention_s, t.memory_s + t.score_memory_s};
}

train::ShapedMultipliers multipliers(const std::array<double, kParams>& x) {
  train::ShapedMultipliers m;
  m.conv = x[0];
  m.linear = m.attention = x[1];
  m.memory = m.score_memory = x[2];
  return m;
}

bool used(const ThroughputRow& r, const ThroughputCase& c) { return r.excluded.empty() && c.modelled; }

// The fit on the rows whose index `take` accepts; `fixed` gets the multipliers held at 1.
template <class Take>
train::ShapedMultipliers fit_rows(const ThroughputCsv& csv, const std::vector<ThroughputCase>& cases, Take take,
                                  const ThroughputBounds& bounds, std::vector<std::string>& fixed) {
  std::array<bool, kParams> active{};
  for (std::size_t i = 0; i < csv.rows.size(); ++i)
    if (take(i)) {
      const auto f = features(cases[i].times);
      for (int j = 0; j < kParams; ++j) active[j] = active[j] || f[j] > 0;
    }
  std::array<double, kParams> x{1, 1, 1};
  std::array<bool, kParams> held{};
  // Active set: a multiplier whose free fit is below its lower bound (0: an unphysical negative
  // time; the GEMM model's ceiling: products faster than the peak) is held at the bound and the
  // others refitted, until none is below.
  for (;;) {
    std::vector<int> free;
    for (int j = 0; j < kParams; ++j)
      if (active[j] && !held[j]) free.push_back(j);
    std::vector<std::vector<double>> a;
    std::vector<double> b, w;
    for (std::size_t i = 0; i < csv.rows.size(); ++i) {
      if (!take(i)) continue;
      const auto f = features(cases[i].times);
      // measured = sum_free x_j f_j + sum_(held) bound_j f_j + sum_(inactive) f_j + optimizer;
      // weight 1 / measured (relative residuals).
      double rest = cases[i].times.optimizer_s;
      std::vector<double> row;
      for (int j : free) row.push_back(f[j]);
      for (int j = 0; j < kParams; ++j) {
        if (!active[j]) rest += f[j];
        else if (held[j])
          rest += bounds.lower[j] * f[j];
      }
      a.push_back(row);
      const double m = csv.rows[i].step_s();
      b.push_back(m - rest);
      w.push_back(1 / m);
    }
    if (free.empty() || a.empty()) break;
    const auto sol = linear_least_squares(a, b, w);
    int worst = -1;
    double below = 0;
    for (std::size_t j = 0; j < free.size(); ++j) {
      x[free[j]] = sol[j];
      const double d = bounds.lower[free[j]] - sol[j];
      if (d > 0 && d > below) {
        below = d;
        worst = free[j];
      }
    }
    if (worst < 0) break;
    held[worst] = true;
    x[worst] = bounds.lower[worst];
  }
  for (int j = 0; j < kParams; ++j) {
    if (!active[j])
      fixed.emplace_back(std::string(kNames[j]) + " (held at 1: no row depends on it)");
    else if (held[j])
      fixed.emplace_back(std::string(kNames[j]) + " (held at " + fmt_g(bounds.lower[j], 4) + ": " +
                         (bounds.why[j].empty() ? std::string("its free fit was negative") : bounds.why[j]) + ")");
  }
  return multipliers(x);
}

}  // namespace

ThroughputFit fit_throughput(const ThroughputCsv& csv, const std::vector<ThroughputCase>& cases,
                             const ThroughputBounds& bounds) {
  FFSIM_ASSERT(cases.size() == csv.rows.size(), "one case per row");
  ThroughputFit fit;
  fit.file = csv.file;
  const auto all = [&](std::size_t i) { return used(csv.rows[i], cases[i]); };
  fit.values = fit_rows(csv, cases, all, bounds, fit.fixed);
  std::vector<double> rel_all;
  fit.model_s.assign(csv.rows.size(), std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    if (!cases[i].modelled) continue;
    fit.model_s[i] = train::shaped_total(cases[i].times, fit.values);
    if (all(i)) rel_all.push_back(fit.model_s[i] / csv.rows[i].step_s() - 1);
  }
  fit.all = relative_errors(rel_all);
  for (const auto& r : csv.rows)
    if (std::none_of(fit.datasets.begin(), fit.datasets.end(),
                     [&](const ThroughputDataset& d) { return d.dataset == r.dataset; })) {
      ThroughputDataset d;
      d.dataset = r.dataset;
      fit.datasets.push_back(d);
    }
  for (auto& d : fit.datasets) {
    const auto in = [&](std::size_t i) { return all(i) && csv.rows[i].dataset == d.dataset; };
    const auto out = [&](std::size_t i) { return all(i) && csv.rows[i].dataset != d.dataset; };
    d.held_out_values = fit_rows(csv, cases, out, bounds, d.held_out_fixed);
    std::vector<double> rin, rout;
    for (std::size_t i = 0; i < csv.rows.size(); ++i) {
      if (csv.rows[i].dataset != d.dataset) continue;
      ++d.rows;
      if (!in(i)) {
        ++d.excluded;
        continue;
      }
      const double m = csv.rows[i].step_s();
      rin.push_back(fit.model_s[i] / m - 1);
      rout.push_back(train::shaped_total(cases[i].times, d.held_out_values) / m - 1);
    }
    d.in_fit = relative_errors(rin);
    d.held_out = relative_errors(rout);
    std::vector<std::string> nets;
    for (std::size_t i = 0; i < csv.rows.size(); ++i)
      if (in(i) && std::find(nets.begin(), nets.end(), csv.rows[i].model) == nets.end())
        nets.push_back(csv.rows[i].model);
    d.networks = static_cast<int>(nets.size());
    if (nets.size() < 2) continue;
    std::vector<double> rnet;
    for (const auto& net : nets) {
      std::vector<std::string> fixed;
      const auto others = [&](std::size_t i) { return in(i) && csv.rows[i].model != net; };
      const auto v = fit_rows(csv, cases, others, bounds, fixed);
      for (const auto& f : fixed) d.network_out_fixed.push_back(net + ": " + f);
      for (std::size_t i = 0; i < csv.rows.size(); ++i)
        if (in(i) && csv.rows[i].model == net)
          rnet.push_back(train::shaped_total(cases[i].times, v) / csv.rows[i].step_s() - 1);
    }
    d.network_out = relative_errors(rnet);
  }
  return fit;
}

}  // namespace ffsim::calib
