// `torchx status HANDLE [--roles a,b] [--json]`: the app's state, TorchX's text or JSON (with
// torchx-nightly's keys).
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/specs/app_handle.h"

namespace torchx::cli {
namespace {

// torchx-nightly's `status --json`: the AppStatus JSON plus the handle, its app id and scheduler,
// and ui_url (the same value as url, the canonical name); keys are only ever added.
std::string StatusJson(const std::string& handle, const specs::AppStatus& status,
                       const std::vector<std::string>& roles) {
  nlohmann::json out = nlohmann::json::parse(specs::AppStatusToJson(status, roles, -1));
  out["handle"] = handle;
  if (auto parsed = specs::ParseAppHandle(handle)) {
    out["app_id"] = parsed->app_id;
    out["scheduler"] = parsed->scheduler_backend;
  }
  out["ui_url"] = status.ui_url ? nlohmann::json(*status.ui_url) : nlohmann::json(nullptr);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

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
    std::string out =
        o->json ? StatusJson(o->handle, **status, o->roles) + "\n" : specs::FormatAppStatus(**status, o->roles) + "\n";
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
