// Did-you-mean suggestions by edit distance (ninja's SpellcheckString).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ffsim {

/// Levenshtein distance between a and b (insertions, deletions, substitutions).
[[nodiscard]] int edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest to `word` if its distance is small enough to be a likely typo
/// (at most 1 for words of up to 4 characters, 2 up to 8, else 3); ties go to the first
/// candidate in order. Case-insensitive matches win over everything else.
[[nodiscard]] std::optional<std::string> suggest(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean \"x\"?)" or "" when there is no good suggestion.
[[nodiscard]] std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// "a, b, c" in the given order.
[[nodiscard]] std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace ffsim
