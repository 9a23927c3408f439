#include "core/file_text.h"

#include <fstream>

#include <fmt/format.h>

namespace torchx::internal {

Result<std::string> ReadInputFile(const std::string& path, std::string_view what, size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFoundError(fmt::format("{} {}: cannot be read", what, path));
  // Read in chunks, at most one past the limit: a pipe or a device has no size to ask for first.
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= max_bytes && f.read(chunk, sizeof chunk).gcount() > 0) {
    text.append(chunk, static_cast<size_t>(f.gcount()));
  }
  if (f.bad()) return NotFoundError(fmt::format("{} {}: cannot be read", what, path));
  if (text.size() > max_bytes) {
    std::string limit = max_bytes >= (size_t{1} << 20) && max_bytes % (size_t{1} << 20) == 0
                            ? fmt::format("{} MiB", max_bytes >> 20)
                            : fmt::format("{} bytes", max_bytes);
    return InvalidArgumentError(fmt::format("{} {}: larger than {}, the most such a file may hold", what, path, limit));
  }
  return text;
}

}  // namespace torchx::internal
