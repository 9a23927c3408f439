// `torchx describe HANDLE [--json] [--native]`: the AppDef the app was submitted with, or (--native)
// the request as the engine now holds it (TorchX's describe_native): its text, or with --json the
// back-end's structured form.
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
    bool native = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("describe", "Show the AppDef an app was submitted with");
  cmd->add_option("app_handle", o->handle, "scheduler://session/app_id")->required();
  cmd->add_flag("--json", o->json, "Print JSON (the default output is YAML)");
  cmd->add_flag("--native", o->native,
                "Print the request as the engine now holds it (the supervisor's plan, the Slurm job and its batch "
                "script, the Volcano Job, the containers' create bodies)");
  return [o, &registry] {
    runner::Runner runner(registry);
    if (o->native) {
      auto native = runner.DescribeNative(o->handle);
      if (!native) return ReportError(native.error());
      if (!*native) {
        ReportError(AppNotFound(o->handle));
        return kExitFailure;
      }
      std::string out = o->json ? (*native)->payload : (*native)->request;
      if (out.empty() || out.back() != '\n') out += '\n';
      std::fputs(out.c_str(), stdout);
      return kExitOk;
    }
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
