// SPDX-License-Identifier: Apache-2.0
#include "calib/gemm_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "calib/lsq.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::calib {

GemmErrors relative_errors(const std::vector<double>& rel) {
  GemmErrors e;
  e.points = static_cast<int>(rel.size());
  for (double r : rel) {
    e.mape += std::abs(r);
    e.max_abs = std::max(e.max_abs, std::abs(r));
  }
  if (e.points) e.mape /= e.points;
  return e;
}

train::GemmParams GemmFitValues::params(const std::string& precision) const {
  train::GemmParams p;
  p.tile = tile;
  const auto it = ceiling.find(precision);
  p.ceiling = it == ceiling.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
  p.wave_overhead_s = wave_overhead_s;
  p.launch_s = launch_s;
  return p;
}

double gemm_model_time(const GemmRow& r, const GemmGpu& gpu, const GemmFitValues& v) {
  const auto c = v.ceiling.find(r.precision);
  const auto pk = gpu.peak.find(r.precision);
  if (c == v.ceiling.end() || pk == gpu.peak.end() || !(c->second > 0)) return std::numeric_limits<double>::quiet_NaN();
  return train::gemm_time(r.shape, gpu.sms, pk->second, v.params(r.precision));
}

GemmFitValues fit_gemm_values(const std::vector<GemmRow>& rows, const GemmGpu& gpu, const train::GemmTile& tile) {
  // time = sum_p [precision = p] x waves x wave_compute_p / ceiling_p + waves x wave_overhead + launch:
  // linear in x = (1/ceiling_p..., wave_overhead, launch). Relative residuals (weights 1/measured).
  std::vector<std::string> precs;
  for (const auto& r : rows)
    if (std::find(precs.begin(), precs.end(), r.precision) == precs.end()) precs.push_back(r.precision);
  std::sort(precs.begin(), precs.end());
  for (const auto& p : precs)
    if (!gpu.peak.count(p))
      throw UsageError("--gpu: GPU model " + gpu.name + " has no " + p + " peak, which the CSV's rows need");
  GemmFitValues v;
  v.tile = tile;
  bool free_overhead = true, free_launch = true;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<std::vector<double>> a;
    std::vector<double> b, w;
    for (const auto& r : rows) {
      std::vector<double> row(precs.size(), 0.0);
      const double waves = static_cast<double>(train::gemm_waves(train::gemm_tiles(r.shape, tile), gpu.sms));
      const auto pi = static_cast<std::size_t>(std::find(precs.begin(), precs.end(), r.precision) - precs.begin());
      row[pi] = waves * train::gemm_wave_compute_s(r.shape, gpu.sms, gpu.peak.at(r.precision), tile);
      if (free_overhead) row.push_back(waves);
      if (free_launch) row.push_back(1.0);
      a.push_back(row);
      b.push_back(r.time_s());
      w.push_back(1.0 / r.time_s());
    }
    const auto x = linear_least_squares(a, b, w);
    v.ceiling.clear();
    for (std::size_t i = 0; i < precs.size(); ++i)
      v.ceiling[precs[i]] = x[i] > 0 ? 1.0 / x[i] : std::numeric_limits<double>::quiet_NaN();
    std::size_t j = precs.size();
    v.wave_overhead_s = free_overhead ? x[j++] : 0.0;
    v.launch_s = free_launch ? x[j++] : 0.0;
    // A fixed cost cannot be negative: hold the first that went below 0 at 0 and refit.
    if (v.wave_overhead_s < 0 && free_overhead) {
      free_overhead = false;
      v.wave_overhead_s = 0;
      continue;
    }
    if (v.launch_s < 0 && free_launch) {
      free_launch = false;
      v.launch_s = 0;
      continue;
    }
    break;
  }
  if (!free_overhead) v.at_bound.push_back("wave_overhead");
  if (!free_launch) v.at_bound.push_back("launch");
  return v;
}

std::vector<train::GemmTile> default_gemm_tiles() { return train::sm80_gemm_tiles(); }

GemmFit fit_gemm(const GemmCsv& csv, const GemmGpu& gpu, const std::vector<train::GemmTile>& tiles) {
  FFSIM_ASSERT(!tiles.empty(), "fit_gemm needs a tile to try");
  GemmFit fit;
  fit.file = csv.file;
  fit.gpu = gpu;
  std::vector<GemmRow> used;
  for (const auto& r : csv.rows)
    if (r.excluded.empty()) used.push_back(r);
  if (used.empty()) throw ConfigError(csv.file, "", "every row is excluded: nothing to fit");
  auto rel_errors = [&](const std::vector<GemmRow>& rows, const GemmFitValues& v) {
    std::vector<double> rel;
    for (const auto& r : rows) rel.push_back((gemm_model_time(r, gpu, v) - r.time_s()) / r.time_s());
    return rel;
  };
  for (const auto& t : tiles) {
    const auto v = fit_gemm_values(used, gpu, t);
    fit.tiles.push_back({t, relative_errors(rel_errors(used, v))});
  }
  std::stable_sort(fit.tiles.begin(), fit.tiles.end(), [](const GemmTileTrial& a, const GemmTileTrial& b) {
    const double ea = std::isnan(a.errors.mape) ? 1e300 : a.errors.mape,
                 eb = std::isnan(b.errors.mape) ? 1e300 : b.errors.mape;
    return ea < eb;
  });
  const train::GemmTile tile = fit.tiles.front().tile;
  fit.values = fit_gemm_values(used, gpu, tile);
  fit.all = relative_errors(rel_errors(used, fit.values));
  for (const auto& r : csv.rows) fit.model_s.push_back(r.excluded.empty() ? gemm_model_time(r, gpu, fit.values) : 0.0);

  std::vector<std::string> names;
  for (const auto& r : csv.rows)
    if (std::find(names.begin(), names.end(), r.dataset) == names.end()) names.push_back(r.dataset);
  for (const auto& d : names) {
    GemmDatasetResult res;
    res.dataset = d;
    std::vector<GemmRow> mine, others;
    std::vector<double> unc;
    for (const auto& r : csv.rows) {
      if (r.dataset != d) {
        if (r.excluded.empty()) others.push_back(r);
        continue;
      }
      ++res.rows;
      if (!r.excluded.empty()) {
        ++res.excluded;
        continue;
      }
      mine.push_back(r);
      unc.push_back(r.uncertainty_tflops / r.tflops);
    }
    if (!unc.empty()) {
      std::sort(unc.begin(), unc.end());
      res.median_uncertainty =
          unc.size() % 2 ? unc[unc.size() / 2] : 0.5 * (unc[unc.size() / 2 - 1] + unc[unc.size() / 2]);
    }
    res.in_fit = relative_errors(rel_errors(mine, fit.values));
    if (mine.empty()) {
      res.held_out_note = "every row excluded";
    } else if (others.empty()) {
      res.held_out_note = "no other dataset to fit on";
    } else {
      std::set<std::string> have;
      for (const auto& r : others) have.insert(r.precision);
      std::string missing;
      for (const auto& r : mine)
        if (!have.count(r.precision) && missing.find(r.precision) == std::string::npos)
          missing += (missing.empty() ? "" : ", ") + r.precision;
      if (!missing.empty()) {
        res.held_out_note = "the other datasets have no " + missing + " rows";
      } else {
        const auto v = fit_gemm_values(others, gpu, tile);
        res.held_out = relative_errors(rel_errors(mine, v));
      }
    }
    fit.datasets.push_back(res);
  }
  return fit;
}

}  // namespace ffsim::calib
