// The one table from Status to process exit code (documented in docs/cli.md).
#pragma once

#include "torchx/status.h"

namespace torchx::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  ///< app did not succeed, or a runtime error
inline constexpr int kExitUsage = 2;    ///< bad command line or bad input (names the field)

int ExitCodeFor(const Status& s);
/// Prints "torchx: error: <message>" to stderr and returns ExitCodeFor(s).
int ReportError(const Status& s);

}  // namespace torchx::cli
