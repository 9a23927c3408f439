// `torchx cancel HANDLE` (alias `stop`) and `torchx delete HANDLE`.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"

namespace torchx::cli {

Handler AddCancelCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto handle = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("cancel", "Cancel an app (no-op if it already ended)");
  cmd->alias("stop");
  cmd->add_option("app_handle", *handle, "scheduler://session/app_id")->required();
  return [handle, &registry] {
    runner::Runner runner(registry, ReaderRunnerOptions());
    auto outcome = runner.RequestCancel(*handle);
    if (!outcome) return ReportError(outcome.error());
    using Kind = runner::Runner::CancelOutcome::Kind;
    if (outcome->kind == Kind::kNotFound) {
      ReportError(AppNotFound(*handle));
      return kExitFailure;
    }
    if (outcome->kind == Kind::kAlreadyEnded) {  // TorchX: a no-op; say so rather than "requested"
      std::fprintf(stderr, "torchx: %s already ended (%s); nothing to cancel\n", handle->c_str(),
                   std::string(specs::AppStateName(outcome->state)).c_str());
      return kExitOk;
    }
    std::fprintf(stderr, "torchx: cancel requested for %s\n", handle->c_str());
    return kExitOk;
  };
}

Handler AddDeleteCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  auto handle = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("delete", "Delete an ended app's record and logs");
  cmd->add_option("app_handle", *handle, "scheduler://session/app_id")->required();
  return [handle, &registry] {
    runner::Runner runner(registry, ReaderRunnerOptions());
    if (Status s = runner.Delete(*handle); !s.ok()) {
      ReportError(s);
      return s.code() == StatusCode::kNotFound || s.code() == StatusCode::kFailedPrecondition ? kExitFailure
                                                                                              : ExitCodeFor(s);
    }
    return kExitOk;
  };
}

}  // namespace torchx::cli
