// `torchx status HANDLE [--roles a,b] [--json] [--resources]`: the app's state, TorchX's text or
// JSON (with torchx-nightly's keys); a failed app adds its failed replicas' last stderr lines
// (`failure_logs` in JSON); --resources adds each replica's newest CPU, memory and GPU sample
// (the `resources` key in JSON).
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "exit_codes.h"
#include "torchx/clock.h"
#include "torchx/schedulers/usage.h"
#include "torchx/specs/app_handle.h"

namespace torchx::cli {
namespace {

// torchx-nightly's `status --json`: the AppStatus JSON plus the handle, its app id and scheduler,
// and ui_url (the same value as url, the canonical name); keys are only ever added.
std::string StatusJson(const std::string& handle, const specs::AppStatus& status,
                       const std::vector<std::string>& roles) {
  nlohmann::json out = nlohmann::json::parse(specs::AppStatusToJson(status, roles, -1));
  out["handle"] = handle;
  if (auto parsed = specs::ParseAppHandle(handle)) {
    out["app_id"] = parsed->app_id;
    out["scheduler"] = parsed->scheduler_backend;
  }
  out["ui_url"] = status.ui_url ? nlohmann::json(*status.ui_url) : nlohmann::json(nullptr);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The newest sample of each replica; a scheduler without the capability says so in place of the
// figures (the status itself was printed and stays the answer).
Result<std::optional<schedulers::AppUsage>> NewestUsage(runner::Runner& runner, const std::string& handle) {
  schedulers::UsageOptions opts;
  opts.max_samples = 1;
  return runner.ResourceUsage(handle, opts);
}

}  // namespace

Handler AddStatusCommand(CLI::App& app, plugins::PluginRegistry& registry) {
  struct Opts {
    std::string handle;
    std::vector<std::string> roles;
    bool json = false;
    bool resources = false;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("status", "Show an app's status");
  cmd->add_option("app_handle", o->handle, "scheduler://session/app_id")->required();
  cmd->add_option("--roles", o->roles, "Only these roles (comma-separated)")->delimiter(',');
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--resources", o->resources,
                "Also show each replica's newest CPU, memory and GPU sample (`torchx top` follows them)");
  return [o, &registry] {
    runner::Runner runner(registry, ReaderRunnerOptions());
    auto status = runner.Status(o->handle);
    if (!status) return ReportError(status.error());
    if (!*status) {
      ReportError(AppNotFound(o->handle));
      return kExitFailure;
    }
    // A failed app says why: its failed replicas' last stderr lines.
    std::vector<runner::ReplicaLogTail> tails;
    if ((*status)->state == specs::AppState::kFailed) {
      if (auto got = runner.FailureTails(o->handle); got && *got) tails = std::move(**got);
    }
    if (!o->resources && !o->json) {
      std::string out = specs::FormatAppStatus(**status, o->roles) + "\n" + FormatFailureTails(tails);
      std::fputs(out.c_str(), stdout);
      return kExitOk;
    }
    if (o->json) {
      nlohmann::json out = nlohmann::json::parse(StatusJson(o->handle, **status, o->roles));
      if (!tails.empty()) {
        nlohmann::json logs = nlohmann::json::array();
        for (const runner::ReplicaLogTail& t : tails) {
          logs.push_back({{"role", t.role}, {"replica_id", t.replica_id}, {"stream", t.stream}, {"lines", t.lines}});
        }
        out["failure_logs"] = std::move(logs);
      }
      if (!o->resources) {
        std::fputs((out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(), stdout);
        return kExitOk;
      }
      auto usage = NewestUsage(runner, o->handle);
      if (usage && *usage) {
        out["resources"] = nlohmann::json::parse(schedulers::UsageToJson(**usage));
      } else {
        out["resources"] = nullptr;
        out["resources_error"] = usage ? "the app is gone" : usage.error().message();
      }
      std::fputs((out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n").c_str(), stdout);
      return kExitOk;
    }
    std::string out = specs::FormatAppStatus(**status, o->roles) + "\n" + FormatFailureTails(tails);
    auto usage = runner.ResourceUsage(o->handle);  // the whole kept series: its average and peak too
    if (usage && *usage) {
      out += schedulers::FormatUsage(**usage, SystemClock().EpochSeconds());
    } else {
      out += "Resources: " + (usage ? std::string("the app is gone") : usage.error().message()) + "\n";
    }
    std::fputs(out.c_str(), stdout);
    return kExitOk;
  };
}

}  // namespace torchx::cli
