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

double GemmFitValues::ceiling_of(const std::string& form_factor, const std::string& precision) const {
  const auto f = ceiling.find(form_factor);
  if (f == ceiling.end()) return std::numeric_limits<double>::quiet_NaN();
  const auto c = f->second.find(precision);
  return c == f->second.end() ? std::numeric_limits<double>::quiet_NaN() : c->second.value;
}

train::GemmParams GemmFitValues::params(const std::string& form_factor, const std::string& precision) const {
  train::GemmParams p;
  p.tile = tile;
  p.ceiling = ceiling_of(form_factor, precision);
  p.wave_overhead_s = wave_overhead_s;
  p.launch_s = launch_s;
  return p;
}

std::string row_form_factor(const GemmRow& r, const GemmGpu& gpu) {
  return r.form_factor.empty() ? gpu.form_factor : r.form_factor;
}

double gemm_model_time(const GemmRow& r, const GemmGpu& gpu, const GemmFitValues& v) {
  const double c = v.ceiling_of(row_form_factor(r, gpu), r.precision);
  const auto pk = gpu.peak.find(r.precision);
  if (pk == gpu.peak.end() || !(c > 0)) return std::numeric_limits<double>::quiet_NaN();
  return train::gemm_time(r.shape, gpu.sms, pk->second, v.params(row_form_factor(r, gpu), r.precision));
}

namespace {

// A form factor lacking a precision another has: that one's ceiling times the geometric mean of
// the two form factors' ratios at the precisions both were fitted on. The donor is the form
// factor sharing the most fitted precisions with it (then the first by name): deterministic.
void derive_missing_ceilings(GemmFitValues& v) {
  const auto fitted = v.ceiling;  // derive from fitted ceilings only, never from a derived one
  std::set<std::string> all_precs;
  for (const auto& [ff, m] : fitted)
    for (const auto& [p, c] : m)
      if (c.value > 0) all_precs.insert(p);
  for (const auto& [ff, mine] : fitted) {
    for (const auto& p : all_precs) {
      if (mine.count(p)) continue;  // fitted (a failed fit stays NaN: never hidden by a derived value)
      std::string donor;
      std::vector<std::string> shared_best;
      for (const auto& [g, theirs] : fitted) {
        if (g == ff || !theirs.count(p) || !(theirs.at(p).value > 0)) continue;
        std::vector<std::string> shared;
        for (const auto& [q, c] : mine)
          if (c.value > 0 && theirs.count(q) && theirs.at(q).value > 0) shared.push_back(q);
        if (shared.size() > shared_best.size()) {
          donor = g;
          shared_best = shared;
        }
      }
      if (donor.empty()) continue;
      double log_ratio = 0;
      std::string at;
      for (const auto& q : shared_best) {
        log_ratio += std::log(mine.at(q).value / fitted.at(donor).at(q).value);
        at += (at.empty() ? "" : ", ") + q;
      }
      const double ratio = std::exp(log_ratio / static_cast<double>(shared_best.size()));
      std::ostringstream why;
      why.precision(4);
      why << donor << " " << p << " x " << ratio << " (the " << ff << "/" << donor << " ratio at " << at << "), [I]";
      v.ceiling[ff][p] = {fitted.at(donor).at(p).value * ratio, 0, why.str()};
    }
  }
}

}  // namespace

GemmFitValues fit_gemm_values(const std::vector<GemmRow>& rows, const GemmGpu& gpu, const train::GemmTile& tile) {
  // time = sum_c [column = c] x waves x wave_compute / ceiling_c + waves x wave_overhead + launch,
  // a column per (form factor, precision): linear in x = (1/ceiling_c..., wave_overhead, launch).
  // Relative residuals (weights 1/measured).
  std::vector<std::pair<std::string, std::string>> cols;  // (form factor, precision)
  std::map<std::pair<std::string, std::string>, int> count;
  for (const auto& r : rows) {
    const std::pair<std::string, std::string> c{row_form_factor(r, gpu), r.precision};
    if (!count[c]++) cols.push_back(c);
  }
  std::sort(cols.begin(), cols.end());
  for (const auto& [ff, p] : cols)
    if (!gpu.peak.count(p))
      throw UsageError("--gpu: GPU model " + gpu.name + " has no " + p + " peak, which the CSV's rows need");
  GemmFitValues v;
  v.tile = tile;
  bool free_overhead = true, free_launch = true;
  // A ceiling is at most 1 (a full wave at the peak): a column whose free fit went above it is held
  // at 1, its work moved to the right-hand side, and the rest refitted.
  std::vector<bool> at_one(cols.size(), false);
  for (std::size_t attempt = 0; attempt < cols.size() + 3; ++attempt) {
    std::vector<std::vector<double>> a;
    std::vector<double> b, w;
    for (const auto& r : rows) {
      std::vector<double> row;
      const double waves = static_cast<double>(train::gemm_waves(train::gemm_tiles(r.shape, tile), gpu.sms));
      const std::pair<std::string, std::string> c{row_form_factor(r, gpu), r.precision};
      const auto ci = static_cast<std::size_t>(std::find(cols.begin(), cols.end(), c) - cols.begin());
      const double work = waves * train::gemm_wave_compute_s(r.shape, gpu.sms, gpu.peak.at(r.precision), tile);
      for (std::size_t i = 0; i < cols.size(); ++i)
        if (!at_one[i]) row.push_back(i == ci ? work : 0.0);
      if (free_overhead) row.push_back(waves);
      if (free_launch) row.push_back(1.0);
      a.push_back(row);
      b.push_back(r.time_s() - (at_one[ci] ? work : 0.0));
      w.push_back(1.0 / r.time_s());
    }
    const auto x = linear_least_squares(a, b, w);
    v.ceiling.clear();
    std::size_t j = 0;
    int above = -1;  // the free column furthest above 1
    double worst = 1;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      double c = 1;
      if (!at_one[i]) {
        const double xi = x[j++];
        c = xi > 0 ? 1.0 / xi : std::numeric_limits<double>::quiet_NaN();
        if (c > worst) {
          worst = c;
          above = static_cast<int>(i);
        }
      }
      v.ceiling[cols[i].first][cols[i].second] = {c, count[cols[i]], ""};
    }
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
    if (above >= 0) {
      at_one[static_cast<std::size_t>(above)] = true;
      continue;
    }
    break;
  }
  if (!free_overhead) v.at_bound.push_back("wave_overhead");
  if (!free_launch) v.at_bound.push_back("launch");
  for (std::size_t i = 0; i < cols.size(); ++i)
    if (at_one[i]) v.at_bound.push_back("ceiling " + cols[i].first + " " + cols[i].second);
  derive_missing_ceilings(v);
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
      // A (form factor, precision) of this dataset the others' fit has no ceiling for, fitted or
      // derived, cannot be predicted: say which.
      const auto v = fit_gemm_values(others, gpu, tile);
      std::vector<std::string> missing;
      for (const auto& r : mine) {
        const std::string what = row_form_factor(r, gpu) + " " + r.precision;
        if (!(v.ceiling_of(row_form_factor(r, gpu), r.precision) > 0) &&
            std::find(missing.begin(), missing.end(), what) == missing.end())
          missing.push_back(what);
      }
      if (!missing.empty()) {
        std::string list;
        for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
        res.held_out_note = "the other datasets have no " + list + " rows";
      } else {
        res.held_out = relative_errors(rel_errors(mine, v));
      }
    }
    fit.datasets.push_back(res);
  }
  return fit;
}

}  // namespace ffsim::calib
