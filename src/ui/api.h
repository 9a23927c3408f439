// The REST API of `torchx ui` (docs/ui.md), apart from HTTP: each call takes decoded parameters
// and answers a status code and a JSON body, so it is unit-tested without a socket. The server
// (server.cc) routes requests here and streams what is followed (logs, events).
//
// The API keeps no state of its own: every answer comes from the schedulers through the calling
// thread's Runner, over the registry the composition root built.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "torchx/config/torchx_config.h"
#include "torchx/plugins/registry.h"
#include "torchx/runner/runner.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/status.h"

namespace torchx::ui {

struct ApiResponse {
  int status = 200;
  std::string body;  ///< JSON
};

struct ApiOptions {
  /// The schedulers the apps page lists, in order (the default scheduler first).
  std::vector<std::string> schedulers;
  runner::RunnerOptions runner_options;
  /// `.torchxconfig` for scheduler option defaults of submitted apps.
  config::TorchxConfig config;
  /// Where component files may be loaded from (component_paths.h): the working directory and
  /// those `--component_dir` names.
  std::vector<std::filesystem::path> component_roots;
};

/// JSON text; bytes that are not UTF-8 (job output, error files) are replaced.
std::string Dump(const nlohmann::json& value);

/// Whether `handle`'s app is terminal or gone (a followed log ends then), as `runner` sees it.
bool AppEnded(runner::Runner& runner, const std::string& handle);

/// Query parameters, decoded; a repeated key keeps every value.
using Query = std::multimap<std::string, std::string>;

/// One Status -> HTTP table: 400 kInvalidArgument, 404 kNotFound, 409 kAlreadyExists and
/// kFailedPrecondition, 403 kPermissionDenied, 501 kUnimplemented, 503 kUnavailable, 504
/// kDeadlineExceeded, 500 otherwise.
int HttpStatusFor(StatusCode code);
/// {"error": {"code": "INVALID_ARGUMENT", "message": ...}} with the status's HTTP code.
ApiResponse ErrorResponse(const ::torchx::Status& status);

class Api {
 public:
  /// `registry` must outlive the Api.
  Api(plugins::PluginRegistry& registry, ApiOptions options);

  /// GET /api/v1/apps: ?scheduler (repeatable or comma-separated; default: every configured one),
  /// ?state (names), ?name (substring, any case), ?offset, ?limit (1..500, default 50). Newest
  /// first; the page's apps carry their roles, replica counts and restarts. A scheduler that
  /// cannot answer is listed under "errors" instead of failing the whole page.
  ApiResponse ListApps(const Query& query) const;
  /// A digest of every listed app's (handle, state, restarts): what the events stream compares.
  /// Errors as ListApps for a bad filter.
  Result<std::string> AppsDigest(const Query& query) const;
  /// GET /api/v1/apps/{handle}: status (replica states by name, structured errors decoded) and
  /// the AppDef as submitted.
  ApiResponse GetApp(const std::string& handle) const;
  /// GetApp's answer shared as Listings() is (a 1,000-trial sweep's document is tens of ms to
  /// build; 50 open pages asking each second would take a core). Forgotten when an app changes
  /// through this API, and not shared while an app cancelled through it has not been seen ended.
  /// Event streams call GetApp itself.
  ApiResponse GetAppShared(const std::string& handle) const;
  /// GET /api/v1/apps/{handle}/members: a composite's children (a sweep's trials, a pipeline's
  /// steps, a managed job's attempts) in their order, paged: ?offset, ?limit (1..500, default
  /// 50); {members, total, offset, limit}. An app that is no composite has none; 404 for an unknown
  /// composite.
  ApiResponse ListMembers(const std::string& handle, const Query& query) const;
  /// GET /api/v1/apps/{handle}/resources: the replicas' CPU, memory and GPU samples
  /// (schedulers::UsageToJson) ?since= epoch seconds, ?max_samples= per replica. 404 for an unknown
  /// app; 501 for a scheduler without resource usage.
  ApiResponse GetResources(const std::string& handle, const Query& query) const;
  /// POST /api/v1/apps/{handle}/cancel: 202 and the state seen; 404 for an unknown app.
  ApiResponse CancelApp(const std::string& handle) const;
  /// POST .../stacks?role=&replica=: `torchx debug stack --json`'s document (it attaches a
  /// debugger to the app's processes, hence a POST, which needs the token or the page's CSRF).
  ApiResponse DumpStacks(const std::string& handle, const Query& query) const;
  /// POST .../profile?role=&replica=&duration= (1..60 s, default 5): one replica's CPU profile,
  /// py-spy's speedscope JSON as the body (the page downloads it). 400 naming the replicas when
  /// several match.
  ApiResponse ProfileApp(const std::string& handle, const Query& query) const;
  /// GET /api/v1/hosts?scheduler=: each listed scheduler that can say (Capability::kHosts), or those
  /// named, with its hosts (`torchx hosts --json`'s objects), or its error:
  /// {"schedulers": [{"scheduler", "hosts": [...]} | {"scheduler", "error"}]}.
  ApiResponse ListHosts(const Query& query) const;
  /// DELETE /api/v1/apps/{handle}: 200; 404 unknown; 409 while it runs.
  ApiResponse DeleteApp(const std::string& handle) const;
  /// POST /api/v1/apps: {"component", "args": [cli args] | {typed}, or "appdef": {...};
  /// "scheduler", "cfg": {..} | "k=v,..", "dryrun"}. 201 {"app_handle"}; with dryrun 200 and what
  /// would run where.
  ApiResponse SubmitApp(const std::string& body) const;
  /// GET /api/v1/components: registered components (builtins, plugins) with their summaries.
  ApiResponse ListComponents() const;
  /// GET /api/v1/components/{name}: a component's declaration (the run page's form); `name` may
  /// also be a component file (`path.py:fn`, a declarative YAML).
  ApiResponse GetComponent(const std::string& name) const;
  /// GET /api/v1/schedulers: every scheduler with its runopts, marking the listed ones.
  ApiResponse ListSchedulers() const;

  /// The log of one replica (GET /api/v1/apps/{handle}/logs): ?driver (a composite's own log),
  /// ?role (default: the first role),
  /// ?replica, ?stream (stdout|stderr|combined), ?regex, ?follow. Errors name the parameter.
  struct OpenedLog {
    std::unique_ptr<runner::Runner> runner;  // owns the scheduler the iterator reads through
    std::unique_ptr<schedulers::LogIterator> lines;
    std::string handle;
    bool follow = false;
  };
  Result<OpenedLog> OpenLog(const std::string& handle, const Query& query) const;

  /// A new runner, for a caller that keeps it (a followed log, an event stream).
  std::unique_ptr<runner::Runner> MakeRunner() const;

  /// The calling thread's runner, kept for its next calls (the server answers on a few worker
  /// threads, src/ui/api_workers.h): its back-ends keep what they opened and read between calls
  /// (the local store's connection, a composite's parsed record while its version holds; a tenth
  /// of an apps page was opening the store again), and each back-end instance is used by one
  /// thread, as a Scheduler expects.
  runner::Runner& Shared() const;

  /// Every listed scheduler's apps, shared by the calls (apps pages, event streams) within
  /// kListingMaxAge of its taking, so 50 open pages cost one listing a second, not 50. Once it
  /// is older, one caller lists anew while the others are answered the last listing (for up
  /// to 5 s more; then all wait for the new one). A change made through this API is seen at
  /// once (it forgets the listing); one made elsewhere (the CLI, a driver) within a second or
  /// two, as an event stream's poll sees it. A cancel takes effect after it is answered: until
  /// the cancelled app is seen ended (or kSettleWithin passes), every call is answered a listing
  /// taken after the call began, so no client is shown the app running after another saw it end.
  struct ListingSnapshot;
  static constexpr std::chrono::seconds kSettleWithin{30};
  static constexpr std::chrono::milliseconds kListingMaxAge{1000};
  std::shared_ptr<const ListingSnapshot> Listings() const;

  const ApiOptions& options() const { return options_; }

 private:
  plugins::PluginRegistry& registry_;
  ApiOptions options_;
  mutable std::mutex runners_mu_;  // guards runners_
  mutable std::map<std::thread::id, std::unique_ptr<runner::Runner>> runners_;
  void ForgetListings() const;
  // GetApp, telling `ended` whether the app has ended or is gone (an error answer).
  ApiResponse Document(const std::string& handle, bool* ended) const;
  // Bumped by ForgetListings: a listing or document taken before a change is not kept after it.
  mutable std::atomic<std::uint64_t> generation_{0};
  mutable std::mutex listings_mu_;  // guards listings_
  mutable std::mutex refresh_mu_;   // one listing taken at a time
  mutable std::shared_ptr<const ListingSnapshot> listings_;
  struct SharedApp {
    std::chrono::steady_clock::time_point taken;
    ApiResponse answer;
    bool refreshing = false;  // a caller is taking it anew; the others are answered this one
  };
  mutable std::mutex apps_mu_;  // guards apps_
  mutable std::map<std::string, SharedApp> apps_;
  // Apps cancelled through this API and not yet seen ended, each until when it is waited for.
  mutable std::mutex settling_mu_;  // guards settling_
  mutable std::map<std::string, std::chrono::steady_clock::time_point> settling_;
  // Whether `handle` (any app when null) is settling; forgets those past their time.
  bool Settling(const std::string* handle) const;
  // Forgets the settling apps `ended` says have ended.
  void SeenEnded(const std::function<bool(const std::string& handle)>& ended) const;
};

}  // namespace torchx::ui
