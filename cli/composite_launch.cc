#include "composite_launch.h"

#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "common.h"
#include "core/file_text.h"
#include "exit_codes.h"
#include "interrupt_watch.h"
#include "torchx/composite_kinds.h"
#include "wait_display.h"

namespace torchx::cli {

int LaunchCompositeVerb(plugins::PluginRegistry& registry, const config::TorchxConfig& config,
                        const composite::LaunchRequest& request, bool dryrun, bool wait) {
  runner::Runner runner(registry, RunnerOptionsFrom(config));
  auto plan = PlanComposite(runner, config, request);
  if (!plan) return ReportError(plan.error());
  if (dryrun) {
    std::fputs(plan->text.c_str(), stdout);
    return kExitOk;
  }
  std::optional<InterruptWatch> interrupt;
  if (wait) interrupt.emplace(runner, InterruptCancels(runner, plan->child_schedulers));
  auto handle = plan->launch(runner);
  if (!handle) return ReportError(handle.error());
  std::printf("%s\n", handle->c_str());
  std::fflush(stdout);
  if (!wait) return kExitOk;
  interrupt->Arm(*handle);
  auto status = WaitWithDisplay(runner, *handle);
  interrupt->SettleIfInterrupted();
  if (!status) return ReportError(status.error());
  if (!*status) return ReportError(AppNotFound(*handle));
  if (!(*status)->msg.empty()) std::fprintf(stderr, "torchx: %s\n", (*status)->msg.c_str());
  return (*status)->state == specs::AppState::kSucceeded ? kExitOk : kExitFailure;
}

int RunDocument(const DocumentRunOptions& opts, plugins::PluginRegistry& registry) {
  auto config = LoadConfig();
  if (!config) return ReportError(config.error());
  auto text = ReadDocument(opts.file, opts.kind + " file");
  if (!text) return ReportError(text.error());
  composite::LaunchRequest request{opts.kind, std::move(*text), opts.file, opts.scheduler, opts.cfg};
  if (request.scheduler.empty()) request.scheduler = config->CliDefault("run", "scheduler").value_or("");
  if (!opts.name.empty()) {
    request.overrides_json =
        nlohmann::json{{"name", opts.name}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return LaunchCompositeVerb(registry, *config, request, opts.dryrun, opts.wait);
}

Result<std::string> ReadDocument(const std::string& path, std::string_view what) {
  return internal::ReadInputFile(path, what);
}

}  // namespace torchx::cli
