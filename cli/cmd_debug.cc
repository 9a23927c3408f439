// `torchx debug stack HANDLE [--role R] [--replica N] [--json]`: what every process of a live
// app's replicas (a torchrun agent and each worker rank) is doing now, read with py-spy, those
// stuck in the same place grouped ("3 processes in all_reduce", "1 process in stuck_here"): the
// answer to "is it hung, and which rank?" without logging into a node. `torchx debug profile
// HANDLE --duration S [-o FILE]`: one replica's CPU profile as speedscope JSON. A scheduler
// answers both through Capability::kStacks.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/schedulers/stacks.h"
#include "torchx/specs/app_handle.h"

namespace torchx::cli {

Handler AddDebugCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string handle;
    std::string role;
    int replica = -1;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("debug", "Look inside a live app: its processes' stacks");
  cmd->require_subcommand(1);
  CLI::App* stack = cmd->add_subcommand(
      "stack", "Print the Python stacks of every process of a live app's replicas, those alike grouped (py-spy)");
  stack->add_option("app_handle", o->handle, "scheduler://session/app_id")->required();
  stack->add_option("--role", o->role, "Only this role's replicas");
  stack->add_option("--replica", o->replica, "Only this replica (with --role)")->check(CLI::NonNegativeNumber);
  stack->add_flag("--json", o->json, "Print the groups and each process's stacks as JSON");
  auto prof = std::make_shared<schedulers::ProfileOptions>();
  auto prof_handle = std::make_shared<std::string>();
  auto prof_replica = std::make_shared<int>(-1);
  CLI::App* profile = cmd->add_subcommand(
      "profile", "Sample one replica's processes for a while and write a CPU profile (speedscope JSON, py-spy)");
  profile->add_option("app_handle", *prof_handle, "scheduler://session/app_id")->required();
  profile->add_option("--duration", prof->seconds, "Seconds to sample")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  profile->add_option("--role", prof->role, "The replica's role");
  profile->add_option("--replica", *prof_replica, "The replica (with --role)")->check(CLI::NonNegativeNumber);
  profile->add_option("-o,--output", prof->output,
                      "Where to write it (default: <app_id>.<role>.<replica>.speedscope.json here; "
                      "open it at https://www.speedscope.app)");
  return [o, &registry, profile, prof, prof_handle, prof_replica] {
    if (profile->parsed()) {
      if (*prof_replica >= 0 && prof->role.empty()) {
        return ReportError(InvalidArgumentError("debug profile: --replica needs --role (replica ids are per role)"));
      }
      if (*prof_replica >= 0) prof->replica_id = *prof_replica;
      if (prof->output.empty()) {
        auto parsed = specs::ParseAppHandle(*prof_handle);
        std::string id = parsed ? parsed->app_id : "app";
        prof->output = id + (prof->role.empty() ? "" : "." + prof->role) +
                       (prof->replica_id ? "." + std::to_string(*prof->replica_id) : "") + ".speedscope.json";
      }
      runner::Runner runner(registry, ReaderRunnerOptions());
      std::fprintf(stderr, "torchx: sampling for %.0f s...\n", prof->seconds);
      if (Status s = runner.Profile(*prof_handle, *prof); !s.ok()) return ReportError(s);
      std::printf("%s\n", prof->output.c_str());
      return kExitOk;
    }
    if (o->replica >= 0 && o->role.empty()) {
      return ReportError(InvalidArgumentError("debug stack: --replica needs --role (replica ids are per role)"));
    }
    runner::Runner runner(registry, ReaderRunnerOptions());
    schedulers::StackOptions options{o->role, o->replica >= 0 ? std::optional<int>(o->replica) : std::nullopt};
    auto stacks = runner.DumpStacks(o->handle, options);
    if (!stacks) return ReportError(stacks.error());
    if (!*stacks) {
      ReportError(AppNotFound(o->handle));
      return kExitFailure;
    }
    if (o->json) {
      std::fputs((schedulers::StacksToJson(**stacks) + "\n").c_str(), stdout);
      return kExitOk;
    }
    if ((*stacks)->empty()) {
      std::fputs("no process is running (the replicas have not started, or have all ended)\n", stdout);
      return kExitOk;
    }
    std::fputs(schedulers::FormatStackGroups(**stacks).c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
