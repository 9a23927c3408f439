// The flags of a managed run (`run --managed`, `sweep run --managed`): one set, read the same way
// by both verbs into the managed layer's policy (docs/managed.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "torchx/managed/managed.h"
#include "torchx/status.h"

namespace torchx::cli {

struct ManagedFlags {
  bool managed = false;
  std::optional<int> max_recoveries;
  std::vector<std::string> recover_on;  ///< each may be comma-separated
  std::vector<std::string> failover;    ///< SCHEDULER[:k=v,...]
  std::optional<std::string> start_timeout;
  std::string checkpoint_dir;
};

/// Adds --managed and its options to `cmd`; `what` names the verb's jobs in the help ("the app",
/// "each trial").
void AddManagedFlags(CLI::App& cmd, ManagedFlags& flags, std::string_view what);

/// The policy the flags give; nullopt without --managed. kInvalidArgument naming the flag (an
/// option given without --managed, a bad cause or duration, a bad target).
Result<std::optional<managed::ChildPolicy>> ChildPolicyFrom(const ManagedFlags& flags, std::string_view verb);

}  // namespace torchx::cli
