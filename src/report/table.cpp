// Text tables and CSV.
// SPDX-License-Identifier: Apache-2.0
#include "report/table.hpp"

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace ffsim::report {

namespace {
// A number, optionally followed by a space and a unit ("37.3 GiB", "-5%", "11,600"), or "-".
bool numeric_like(const std::string& s) {
  if (s == "-") return true;  // a missing number sits where the numbers do
  const std::string head = s.substr(0, s.find(' '));
  if (head.empty()) return false;
  bool digit = false;
  for (std::size_t i = 0; i < head.size(); ++i) {
    const char c = head[i];
    if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
    else if (!(c == '.' || c == ',' || c == '%' || c == 'x' || ((c == '-' || c == '+') && i == 0))) return false;
  }
  return digit && head.back() != 'x';
}
// Display width counting UTF-8 continuation bytes as zero.
std::size_t width(const std::string& s) {
  std::size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;
  return w;
}
}  // namespace

void Table::add(std::vector<std::string> row) {
  FFSIM_ASSERT(row.size() == header_.size(), "table row has " + std::to_string(row.size()) + " cells, header has " +
                                                 std::to_string(header_.size()));
  rows_.push_back(std::move(row));
}

void Table::rule() { rules_.push_back(rows_.size()); }

void Table::print(std::ostream& os, const std::string& indent) const {
  std::vector<std::size_t> w(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) w[c] = width(header_[c]);
  for (const auto& r : rows_)
    for (std::size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], width(r[c]));
  auto line = [&](const std::vector<std::string>& cells, bool head) {
    std::string out = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t pad = w[c] - width(cells[c]);
      const bool right = !head && c > 0 && numeric_like(cells[c]);
      if (right) out += std::string(pad, ' ') + cells[c];
      else out += cells[c] + (c + 1 < cells.size() ? std::string(pad, ' ') : "");
      if (c + 1 < cells.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    os << out << '\n';
  };
  line(header_, true);
  std::size_t total = 0;
  for (std::size_t c = 0; c < w.size(); ++c) total += w[c] + (c + 1 < w.size() ? 2 : 0);
  const std::string dashes = indent + std::string(total, '-');
  os << dashes << '\n';
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (i > 0 && std::find(rules_.begin(), rules_.end(), i) != rules_.end()) os << dashes << '\n';
    line(rows_[i], false);
  }
}

void Table::print_csv(std::ostream& os) const {
  auto cell = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) os << (c ? "," : "") << cell(cells[c]);
    os << '\n';
  };
  line(header_);
  for (const auto& r : rows_) line(r);
}

Table Table::transposed(const std::string& corner) const {
  std::vector<std::string> header{corner};
  for (const auto& r : rows_) header.push_back(r.empty() ? std::string() : r.front());
  Table t(std::move(header));
  for (std::size_t c = 1; c < header_.size(); ++c) {
    std::vector<std::string> row{header_[c]};
    for (const auto& r : rows_) row.push_back(c < r.size() ? r[c] : std::string());
    t.add(std::move(row));
  }
  return t;
}

}  // namespace ffsim::report
