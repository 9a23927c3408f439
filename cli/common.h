// Helpers shared by the verbs: config loading and scheduler-option parsing.
#pragma once

#include <string>
#include <string_view>

#include "torchx/config/torchx_config.h"
#include "torchx/runner/runner.h"

namespace torchx::cli {

/// `.torchxconfig` for the current directory (TorchX's lookup rules).
Result<config::TorchxConfig> LoadConfig();

/// Runner options from the edge: every `[component:<name>]` section of `config` as component
/// defaults; the tracker parent run ($TORCHX_PARENT_RUN_ID, else `parent_run_id`); the trackers
/// ($TORCHX_TRACKERS, else `[torchx:tracker]`'s keys) with their configs
/// ($TORCHX_TRACKER_<NAME>_CONFIG, else `[tracker:<name>] config`), as TorchX's runner reads them.
runner::RunnerOptions RunnerOptionsFrom(const config::TorchxConfig& config, const std::string& parent_run_id = "");

/// Runner options for the verbs that read apps (status, list, log...): each scheduler's
/// `.torchxconfig` section (slurm's status_interval). A config that does not load gives none: the
/// verbs that run apps report it.
runner::RunnerOptions ReaderRunnerOptions();

/// `-cfg` string, then `[<scheduler>]` from `config` for keys the string does not set, each value
/// cast to its option's type (the Runner resolves the whole, once, when it dry-runs). Unknown
/// keys are reported on stderr (TorchX warns and ignores them).
Result<specs::Cfg> ParseCfg(runner::Runner& runner, const std::string& scheduler, const std::string& cfg_str,
                            const config::TorchxConfig& config);

bool StdoutIsTerminal();

/// Whether to colour what goes to stdout: a terminal, and neither NO_COLOR (no-color.org) nor
/// TERM=dumb set.
bool UseColor();
/// `text` in the colour of `state` (RUNNING blue, SUCCEEDED green, FAILED red, CANCELLED dim,
/// waiting yellow), or unchanged when `color` is false.
std::string ColorState(std::string_view text, specs::AppState state, bool color);

/// A time a flag gives (`log --since`, `list --since`): epoch seconds, a time
/// (`2026-11-26T10:00:00`, local; `...Z` UTC), or a duration before `now` (`90s`, `10m`, `2h`,
/// `1d`). kInvalidArgument naming the verb and flag otherwise.
Result<double> ParseWhen(const std::string& verb, const std::string& flag, const std::string& text, double now);

/// Why a failed app failed, as the CLI prints it: for each tail, "<role>/<replica> failed; the
/// last N lines of its stderr:" and the lines indented. Empty for no tails.
std::string FormatFailureTails(const std::vector<runner::ReplicaLogTail>& tails);

/// TorchX's message for an app the scheduler does not know.
Status AppNotFound(const std::string& handle);

}  // namespace torchx::cli
