// Did-you-mean suggestions by edit distance.
// SPDX-License-Identifier: Apache-2.0
#include "core/spell.hpp"

#include <algorithm>
#include <cctype>

namespace ffsim {

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {
std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}
}  // namespace

std::optional<std::string> suggest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string lw = lower(word);
  for (const auto& c : candidates)
    if (lower(c) == lw) return c;
  const int limit = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : 3;
  std::optional<std::string> best;
  int best_d = limit + 1;
  for (const auto& c : candidates) {
    const int d = edit_distance(lw, lower(c));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto s = suggest(word, candidates);
  return s ? " (did you mean \"" + *s + "\"?)" : std::string();
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string r;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) r += sep;
    r += items[i];
  }
  return r;
}

}  // namespace ffsim
