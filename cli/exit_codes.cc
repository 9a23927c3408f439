#include "exit_codes.h"

#include <cstdio>

namespace torchx::cli {

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

int ReportError(const Status& s) {
  std::fprintf(stderr, "torchx: error: %s\n", s.message().c_str());
  return ExitCodeFor(s);
}

}  // namespace torchx::cli
