// SPDX-License-Identifier: Apache-2.0
#include "config/throughput_reader.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "config/csv.hpp"
#include "config/reader.hpp"
#include "core/error.hpp"
#include "core/spell.hpp"

namespace ffsim::config {

calib::ThroughputCsv parse_throughput_csv(const std::string& text, const std::string& file) {
  calib::ThroughputCsv csv;
  csv.file = file;
  std::size_t pos = 0;
  const auto header = csv_record(text, pos);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  const std::vector<std::string> need{"dataset", "source",    "model",     "gpu",        "precision", "batch",
                                      "seq",     "optimizer", "attention", "throughput", "unit",      "excluded"};
  for (const auto& n : need)
    if (!col.count(n))
      throw ConfigError(file, "",
                        "line 1: no column \"" + n + "\": expected a header with " + join(need) +
                            " (the columns scripts/compute-throughputs.py writes)");
  int line = 1;
  while (pos < text.size()) {
    const std::size_t start = pos;
    ++line;
    const auto f = csv_record(text, pos);
    const int first_line = line;
    line += static_cast<int>(
                std::count(text.begin() + static_cast<long>(start), text.begin() + static_cast<long>(pos), '\n')) -
            1;
    if (f.size() == 1 && f[0].empty()) continue;
    const std::string where = "line " + std::to_string(first_line) + ": ";
    if (f.size() < header.size())
      throw ConfigError(file, "",
                        where + "expected " + std::to_string(header.size()) + " fields (the header's); found " +
                            std::to_string(f.size()));
    calib::ThroughputRow r;
    r.line = first_line;
    const auto at = [&](const char* c) -> const std::string& { return f[col[c]]; };
    r.dataset = at("dataset");
    r.source = at("source");
    r.model = at("model");
    r.gpu = at("gpu");
    r.excluded = at("excluded");
    if (col.count("note")) r.note = f[col["note"]];
    if (r.dataset.empty()) throw ConfigError(file, "", where + "column dataset: expected a name; found nothing");
    const bool used = r.excluded.empty();
    auto num = [&](const char* c, bool required) {
      const std::string& s = at(c);
      if (s.empty() && !required) return 0.0;
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || !(v > 0) || !std::isfinite(v))
        throw ConfigError(file, "", where + "column " + c + ": expected a positive number; found \"" + s + "\"");
      return v;
    };
    r.batch = num("batch", used);
    if (col.count("micro_batch") && !f[col["micro_batch"]].empty()) {
      r.micro_batch = num("micro_batch", false);
      if (used && (r.batch / r.micro_batch != std::floor(r.batch / r.micro_batch)))
        throw ConfigError(file, "",
                          where + "column micro_batch: expected a divisor of the batch (" + f[col["batch"]] +
                              "); found \"" + f[col["micro_batch"]] + "\"");
    }
    if (col.count("shards") && !f[col["shards"]].empty()) {
      const double sh = num("shards", false);
      if (sh != std::floor(sh) || sh > 1e6)
        throw ConfigError(
            file, "", where + "column shards: expected a whole number of ranks; found \"" + f[col["shards"]] + "\"");
      r.shards = static_cast<int>(sh);
    }
    r.seq = num("seq", false);
    r.throughput = num("throughput", used);
    const auto choice = [&](const char* c, const std::vector<std::string>& valid, bool allow_empty) {
      const std::string& s = at(c);
      if (s.empty() && allow_empty) return s;
      if (std::find(valid.begin(), valid.end(), s) == valid.end())
        throw ConfigError(file, "",
                          where + "column " + c + ": expected one of " + join(valid) + "; found \"" + s + "\"" +
                              did_you_mean(s, valid));
      return s;
    };
    r.precision = choice("precision", {"fp16", "bf16", "tf32", "fp32"}, !used);
    r.optimizer = choice("optimizer", {"adam", "sgd"}, !used);
    r.flash_attention = choice("attention", {"flash", "materialised"}, true) == "flash";
    const std::string unit = choice("unit", {"samples/s", "tokens/s"}, !used);
    r.tokens = unit == "tokens/s";
    if (used && r.tokens && r.seq <= 0)
      throw ConfigError(file, "",
                        where + "column seq: a throughput in tokens/s needs the sequence length; found nothing");
    if (used && r.model.empty())
      throw ConfigError(file, "", where + "column model: expected a catalog nn_model; found nothing");
    if (used && r.gpu.empty()) throw ConfigError(file, "", where + "column gpu: expected a catalog gpu; found nothing");
    csv.rows.push_back(r);
  }
  if (csv.rows.empty()) throw ConfigError(file, "", "no rows: expected measured throughputs below the header");
  return csv;
}

calib::ThroughputCsv load_throughput_csv(const std::string& path) {
  return parse_throughput_csv(Document::read_file(path), path);
}

}  // namespace ffsim::config
