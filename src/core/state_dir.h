// Where the launcher keeps what must outlive a call (the local scheduler's store, pipelines).
#pragma once

#include <string>
#include <string_view>

#include "torchx/status.h"

namespace torchx::internal {

/// $TORCHX_STATE_DIR (made absolute), else $XDG_STATE_HOME/torchx, else $HOME/.local/state/torchx.
std::string DefaultStateDir();

/// `dir` made absolute and normalized (unchanged when the working directory cannot be read).
std::string AbsoluteStateDir(const std::string& dir);

/// Creates `dir` (0700, whatever the umask) and its missing parents, then checks that nobody
/// else can change what is in it: kFailedPrecondition naming `what` and the fix when another
/// user owns it or it is world-writable; a group-writable one of ours (umask 002 made it) is
/// narrowed to g-w. What lives there (app records, the commands a pipeline submits next, logs)
/// must not be writable by other users.
Status EnsurePrivateDir(const std::string& dir, std::string_view what);

/// Creates `dir` 0700 (missing parents with the default mode: a `log_dir` may be shared on
/// purpose); no ownership check. Returns false if `dir` is not a directory after.
bool CreatePrivateDirs(const std::string& dir);

}  // namespace torchx::internal
