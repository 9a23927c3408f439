#include "core/strings.h"

namespace torchx::internal {
namespace {
constexpr std::string_view kWhitespace = " \t\n\r\f\v";
}

std::string_view Strip(std::string_view s) {
  size_t b = s.find_first_not_of(kWhitespace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kWhitespace);
  return s.substr(b, e - b + 1);
}

std::vector<std::string> SplitAny(std::string_view s, std::string_view delims) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || delims.find(s[i]) != std::string_view::npos) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::vector<std::string> SplitWhitespace(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && kWhitespace.find(s[i]) != std::string_view::npos) ++i;
    size_t start = i;
    while (i < s.size() && kWhitespace.find(s[i]) == std::string_view::npos) ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

}  // namespace torchx::internal
