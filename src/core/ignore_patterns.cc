#include "core/ignore_patterns.h"

#include <fnmatch.h>

#include <fstream>

#include "core/strings.h"

namespace torchx::internal {

bool IsIgnored(const std::string& rel, const std::vector<std::string>& patterns) {
  bool ignored = false;
  for (std::string p : patterns) {
    p = std::string(Strip(p));  // docker trims both ends; TorchX's .torchxignore lines are indented
    if (p.empty() || p[0] == '#') continue;
    bool negate = p[0] == '!';
    if (negate) p.erase(0, 1);
    while (!p.empty() && p.back() == '/') p.pop_back();
    while (p.rfind("./", 0) == 0) p.erase(0, 2);
    if (p.empty()) continue;
    // A pattern matches the path itself or any of its parent directories.
    bool match = false;
    for (size_t end = rel.size();; end = rel.rfind('/', end - 1)) {
      if (fnmatch(p.c_str(), rel.substr(0, end).c_str(), 0) == 0) {
        match = true;
        break;
      }
      if (end == 0 || rel.rfind('/', end - 1) == std::string::npos) break;
    }
    if (match) ignored = !negate;
  }
  return ignored;
}

std::vector<std::string> ReadPatterns(const std::string& file) {
  std::vector<std::string> out;
  std::ifstream f(file);
  for (std::string line; std::getline(f, line);) out.push_back(line);
  return out;
}

}  // namespace torchx::internal
