#include "torchx/specs/app_handle.h"

#include <fmt/format.h>

namespace torchx::specs {

std::string MakeAppHandle(std::string_view scheduler_backend, std::string_view session_name, std::string_view app_id) {
  return fmt::format("{}://{}/{}", scheduler_backend, session_name, app_id);
}

Result<ParsedAppHandle> ParseAppHandle(std::string_view handle) {
  // TorchX matches `(?P<scheduler>.+)://(?P<session>.*)/(?P<app_id>.+)` with greedy groups. The
  // equivalent without a regex engine: the scheduler ends at the LAST "://" after which a "/" with
  // a non-empty remainder exists; the session ends at the last such "/".
  if (handle.size() > kMaxAppHandleBytes) {
    return InvalidArgumentError(fmt::format("app handle: {} bytes (`{}...`), over the limit of {} bytes", handle.size(),
                                            handle.substr(0, 40), kMaxAppHandleBytes));
  }
  if (handle.find('\n') == std::string_view::npos) {
    for (size_t sep = handle.rfind("://"); sep != std::string_view::npos && sep > 0;
         sep = handle.rfind("://", sep - 1)) {
      std::string_view rest = handle.substr(sep + 3);
      size_t slash = rest.size() >= 2 ? rest.rfind('/', rest.size() - 2) : std::string_view::npos;
      if (slash != std::string_view::npos) {
        return ParsedAppHandle{std::string(handle.substr(0, sep)), std::string(rest.substr(0, slash)),
                               std::string(rest.substr(slash + 1))};
      }
    }
  }
  return InvalidArgumentError(
      fmt::format("app handle: {} is not of the form: <scheduler_backend>://<session_name>/<app_id>", handle));
}

}  // namespace torchx::specs
