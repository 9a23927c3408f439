// `torchx debug stack HANDLE [--role R] [--replica N] [--json]`: what every process of a live
// app's replicas (a torchrun agent and each worker rank) is doing now, read with py-spy, those
// stuck in the same place grouped ("3 processes in all_reduce", "1 process in stuck_here"): the
// answer to "is it hung, and which rank?" without logging into a node. A scheduler answers it
// through Capability::kStacks.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/schedulers/stacks.h"

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
  return [o, &registry] {
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
