// `torchx run [-s S] [-cfg k=v,...] [--dryrun] <component> [component args...]`.
// The component is a builtin name, a declarative component file or an AppDef spec file.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "exit_codes.h"
#include "torchx/components/component.h"
#include "torchx/components/finder.h"
#include "torchx/config/torchx_config.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/macros.h"
#include "torchx/specs/serialize.h"

namespace torchx::cli {
namespace {

struct RunOptions {
  std::string scheduler;
  std::string cfg;
  bool dryrun = false;
  bool wait = false;
  bool log = false;
  std::vector<std::string> rest;  // component + its arguments
};

// What each replica would run: the role with macros applied, as a local scheduler sees it.
std::string RenderReplicas(const specs::AppDef& app, const std::string& app_id) {
  std::string out;
  for (const specs::Role& role : app.roles) {
    for (int i = 0; i < role.num_replicas; ++i) {
      specs::macros::Values values{"", app_id, std::to_string(i), "TORCHX_RANK0_HOST"};
      specs::Role r = values.Apply(role);
      out += fmt::format("{}/{}:\n  entrypoint: {}\n  args: [", r.name, i, r.entrypoint);
      for (size_t a = 0; a < r.args.size(); ++a) out += (a ? ", " : "") + fmt::format("{:?}", r.args[a]);
      out += "]\n  env:\n";
      for (const auto& [k, v] : r.env) out += fmt::format("    {}={}\n", k, v);
    }
  }
  return out;
}

int Run(RunOptions opts) {
  auto config = config::TorchxConfig::Load(std::filesystem::current_path().string());
  if (!config) return ReportError(config.error());
  if (opts.scheduler.empty()) {
    opts.scheduler = config->CliDefault("run", "scheduler").value_or("local_cwd");
  }
  // `[cli:run] component` supplies the component when the first argument is an option.
  if (opts.rest.empty() || opts.rest[0].rfind("-", 0) == 0) {
    auto def = config->CliDefault("run", "component");
    if (!def) {
      return ReportError(InvalidArgumentError(
          "run: missing component: give a builtin (see `torchx builtins`), a component file or a spec file"));
    }
    opts.rest.insert(opts.rest.begin(), *def);
  }
  components::ComponentRegistry registry;
  components::RegisterBuiltinComponents(registry);
  auto resolved = components::ResolveComponent(registry, opts.rest[0]);
  if (!resolved) return ReportError(resolved.error());
  const components::Component& component = *resolved->component;

  std::vector<std::string> argv(opts.rest.begin() + 1, opts.rest.end());
  auto args = components::ParseComponentArgs(component.spec(), argv,
                                             config->ComponentDefaults(component.spec().name));
  if (!args) return ReportError(args.error());
  if (args->help_requested) {
    std::fputs(components::ComponentHelp(component.spec()).c_str(), stdout);
    return kExitOk;
  }
  auto app = components::BuildAppDef(component, *args);
  if (!app) return ReportError(app.error());
  if (!opts.dryrun) {
    return ReportError(UnimplementedError(fmt::format(
        "scheduler `{}` is not available in this build yet; use --dryrun", opts.scheduler)));
  }
  std::string app_id = specs::MakeUnique(app->name);
  std::printf("=== APPLICATION ===\n%s\n\n=== SCHEDULER REQUEST ===\n%s", specs::AppDefToJson(*app).c_str(),
              RenderReplicas(*app, app_id).c_str());
  return kExitOk;
}

}  // namespace

Handler AddRunCommand(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a component or an AppDef spec file");
  cmd->add_option("-s,--scheduler", opts->scheduler, "Scheduler to run on (default: [cli:run] scheduler, else local_cwd)");
  cmd->add_option("--cfg,--scheduler_args", opts->cfg, "Scheduler options: k1=v1,k2=v2 (TorchX spelling -cfg accepted)");
  cmd->add_flag("--dryrun", opts->dryrun, "Print what would be submitted and exit");
  cmd->add_flag("--wait", opts->wait, "Wait for the app to finish");
  cmd->add_flag("--log", opts->log, "Stream the app's logs (implies --wait)");
  cmd->prefix_command();  // the component and everything after it are the component's arguments
  return [opts, cmd] {
    opts->rest = cmd->remaining();
    return Run(*opts);
  };
}

}  // namespace torchx::cli
