#include "core/spelling.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace torchx::internal {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<std::string> SpellCheck(std::string_view word, const std::vector<std::string>& candidates) {
  size_t limit = std::max<size_t>(2, word.size() / 3);
  std::optional<std::string> best;
  size_t best_dist = limit + 1;
  for (const std::string& c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_dist) {
      best_dist = d;
      best = c;
    }
  }
  return best;
}

std::string DidYouMeanSuffix(std::string_view word, const std::vector<std::string>& candidates) {
  if (auto s = SpellCheck(word, candidates)) return fmt::format(" Did you mean `{}`?", *s);
  return "";
}

std::string SuggestionSuffix(std::string_view word, const std::vector<std::string>& candidates) {
  if (auto s = SpellCheck(word, candidates)) return fmt::format(" Did you mean `{}`?", *s);
  return fmt::format(" Valid choices: {}", fmt::join(candidates, ", "));
}

}  // namespace torchx::internal
