// Reading a log file as lines (a local_cwd replica's, a composite's driver's): what is written so
// far, or (following) everything until its writer is done, woken by inotify as it appends.
// NextBatch hands out every line already on disk as views into one buffer, so a 200 MB log
// streams without a string per line.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers {

/// `app_terminal` is asked (following only) when the file has nothing more: once it says true,
/// one last read drains what the app wrote before it ended. A file that does not exist yet is
/// empty (following waits for it to appear).
std::unique_ptr<LogIterator> MakeLogFileReader(std::string path, bool follow, std::function<bool()> app_terminal);

}  // namespace torchx::schedulers
