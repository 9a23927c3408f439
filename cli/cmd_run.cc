// `torchx run [-s S] [-cfg k=v,...] [--dryrun] [--wait] [--log] [--json] <component> [args...]`.
// The component is a builtin name, a declarative component file or an AppDef spec file.
// Prints the app handle on stdout (scripts parse it) and returns at once unless --wait/--log;
// --json prints one JSON object instead (TorchX's `run --json`), everything else on stderr.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "core/spelling.h"
#include "core/strings.h"
#include "exit_codes.h"
#include "interrupt_watch.h"
#include "log_stream.h"
#include "managed_flags.h"
#include "torchx/composite_kinds.h"
#include "torchx/managed/managed.h"
#include "torchx/plugins/registry.h"
#include "torchx/specs/app_handle.h"
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
  bool json = false;
  // --managed: recovered after infrastructure failures by a detached driver (docs/managed.md).
  ManagedFlags managed;
  std::vector<std::string> rest;  // component + its arguments
};

// The managed run's request, for the one launch entry: the app as the dry run built it, on
// -s/-cfg, with the keys of a `managed:` block from the flags.
composite::LaunchRequest ManagedRequest(const RunOptions& opts, const specs::AppDef& app,
                                        const managed::ChildPolicy& policy) {
  nlohmann::json doc = nlohmann::json::parse(managed::ChildPolicyToJson(policy));
  doc["app"] = nlohmann::json::parse(specs::AppDefToJson(app, -1));
  return {std::string(managed::kSchedulerName), doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
          "run --managed", opts.scheduler, opts.cfg};
}

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

// `torchx run --json`'s object after a submission (TorchX's keys, which only ever grow): state and
// ui_url are null when the scheduler reported no status.
std::string RunResultJson(const std::string& handle, const std::optional<specs::AppStatus>& status) {
  nlohmann::json out = {
      {"handle", handle}, {"app_id", nullptr}, {"scheduler", nullptr}, {"state", nullptr}, {"ui_url", nullptr}};
  if (auto parsed = specs::ParseAppHandle(handle)) {
    out["app_id"] = parsed->app_id;
    out["scheduler"] = parsed->scheduler_backend;
  }
  if (status) {
    out["state"] = std::string(specs::AppStateName(status->state));
    if (status->ui_url) out["ui_url"] = *status->ui_url;
  }
  return out.dump();
}

// `torchx run --dryrun --json`'s object: the resolved options, the app as it would be submitted (with
// TorchX's Python-only role fields, which the CLI never sets) and the back-end's request, as an
// object where the back-end's is structured, else its printable text.
std::string RunDryRunJson(const schedulers::DryRunInfo& info) {
  nlohmann::json app = nlohmann::json::parse(specs::AppDefToJson(info.app, -1));
  for (nlohmann::json& role : app["roles"]) {
    role.emplace("workspace", nullptr);
    role.emplace("overrides", nlohmann::json::object());
  }
  nlohmann::json request = nlohmann::json::parse(info.payload, nullptr, false);
  if (!request.is_object()) request = info.request;
  nlohmann::json out = {{"scheduler", info.scheduler},
                        {"cfg", nlohmann::json::parse(specs::CfgToJson(info.cfg))},
                        {"app", std::move(app)},
                        {"request", std::move(request)}};
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int Run(RunOptions opts, plugins::PluginRegistry& registry) {
  auto config = LoadConfig();
  if (!config) return ReportError(config.error());
  if (opts.scheduler.empty()) {  // .torchxconfig's, else the registry's (which may ask for plugins)
    auto configured = config->CliDefault("run", "scheduler");
    opts.scheduler = configured ? *configured : registry.DefaultScheduler();
  }
  // `torchx run [options] -- [COMPONENT] ARGS` (TorchX's form): what follows `--` is the component
  // and its arguments, or only arguments (the first is an option) for `[cli:run] component`.
  bool separated = !opts.rest.empty() && opts.rest[0] == kRunArgsSeparator;
  if (separated) opts.rest.erase(opts.rest.begin());
  // `[cli:run] component` supplies the component when the first argument is an option.
  if (opts.rest.empty() || opts.rest[0].rfind("-", 0) == 0) {
    auto def = config->CliDefault("run", "component");
    if (!def && separated) {
      return ReportError(InvalidArgumentError(
          "run: missing component: name it (`torchx run [options] COMPONENT ARGS`) or set `component` under "
          "[cli:run] in .torchxconfig, whose component takes the arguments after `--`"));
    }
    if (!def && !opts.rest.empty()) {  // an option `run` does not have, before the component
      std::string name = opts.rest[0].substr(0, opts.rest[0].find('='));
      return ReportError(InvalidArgumentError(fmt::format(
          "run: unknown option `{}` (run's options come before the component; see `torchx run --help`).{}", name,
          internal::DidYouMeanSuffix(name, {"--scheduler", "--cfg", "--scheduler_args", "--dryrun", "--workspace",
                                            "--wait", "--log", "--tee_logs", "--json", "--parent_run_id"}))));
    }
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
  // An unknown scheduler is said as such (not as a problem with its options), with the ones an
  // app can be submitted to: composite schedulers (pipelines) take no AppDef.
  if (auto known = runner.SchedulerRunOpts(opts.scheduler); !known && known.error().code() == StatusCode::kNotFound) {
    std::vector<std::string> submittable;
    for (const std::string& name : runner.SchedulerBackends()) {
      auto caps = runner.SchedulerCapabilities(name);
      if (caps && !caps->Has(schedulers::Capability::kComposite)) submittable.push_back(name);
    }
    std::string listed;
    for (const std::string& name : submittable) listed += (listed.empty() ? "" : ", ") + name;
    return ReportError(
        InvalidArgumentError(fmt::format("run: unknown scheduler `{}`.{} Schedulers: {}.", opts.scheduler,
                                         internal::DidYouMeanSuffix(opts.scheduler, submittable), listed)));
  }
  auto cfg = ParseCfg(runner, opts.scheduler, opts.cfg, *config);
  if (!cfg) {
    return ReportError(cfg.error().WithContext(
        fmt::format("scheduler options (check -cfg, .torchxconfig [{}], and `torchx runopts {}`)", opts.scheduler,
                    opts.scheduler)));
  }
  auto policy = ChildPolicyFrom(opts.managed, "run");
  if (!policy) return ReportError(policy.error());
  if (*policy && opts.dryrun && opts.json) {
    return ReportError(InvalidArgumentError(
        "run: --managed --dryrun prints each target's request as text; --json is not offered with it (drop --json, or "
        "--managed to see one target's request as JSON)"));
  }
  if (*policy && !opts.workspace.empty()) {
    return ReportError(InvalidArgumentError(
        "run: --workspace: a managed run cannot take a workspace yet (each target would need its own build); build "
        "the image first, or run without --managed"));
  }
  auto info = runner.DryRunComponent(opts.rest[0], args, opts.scheduler, *cfg, opts.workspace);
  if (!info) return ReportError(info.error());
  std::optional<composite::PlannedComposite> managed_plan;
  if (*policy) {
    auto plan = PlanComposite(runner, *config, ManagedRequest(opts, info->app, **policy));
    if (!plan) return ReportError(plan.error());
    managed_plan = std::move(*plan);
  }
  if (opts.dryrun && managed_plan) {
    std::fputs(managed_plan->text.c_str(), stdout);
    return kExitOk;
  }
  if (opts.dryrun) {
    if (opts.json) {
      std::printf("%s\n", RunDryRunJson(*info).c_str());
    } else {
      std::printf("=== APPLICATION ===\n%s\n\n=== SCHEDULER REQUEST ===\n%s", specs::AppDefToJson(info->app).c_str(),
                  info->request.c_str());
    }
    return kExitOk;
  }
  // Waiting: Ctrl-C or SIGTERM from the launch on cancels an app on this host with the launcher.
  opts.log = opts.log || opts.tee_logs;
  std::optional<InterruptWatch> interrupt;
  if (opts.wait || opts.log) {
    std::vector<std::string> where = {opts.scheduler};
    if (managed_plan) {
      for (const std::string& target : managed_plan->child_schedulers) where.push_back(target);
    }
    interrupt.emplace(runner, InterruptCancels(runner, where));
  }
  auto handle = managed_plan ? managed_plan->launch(runner) : runner.Schedule(*info);
  if (!handle) return ReportError(handle.error());
  if (!opts.json) {  // with --json, stdout carries the one JSON object, printed at the end
    std::printf("%s\n", handle->c_str());
    std::fflush(stdout);
  }
  if (!opts.wait && !opts.log) {
    if (opts.json) {
      auto now = runner.Status(*handle);  // where the app stands just after submission
      std::printf("%s\n", RunResultJson(*handle, now ? *now : std::nullopt).c_str());
    }
    return kExitOk;
  }

  interrupt->Arm(*handle);
  if (opts.log) {
    auto replicas = AllReplicas(runner, *handle);
    if (!replicas) return ReportError(replicas.error());
    schedulers::LogOptions log_opts;
    log_opts.follow = true;
    // --json leaves stdout to the JSON object: the logs are narration, as TorchX prints them.
    if (Status s = StreamLogs(registry, *handle, *replicas, log_opts, false, opts.json ? stderr : stdout); !s.ok()) {
      return ReportError(s);
    }
  }
  auto status = opts.log ? runner.Wait(*handle) : WaitWithDisplay(runner, *handle);
  interrupt->SettleIfInterrupted();
  if (!status) return ReportError(status.error());
  if (!*status) return ReportError(AppNotFound(*handle));
  if (opts.json) std::printf("%s\n", RunResultJson(*handle, *status).c_str());
  if (opts.log) {
    std::fprintf(stderr, "torchx: %s %s\n", handle->c_str(),
                 std::string(specs::AppStateName((*status)->state)).c_str());
  }
  if (!(*status)->msg.empty()) std::fprintf(stderr, "torchx: %s\n", (*status)->msg.c_str());
  // Why it failed: the failed replicas' last stderr lines (not with --log, which streamed them),
  // on stderr so that --json keeps stdout to its one object.
  if ((*status)->state == specs::AppState::kFailed && !opts.log) {
    if (auto tails = runner.FailureTails(*handle); tails && *tails) {
      std::fputs(FormatFailureTails(**tails).c_str(), stderr);
    }
  }
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
  cmd->add_flag("--json", opts->json,
                "Print one JSON object on stdout (TorchX's keys): on submit handle, app_id, scheduler, state and "
                "ui_url; with --dryrun scheduler, cfg, app and request. Everything else goes to stderr");
  AddManagedFlags(*cmd, opts->managed, "the app");
  cmd->prefix_command();  // the component and everything after it are the component's arguments
  return [opts, cmd, &registry] {
    opts->rest = cmd->remaining();
    return Run(*opts, registry);
  };
}

}  // namespace torchx::cli
