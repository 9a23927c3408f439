// Subcommands: each adds its options to the CLI11 app and returns the handler to run.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace torchx::cli {

using Handler = std::function<int()>;

Handler AddRunCommand(CLI::App& app);
Handler AddBuiltinsCommand(CLI::App& app);

}  // namespace torchx::cli
