#include "managed_flags.h"

#include <fmt/format.h>

namespace torchx::cli {

void AddManagedFlags(CLI::App& cmd, ManagedFlags& flags, std::string_view what) {
  cmd.add_flag("--managed", flags.managed,
               fmt::format("Keep {} running through infrastructure failures: a detached driver submits it again after "
                           "a node failure, preemption, eviction or lost engine (handle managed://...; "
                           "docs/managed.md)",
                           what));
  cmd.add_option("--max_recoveries", flags.max_recoveries,
                 "(--managed) new submissions per target after recoverable failures (default 3)");
  cmd.add_option("--recover_on", flags.recover_on,
                 "(--managed) also recover these causes: user_error, time_limit, out_of_memory, unknown (repeat or "
                 "comma-separate)")
      ->allow_extra_args(false);  // one value per occurrence: what follows is not its
  cmd.add_option("--failover", flags.failover,
                 "(--managed) the next place to run, SCHEDULER[:k=v,...], tried when the one before refuses the job, "
                 "leaves it waiting past --start_timeout, or fails it --max_recoveries times (repeatable)")
      ->allow_extra_args(false);
  cmd.add_option("--start_timeout", flags.start_timeout,
                 "(--managed) how long an attempt may wait to start before the next target: 90, 90s, 15m, 2h");
  cmd.add_option("--checkpoint_dir", flags.checkpoint_dir,
                 "(--managed) TORCHX_CHECKPOINT_DIR of every attempt (default: .torchx/checkpoints/<id> here; a "
                 "sweep's trial gets <dir>/<trial index>)");
}

Result<std::optional<managed::ChildPolicy>> ChildPolicyFrom(const ManagedFlags& flags, std::string_view verb) {
  if (!flags.managed) {
    if (flags.max_recoveries || !flags.recover_on.empty() || !flags.failover.empty() || flags.start_timeout ||
        !flags.checkpoint_dir.empty()) {
      return InvalidArgumentError(fmt::format(
          "{}: --max_recoveries, --recover_on, --failover, --start_timeout and --checkpoint_dir need --managed", verb));
    }
    return std::optional<managed::ChildPolicy>();
  }
  managed::ChildPolicy out;
  TORCHX_ASSIGN_OR_RETURN(out.policy,
                          managed::PolicyWith(flags.max_recoveries.value_or(3), flags.recover_on, flags.start_timeout));
  for (const std::string& f : flags.failover) {
    TORCHX_ASSIGN_OR_RETURN(managed::Target t, managed::ParseTarget(f));
    out.failover.push_back(std::move(t));
  }
  out.checkpoint_dir = flags.checkpoint_dir;
  return std::optional(std::move(out));
}

}  // namespace torchx::cli
