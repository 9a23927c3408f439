// `torchx run [-s S] [-cfg k=v,...] [--dryrun] [--wait] [--log] <component> [args...]`.
// The component is a builtin name, a declarative component file or an AppDef spec file.
// Prints the app handle on stdout (scripts parse it) and returns at once unless --wait/--log.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "log_stream.h"
#include "torchx/plugins/registry.h"
#include "torchx/specs/serialize.h"
#include "wait_display.h"

namespace torchx::cli {
namespace {

struct RunOptions {
  std::string scheduler;
  std::string cfg;
  std::string workspace;
  std::string parent_run_id;
  bool dryrun = false;
  bool wait = false;
  bool log = false;
  bool tee_logs = false;
  std::vector<std::string> rest;  // component + its arguments
};

// `--help` among the component's options. Every component option takes a value, so options and
// values alternate until the first positional argument; from there on everything belongs to the
// component's *args (TorchX: `torchx run utils.sh printf '<%s>' --help` prints `<--help>`).
bool WantsHelp(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help") return true;
    if (a == "--" || a.empty() || a[0] != '-') return false;
    if (a.find('=') == std::string::npos) ++i;  // skip the option's value
  }
  return false;
}

int Run(RunOptions opts, plugins::PluginRegistry& registry) {
  auto config = LoadConfig();
  if (!config) return ReportError(config.error());
  if (opts.scheduler.empty())
    opts.scheduler = config->CliDefault("run", "scheduler").value_or(plugins::DefaultSchedulerName());
  // `[cli:run] component` supplies the component when the first argument is an option.
  if (opts.rest.empty() || opts.rest[0].rfind("-", 0) == 0) {
    auto def = config->CliDefault("run", "component");
    if (!def) {
      return ReportError(InvalidArgumentError(
          "run: missing component: give a builtin (see `torchx builtins`), a component file or a spec file"));
    }
    opts.rest.insert(opts.rest.begin(), *def);
  }
  std::vector<std::string> args(opts.rest.begin() + 1, opts.rest.end());
  runner::Runner runner(registry, RunnerOptionsFrom(*config, opts.parent_run_id));
  if (WantsHelp(args)) {
    auto help = runner.ComponentHelp(opts.rest[0]);
    if (!help) return ReportError(help.error());
    std::fputs(help->c_str(), stdout);
    return kExitOk;
  }

  // An alias TorchX deprecated still runs, with TorchX's warning (stderr: stdout is the handle).
  // Only registered components can be aliases, so a file component is not loaded twice for this.
  std::vector<std::string> registered = runner.ComponentNames();
  if (std::find(registered.begin(), registered.end(), opts.rest[0]) != registered.end()) {
    auto component = runner.Component(opts.rest[0]);
    if (component && !(*component)->spec().deprecation.empty()) {
      std::fprintf(stderr, "torchx: warning: %s\n", (*component)->spec().deprecation.c_str());
    }
  }
  auto cfg = ParseCfg(runner, opts.scheduler, opts.cfg, *config);
  if (!cfg) {
    return ReportError(cfg.error().WithContext(
        fmt::format("scheduler options (check -cfg, .torchxconfig [{}], and `torchx runopts {}`)", opts.scheduler,
                    opts.scheduler)));
  }
  auto info = runner.DryRunComponent(opts.rest[0], args, opts.scheduler, *cfg, opts.workspace);
  if (!info) return ReportError(info.error());
  if (opts.dryrun) {
    std::printf("=== APPLICATION ===\n%s\n\n=== SCHEDULER REQUEST ===\n%s", specs::AppDefToJson(info->app).c_str(),
                info->request.c_str());
    return kExitOk;
  }
  auto handle = runner.Schedule(*info);
  if (!handle) return ReportError(handle.error());
  std::printf("%s\n", handle->c_str());
  std::fflush(stdout);
  opts.log = opts.log || opts.tee_logs;
  if (!opts.wait && !opts.log) return kExitOk;

  if (opts.log) {
    auto replicas = AllReplicas(runner, *handle);
    if (!replicas) return ReportError(replicas.error());
    schedulers::LogOptions log_opts;
    log_opts.follow = true;
    if (Status s = StreamLogs(registry, *handle, *replicas, log_opts, false); !s.ok()) return ReportError(s);
  }
  auto status = opts.log ? runner.Wait(*handle) : WaitWithDisplay(runner, *handle);
  if (!status) return ReportError(status.error());
  if (!*status) return ReportError(AppNotFound(*handle));
  if (opts.log) {
    std::fprintf(stderr, "torchx: %s %s\n", handle->c_str(),
                 std::string(specs::AppStateName((*status)->state)).c_str());
  }
  if (!(*status)->msg.empty()) std::fprintf(stderr, "torchx: %s\n", (*status)->msg.c_str());
  return (*status)->state == specs::AppState::kSucceeded ? kExitOk : kExitFailure;
}

}  // namespace

Handler AddRunCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a component or an AppDef spec file");
  cmd->add_option("-s,--scheduler", opts->scheduler,
                  "Scheduler to run on (default: [cli:run] scheduler, else " + plugins::DefaultSchedulerName() + ")");
  cmd->add_option("--cfg,--scheduler_args", opts->cfg,
                  "Scheduler options: k1=v1,k2=v2 (TorchX spelling -cfg accepted)");
  cmd->add_flag("--dryrun", opts->dryrun, "Print what would be submitted and exit");
  cmd->add_option("--workspace", opts->workspace,
                  "A local directory to build into the app first, on a scheduler with workspaces (a container "
                  "back-end: an image with the directory copied in, from Dockerfile.torchx if present)");
  cmd->add_option(
      "--parent_run_id", opts->parent_run_id,
      "Tracker run this job belongs to: sets TORCHX_PARENT_RUN_ID in every role ($TORCHX_PARENT_RUN_ID wins)");
  cmd->add_flag("--wait", opts->wait, "Wait for the app to finish; exit 0 only if it succeeded");
  cmd->add_flag("--log", opts->log, "Stream the app's logs until it finishes (implies --wait)");
  cmd->add_flag("--tee_logs", opts->tee_logs, "TorchX's flag: stream logs prefixed with the replica (same as --log)");
  cmd->prefix_command();  // the component and everything after it are the component's arguments
  return [opts, cmd, &registry] {
    opts->rest = cmd->remaining();
    return Run(*opts, registry);
  };
}

}  // namespace torchx::cli
