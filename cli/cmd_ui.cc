// `torchx ui ...`: runs torchx-ui (cli/ui_main.cc) with the same arguments, in this process's
// place. The dashboard's server lives in its own program so that other verbs never load it.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "core/helper_exe.h"
#include "exit_codes.h"

namespace torchx::cli {

Handler AddUiCommand(CLI::App& app, plugins::PluginRegistry&) {
  CLI::App* cmd = app.add_subcommand("ui", "Serve the web dashboard and REST API over every scheduler (see --help)");
  // Every argument, --help included, is torchx-ui's to parse.
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->allow_extras();
  return [cmd] {
#ifdef TORCHX_UI_BUILD_PATH
    const char* build_path = TORCHX_UI_BUILD_PATH;
#else
    const char* build_path = nullptr;
#endif
    auto exe = internal::FindHelperExecutable("torchx-ui", "TORCHX_UI", build_path);
    if (!exe) return ReportError(exe.error());
    std::vector<std::string> args = {*exe};
    for (const std::string& a : cmd->remaining()) args.push_back(a);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    ::execv(exe->c_str(), argv.data());
    std::fprintf(stderr, "torchx: error: cannot run %s: %s\n", exe->c_str(), std::strerror(errno));
    return kExitFailure;
  };
}

}  // namespace torchx::cli
