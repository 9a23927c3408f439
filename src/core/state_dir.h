// Where the launcher keeps what must outlive a call (the local scheduler's store, pipelines).
#pragma once

#include <string>

namespace torchx::internal {

/// $TORCHX_STATE_DIR (made absolute), else $XDG_STATE_HOME/torchx, else $HOME/.local/state/torchx.
std::string DefaultStateDir();

/// `dir` made absolute and normalized (unchanged when the working directory cannot be read).
std::string AbsoluteStateDir(const std::string& dir);

}  // namespace torchx::internal
