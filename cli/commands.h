// Subcommands: each adds its options to the CLI11 app and returns the handler to run. The
// registry is the one main built; handlers resolve every name through a Runner over it.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "torchx/plugins/registry.h"

namespace torchx::cli {

using Handler = std::function<int()>;

/// `torchx run [options] -- ARGS`: TorchX's `--` before the component hands ARGS to the component
/// `[cli:run] component=` names. CLI11 ends a subcommand at `--`, so main.cc passes it to `run` as
/// this token (CLI11 keeps it, and what follows, as run's remaining arguments).
inline constexpr char kRunArgsSeparator[] = "\x1f--";

Handler AddRunCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddBuiltinsCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddStatusCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddTopCommand(CLI::App& app, plugins::PluginRegistry& registry);
/// `debug stack HANDLE`: a live app's processes' Python stacks, grouped.
Handler AddDebugCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddHostsCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddDescribeCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddLogCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddCancelCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddDeleteCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddListCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddRunoptsCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddConfigureCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddPluginsCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddUiCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddPipelineCommand(CLI::App& app, plugins::PluginRegistry& registry);
Handler AddSweepCommand(CLI::App& app, plugins::PluginRegistry& registry);
/// `composite run KIND FILE` and `composite kinds`: any composite kind, named by the user only.
Handler AddCompositeCommand(CLI::App& app, plugins::PluginRegistry& registry);
/// `completion SHELL` and the hidden `__complete KIND` (one handler answers both).
Handler AddCompletionCommand(CLI::App& app, plugins::PluginRegistry& registry);

}  // namespace torchx::cli
