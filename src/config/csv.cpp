// SPDX-License-Identifier: Apache-2.0
#include "config/csv.hpp"

namespace ffsim::config {

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

}  // namespace ffsim::config
