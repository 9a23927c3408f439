// Subcommands: each adds its options to the CLI11 app and returns the handler to run.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace torchx::cli {

using Handler = std::function<int()>;

Handler AddRunCommand(CLI::App& app);
Handler AddBuiltinsCommand(CLI::App& app);
Handler AddStatusCommand(CLI::App& app);
Handler AddDescribeCommand(CLI::App& app);
Handler AddLogCommand(CLI::App& app);
Handler AddCancelCommand(CLI::App& app);
Handler AddDeleteCommand(CLI::App& app);
Handler AddListCommand(CLI::App& app);
Handler AddRunoptsCommand(CLI::App& app);
Handler AddConfigureCommand(CLI::App& app);
Handler AddPluginsCommand(CLI::App& app);

}  // namespace torchx::cli
