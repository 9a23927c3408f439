// dockerignore-style patterns (.torchxignore, .dockerignore): fnmatch patterns on '/'-separated
// paths relative to a workspace, `!` re-includes, `#` comments; a pattern matching a directory
// excludes everything under it; the last matching pattern wins.
#pragma once

#include <string>
#include <vector>

namespace torchx::internal {

bool IsIgnored(const std::string& rel, const std::vector<std::string>& patterns);

/// The lines of `file` (empty when it does not exist).
std::vector<std::string> ReadPatterns(const std::string& file);

}  // namespace torchx::internal
