// `torchx sweep run [-s S] [-cfg ...] [--max_parallel N] [--max_failures K] [--dryrun] [--wait]
//                   [--managed [--max_recoveries N] [--failover S:k=v] ...]
//                   (FILE | -p name=values... [--trials N --seed S] [--objective METRIC] COMPONENT ARGS...)`
// runs a sweep (docs/sweeps.md) and prints its handle, `sweep://<session>/<id>`, which status /
// wait / log / cancel / list / describe / delete take like any app's; `torchx sweep status H`
// prints its trials with their values and metrics, `torchx sweep best H` the best one.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "composite_launch.h"
#include "exit_codes.h"
#include "managed_flags.h"
#include "torchx/plugins/registry.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::cli {
namespace {

struct SweepOptions {
  std::string scheduler;
  std::string cfg;
  std::string name;
  int max_parallel = -1;
  int max_failures = -1;
  std::vector<std::string> params;
  int trials = 0;
  std::int64_t seed = 0;
  std::string objective;
  std::string direction = "minimize";
  bool seed_given = false;
  bool direction_given = false;
  bool dryrun = false;
  bool wait = false;
  ManagedFlags managed;           ///< every trial a managed job (overrides the file's `managed:`)
  std::vector<std::string> rest;  ///< FILE, or COMPONENT ARGS...
  std::string handle;
  bool json = false;
};

bool IsSweepFile(const std::string& arg) {
  std::error_code ec;
  std::string ext = std::filesystem::path(arg).extension().string();
  return (ext == ".yaml" || ext == ".yml" || ext == ".json") && std::filesystem::is_regular_file(arg, ec);
}

// The inline form: `-p` parameters (a random search when one is a distribution) and the
// component with its arguments.
Result<sweeps::SweepSpec> InlineSpec(const SweepOptions& o) {
  sweeps::SweepSpec spec;
  if (o.params.empty()) {
    return InvalidArgumentError("sweep run: give a sweep file, or `-p name=values` with a component and its arguments");
  }
  spec.component = o.rest.front();
  spec.args.assign(o.rest.begin() + 1, o.rest.end());
  bool random = false;
  for (const std::string& p : o.params) {
    TORCHX_ASSIGN_OR_RETURN(sweeps::ParamSpec param, sweeps::ParseInlineParam(p));
    random = random || param.kind != sweeps::ParamSpec::Kind::kValues;
    spec.space.params.push_back(std::move(param));
  }
  if (!random && o.trials == 0 && o.seed_given) {
    return InvalidArgumentError("--seed: only a random search (--trials N, or a -p distribution) takes a seed");
  }
  if (o.objective.empty() && o.direction_given) return InvalidArgumentError("--direction: give --objective too");
  if (random || o.trials > 0) {
    spec.space.type = sweeps::SpaceType::kRandom;
    if (o.trials <= 0) return InvalidArgumentError("--trials: required for a random search (how many to draw)");
    if (o.seed < 0) return InvalidArgumentError("--seed: must be a non-negative integer");
    spec.space.trials = o.trials;
    spec.space.seed = static_cast<std::uint64_t>(o.seed);
  }
  if (!o.objective.empty()) {
    if (o.direction != "minimize" && o.direction != "maximize") {
      return InvalidArgumentError(
          fmt::format("--direction: invalid value `{}`, must be one of [minimize, maximize]", o.direction));
    }
    spec.objective = sweeps::Objective{o.objective, o.direction == "minimize", false};
  }
  return spec;
}

int RunSweep(const SweepOptions& o, plugins::PluginRegistry& registry) {
  auto config = LoadConfig();
  if (!config) return ReportError(config.error());
  if (o.rest.empty()) return ReportError(InvalidArgumentError("sweep run: give a sweep file or a component"));
  composite::LaunchRequest request{std::string(sweeps::kSchedulerName), "", "sweep", o.scheduler, o.cfg};
  if (o.params.empty() && (IsSweepFile(o.rest.front()) || o.rest.size() == 1)) {
    if (o.rest.size() > 1) {
      return ReportError(InvalidArgumentError(fmt::format(
          "sweep run: `{}` after the sweep file: options go before it (torchx sweep run [options] FILE)", o.rest[1])));
    }
    auto text = ReadDocument(o.rest.front(), "sweep file");  // names the file that cannot be read
    if (!text) return ReportError(text.error());
    request.document = std::move(*text);
    request.origin = o.rest.front();
  } else {
    auto spec = InlineSpec(o);
    if (!spec) return ReportError(spec.error());
    auto document = sweeps::SweepDocument(*spec);
    if (!document) return ReportError(document.error());
    request.document = std::move(*document);
  }
  if (request.scheduler.empty()) request.scheduler = config->CliDefault("run", "scheduler").value_or("");
  nlohmann::json overrides = nlohmann::json::object();
  if (!o.name.empty()) overrides["name"] = o.name;
  if (o.max_parallel >= 0) overrides["max_parallel"] = o.max_parallel;
  if (o.max_failures >= 0) overrides["max_failures"] = o.max_failures;
  auto policy = ChildPolicyFrom(o.managed, "sweep run");
  if (!policy) return ReportError(policy.error());
  if (*policy) overrides["managed"] = nlohmann::json::parse(managed::ChildPolicyToJson(**policy));
  request.overrides_json = overrides.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return LaunchCompositeVerb(registry, *config, request, o.dryrun, o.wait);
}

// A failed trial's last stderr lines in `--json` (the table's REASON is the last one).
constexpr size_t kReasonLines = 20;

int SweepStatus(const SweepOptions& o, plugins::PluginRegistry& registry, bool best_only) {
  runner::Runner runner(registry, ReaderRunnerOptions());
  auto view = sweeps::ViewSweep(runner, o.handle, kReasonLines);
  if (!view) return ReportError(view.error());
  if (best_only) {
    if (!view->best) {
      return ReportError(NotFoundError(
          view->objective ? fmt::format("{}: no trial has reported `{}` yet", o.handle, view->objective->metric)
                          : fmt::format("{}: the sweep has no objective (`objective:` in its file)", o.handle)));
    }
    auto& trials = view->trials;
    std::erase_if(trials, [&](const sweeps::TrialRow& t) { return t.index != *view->best; });
  }
  std::fputs((o.json ? sweeps::SweepViewToJson(*view) : sweeps::RenderSweepTable(*view)).c_str(), stdout);
  return kExitOk;
}

}  // namespace

Handler AddSweepCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* cmd = app.add_subcommand("sweep", "Run a sweep: many variants of one job as one unit");
  cmd->require_subcommand(1);
  CLI::App* run = cmd->add_subcommand("run", "Validate a sweep, then submit it (prints its handle)");
  run->add_option("-s,--scheduler", opts->scheduler,
                  "Scheduler of the trials (default: the file's, else [cli:run] scheduler, else " +
                      plugins::DefaultSchedulerName() + ")");
  run->add_option("--cfg,--scheduler_args", opts->cfg, "The trials' scheduler options: k1=v1,k2=v2");
  run->add_option("--name", opts->name, "The sweep's name (default: the file's `name`)");
  run->add_option("--max_parallel", opts->max_parallel, "At most this many trials at once (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--max_failures", opts->max_failures, "Stop submitting after this many failed trials (0: never)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("-p,--param", opts->params,
                  "Inline form: a swept parameter, name=v1,v2,... (grid) or name=uniform(a,b) | loguniform(a,b) | "
                  "randint(a,b) | choice(a,b,...) (random); repeat for each")
      ->allow_extra_args(false);
  run->add_option("--trials", opts->trials, "Inline random search: how many trials to draw")
      ->check(CLI::PositiveNumber);
  CLI::Option* seed = run->add_option("--seed", opts->seed, "Inline random search: the generator's seed (default 0)");
  run->add_option("--objective", opts->objective, "Inline form: the reported metric to optimise");
  CLI::Option* direction = run->add_option("--direction", opts->direction, "minimize (default) or maximize");
  run->add_flag("--dryrun", opts->dryrun, "Validate and print every trial's values and the first request");
  run->add_flag("--wait", opts->wait, "Wait for the sweep to end; exit 0 only if every trial succeeded");
  AddManagedFlags(*run, opts->managed, "each trial");
  run->prefix_command();  // FILE, or the component and everything after it (its arguments)
  CLI::App* status = cmd->add_subcommand("status", "Print a sweep's trials: values, state, duration, metrics");
  status->add_option("handle", opts->handle, "sweep://<session>/<id>")->required();
  status->add_flag("--json", opts->json, "As JSON");
  CLI::App* best = cmd->add_subcommand("best", "Print the sweep's best trial (by its objective)");
  best->add_option("handle", opts->handle, "sweep://<session>/<id>")->required();
  best->add_flag("--json", opts->json, "As JSON");
  return [opts, &registry, run, status, seed, direction] {
    if (run->parsed()) {
      opts->rest = run->remaining();
      opts->seed_given = seed->count() > 0;
      opts->direction_given = direction->count() > 0;
      return RunSweep(*opts, registry);
    }
    return SweepStatus(*opts, registry, !status->parsed());
  };
}

}  // namespace torchx::cli
