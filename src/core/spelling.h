// "Did you mean" suggestions for unknown names (schedulers, components, named resources, keys).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torchx::internal {

/// Levenshtein distance between a and b.
size_t EditDistance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, if it is close enough to be a plausible typo (distance at
/// most a third of the word's length, and at least 2 edits allowed); ties go to the first.
std::optional<std::string> SpellCheck(std::string_view word, const std::vector<std::string>& candidates);

/// " Did you mean `x`?" for the closest candidate, or "" (for messages that list the choices
/// themselves).
std::string DidYouMeanSuffix(std::string_view word, const std::vector<std::string>& candidates);

/// " Did you mean `x`?" or, with no close candidate, " Valid choices: a, b, c".
std::string SuggestionSuffix(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace torchx::internal
