// SPDX-License-Identifier: Apache-2.0
#include "calib/gemm_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "calib/lsq.hpp"
#include "config/catalog.hpp"
#include "config/hw_reader.hpp"
#include "config/reader.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::calib {

namespace {

// RFC 4180 fields of one record; `text` from `pos`, advancing it past the record's newline.
std::vector<std::string> csv_record(const std::string& text, std::size_t& pos) {
  std::vector<std::string> f;
  std::string cur;
  bool quoted = false;
  while (pos < text.size()) {
    const char c = text[pos++];
    if (quoted) {
      if (c == '"') {
        if (pos < text.size() && text[pos] == '"')
          cur += '"', ++pos;
        else
          quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      f.push_back(cur);
      cur.clear();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      cur += c;
    }
  }
  f.push_back(cur);
  return f;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

GemmErrors errors_of(const std::vector<double>& rel) {
  GemmErrors e;
  e.points = static_cast<int>(rel.size());
  for (double r : rel) {
    e.mape += std::abs(r);
    e.max_abs = std::max(e.max_abs, std::abs(r));
  }
  if (e.points) e.mape /= e.points;
  return e;
}

}  // namespace

GemmCsv parse_gemm_csv(const std::string& text, const std::string& file) {
  GemmCsv csv;
  csv.file = file;
  std::size_t pos = 0;
  int line = 1;
  const auto header = csv_record(text, pos);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[lower(header[i])] = i;
  const std::vector<std::string> need{"source", "gpu", "dtype", "m", "n", "k", "tflops", "kind"};
  for (const auto& n : need)
    if (!col.count(n))
      throw ConfigError(file, "",
                        "line 1: no column \"" + n +
                            "\": expected a header with source,gpu,dtype,M,N,K,tflops,kind (the columns of "
                            "shared/reference/compute/gemm_a100.csv)");
  std::string last_source;
  while (pos < text.size()) {
    const std::size_t start = pos;
    ++line;
    const auto f = csv_record(text, pos);
    // A record may span lines inside quotes: count the newlines it held.
    line += static_cast<int>(
                std::count(text.begin() + static_cast<long>(start), text.begin() + static_cast<long>(pos), '\n')) -
            1;
    if (f.size() == 1 && f[0].empty()) continue;
    const std::string where = "line " + std::to_string(line) + ": ";
    if (f.size() < header.size())
      throw ConfigError(file, "",
                        where + "expected " + std::to_string(header.size()) + " fields (the header's); found " +
                            std::to_string(f.size()));
    GemmRow r;
    r.line = line;
    r.source = f[col["source"]];
    if (lower(r.source).rfind("same figure", 0) == 0 || lower(r.source).rfind("same ", 0) == 0) {
      if (last_source.empty())
        throw ConfigError(file, "", where + "\"" + r.source + "\" with no row above to refer to");
      r.source = last_source;
    }
    last_source = r.source;
    r.gpu = f[col["gpu"]];
    r.dtype = f[col["dtype"]];
    r.kind = f[col["kind"]];
    if (col.count("stat")) r.stat = f[col["stat"]];
    auto num = [&](const char* c) {
      const std::string& s = f[col[c]];
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || !(v > 0) || !std::isfinite(v))
        throw ConfigError(file, "", where + "column " + c + ": expected a positive number; found \"" + s + "\"");
      return v;
    };
    r.shape.m = static_cast<long long>(num("m"));
    r.shape.n = static_cast<long long>(num("n"));
    r.shape.k = static_cast<long long>(num("k"));
    r.tflops = num("tflops");
    const std::string d = lower(r.dtype);
    if (d.find("tf32") != std::string::npos)
      r.precision = "tf32";  // "fp32 (TF32 likely, NGC 22.07)" too
    else if (d.find("fp16") != std::string::npos || d.find("bf16") != std::string::npos)
      r.precision = "fp16";
    else if (d.find("fp32") != std::string::npos)
      r.precision = "fp32";
    else
      throw ConfigError(file, "", where + "column dtype: expected fp16, bf16, tf32 or fp32; found \"" + r.dtype + "\"");
    const std::string k = lower(r.kind);
    if (k.find("chart read-off") != std::string::npos) r.uncertainty_tflops = 5;  // "+/-5 TFLOPS" (README)
    if (k.find("secondary copy") != std::string::npos)
      r.excluded = "a secondary copy of a row of another source (kind \"" + r.kind + "\"): counted once, there";
    // The dataset: the publisher (the source's first word) and whether the figure was measured or read off a chart.
    std::string first = r.source.substr(0, r.source.find(' '));
    first.erase(std::remove(first.begin(), first.end(), '"'), first.end());
    r.dataset = first + (r.uncertainty_tflops > 0 ? " (chart read-off)" : "");
    csv.rows.push_back(r);
  }
  if (csv.rows.empty()) throw ConfigError(file, "", "no rows: expected measured GEMMs below the header");
  return csv;
}

GemmCsv load_gemm_csv(const std::string& path) { return parse_gemm_csv(config::Document::read_file(path), path); }

GemmGpu gemm_gpu(const config::Catalog& cat, const std::string& name) {
  const auto* e = cat.find(config::kGpu, name);
  if (!e) {
    const auto valid = cat.names(config::kGpu);
    throw UsageError("--gpu: unknown GPU model \"" + name + "\"" + did_you_mean(name, valid) +
                     "; valid: " + join(valid));
  }
  const auto g = config::parse_gpu(*e);
  if (g.sms <= 0)
    throw UsageError("--gpu: GPU model " + name + " (" + e->file +
                     ") has no \"sms\" fact (its streaming multiprocessors): the GEMM model counts waves over them; "
                     "add it with its source");
  GemmGpu out;
  out.name = name;
  out.sms = g.sms;
  for (const auto& [p, rate] : g.compute) out.peak[p] = rate.peak.si();
  for (const auto& s : e->document.sources())
    if (s.pointer == "/sms") out.sms_source = s.source;
  return out;
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

std::vector<train::GemmTile> default_gemm_tiles() {
  return {{128, 128}, {256, 128}, {128, 256}, {128, 64}, {64, 128}, {256, 64}, {64, 64}};
}

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
    fit.tiles.push_back({t, errors_of(rel_errors(used, v))});
  }
  std::stable_sort(fit.tiles.begin(), fit.tiles.end(), [](const GemmTileTrial& a, const GemmTileTrial& b) {
    const double ea = std::isnan(a.errors.mape) ? 1e300 : a.errors.mape,
                 eb = std::isnan(b.errors.mape) ? 1e300 : b.errors.mape;
    return ea < eb;
  });
  const train::GemmTile tile = fit.tiles.front().tile;
  fit.values = fit_gemm_values(used, gpu, tile);
  fit.all = errors_of(rel_errors(used, fit.values));
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
    res.in_fit = errors_of(rel_errors(mine, fit.values));
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
        res.held_out = errors_of(rel_errors(mine, v));
      }
    }
    fit.datasets.push_back(res);
  }
  return fit;
}

}  // namespace ffsim::calib
