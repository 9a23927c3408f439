// torchx: PyTorch's universal job launcher. This file only wires subcommands and exit codes.
#include <cstdio>
#include <exception>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "exit_codes.h"

int main(int argc, char** argv) {
  using namespace torchx::cli;
  CLI::App app("torchx: launch PyTorch jobs locally and on clusters", "torchx");
  app.require_subcommand(0, 1);
  bool show_version = false;
  app.add_flag("--version", show_version, "Print the version and exit");

  std::map<std::string, Handler> handlers;
  handlers["run"] = AddRunCommand(app);
  app.add_subcommand("version", "Print the version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  try {
    if (show_version || app.got_subcommand("version")) {
      std::printf("torchx-%s\n", TORCHX_VERSION);
      return kExitOk;
    }
    for (const auto& [name, handler] : handlers) {
      if (app.got_subcommand(name)) return handler();
    }
    std::fputs(app.help().c_str(), stdout);
    return kExitFailure;  // TorchX: no subcommand prints help and exits 1
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torchx: internal error: %s\n", e.what());
    return kExitFailure;
  }
}
