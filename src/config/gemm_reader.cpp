// Measured GEMM rates (a CSV such as shared/reference/compute/gemm_a100.csv) and the GPU facts the
// GEMM model needs, read into calib's plain structs.
// SPDX-License-Identifier: Apache-2.0
#include "config/gemm_reader.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "config/catalog.hpp"
#include "config/csv.hpp"
#include "config/hw_reader.hpp"
#include "config/reader.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::config {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

calib::GemmCsv parse_gemm_csv(const std::string& text, const std::string& file) {
  calib::GemmCsv csv;
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
    calib::GemmRow r;
    r.line = line;
    r.source = f[col["source"]];
    if (lower(r.source).rfind("same figure", 0) == 0 || lower(r.source).rfind("same ", 0) == 0) {
      if (last_source.empty())
        throw ConfigError(file, "", where + "\"" + r.source + "\" with no row above to refer to");
      r.source = last_source;
    }
    last_source = r.source;
    r.gpu = f[col["gpu"]];
    {
      // The form factor as the gpu column states it ("A100 PCIe", "A100 SXM"); "" when it does not
      // ("A100 80GB (form factor not stated)"): the fit then takes the --gpu model's.
      const std::string g = lower(r.gpu);
      const bool pcie = g.find("pcie") != std::string::npos, sxm = g.find("sxm") != std::string::npos;
      if (pcie && sxm)
        throw ConfigError(file, "",
                          where + "column gpu: \"" + r.gpu + "\" names both PCIe and SXM: expected one form factor");
      r.form_factor = pcie ? "pcie" : sxm ? "sxm" : "";
    }
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

calib::GemmCsv load_gemm_csv(const std::string& path) { return parse_gemm_csv(Document::read_file(path), path); }

calib::GemmGpu gemm_gpu(const Catalog& cat, const std::string& name) {
  const auto* e = cat.find(kGpu, name);
  if (!e) {
    const auto valid = cat.names(kGpu);
    throw UsageError("--gpu: unknown GPU model \"" + name + "\"" + did_you_mean(name, valid) +
                     "; valid: " + join(valid));
  }
  const auto g = parse_gpu(*e);
  if (g.sms <= 0)
    throw UsageError("--gpu: GPU model " + name + " (" + e->file +
                     ") has no \"sms\" fact (its streaming multiprocessors): the GEMM model counts waves over them; "
                     "add it with its source");
  calib::GemmGpu out;
  out.name = name;
  out.sms = g.sms;
  out.form_factor = g.form_factor;
  for (const auto& [p, rate] : g.compute) out.peak[p] = rate.peak.si();
  for (const auto& s : e->document.sources())
    if (s.pointer == "/sms") out.sms_source = s.source;
  return out;
}

}  // namespace ffsim::config
