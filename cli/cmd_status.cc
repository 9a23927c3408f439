// `torchx status HANDLE [--roles a,b] [--json]`: the app's state, TorchX's text or JSON.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"

namespace torchx::cli {

Handler AddStatusCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string handle;
    std::vector<std::string> roles;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("status", "Show an app's status");
  cmd->add_option("app_handle", o->handle, "scheduler://session/app_id")->required();
  cmd->add_option("--roles", o->roles, "Only these roles (comma-separated)")->delimiter(',');
  cmd->add_flag("--json", o->json, "Print JSON");
  return [o, &registry] {
    runner::Runner runner(registry);
    auto status = runner.Status(o->handle);
    if (!status) return ReportError(status.error());
    if (!*status) {
      ReportError(AppNotFound(o->handle));
      return kExitFailure;
    }
    std::string out = o->json ? specs::AppStatusToJson(**status, o->roles, 2) + "\n"
                              : specs::FormatAppStatus(**status, o->roles) + "\n";
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
