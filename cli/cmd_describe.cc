// `torchx describe HANDLE [--json]`: the AppDef the app was submitted with.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/specs/serialize.h"

namespace torchx::cli {

Handler AddDescribeCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string handle;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("describe", "Show the AppDef an app was submitted with");
  cmd->add_option("app_handle", o->handle, "scheduler://session/app_id")->required();
  cmd->add_flag("--json", o->json, "Print JSON (the default output is YAML)");
  return [o, &registry] {
    runner::Runner runner(registry);
    auto described = runner.Describe(o->handle);
    if (!described) return ReportError(described.error());
    if (!*described) {
      ReportError(AppNotFound(o->handle));
      return kExitFailure;
    }
    std::string out = o->json ? specs::AppDefToJson(**described) + "\n" : specs::AppDefToYaml(**described);
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
