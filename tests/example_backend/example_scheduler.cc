// A test-only back-end, built the way every back-end is (torchx_add_backend, its own folder) to
// show what adding one takes: this folder, one registration, docs. Its engine is `sh`: an app is
// a directory under $TORCHX_EXAMPLE_ENGINE_DIR with a job script that a detached `setsid sh` runs.
// The job waits for the apps it depends on (native dependencies, so pipelines submit a DAG to it
// at once), runs its replicas, and records how each ended. Nothing outside this folder names it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/json_view.h"
#include "core/pystr.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "torchx/schedulers/scheduler.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/macros.h"

namespace torchx::schedulers::example {
namespace {

namespace fs = std::filesystem;
using internal::JsonView;

// The job every app runs (its directory is $1). `after` lists the apps it waits for: one that
// failed or was cancelled cancels this one, as Slurm's --kill-on-invalid-dep does.
constexpr const char* kJob = R"sh(cd "$1" || exit 1
echo $$ > pid
for dep in $(cat after); do
  while [ ! -f "../$dep/exit" ] && [ ! -f "../$dep/cancelled" ]; do sleep 0.05; done
  if [ -f "../$dep/cancelled" ] || [ "$(cat "../$dep/exit")" != 0 ]; then : > cancelled; exit 0; fi
done
: > started
for r in replica-*; do (sh "$r/cmd" > "$r/log" 2>&1; echo $? > "$r/exit") & done
wait
code=0
for r in replica-*; do c=$(cat "$r/exit"); [ "$c" = 0 ] || code=$c; done
echo $code > exit.tmp && mv exit.tmp exit
)sh";

std::string Read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Status Write(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
  f.close();
  if (!f) return UnavailableError(fmt::format("example: cannot write {}", p.string()));
  return OkStatus();
}

class ExampleScheduler : public Scheduler {
 public:
  ExampleScheduler(std::string session, fs::path root)
      : Scheduler("example", std::move(session)), root_(std::move(root)) {}

  specs::RunOpts run_opts() const override {
    specs::RunOpts o;
    (void)o.Add("after", specs::CfgType::kListStr, "apps of this engine to wait for (set by DependencyCfg)");
    return o;
  }
  // Its state is in its engine (or on disk): a thread may have an instance of its own.
  bool instance_per_thread() const override { return true; }
  Capabilities capabilities() const override {
    return {Capability::kLogs, Capability::kList, Capability::kNativeDependencies};
  }
  bool requires_resources() const override { return false; }

  Result<specs::Cfg> DependencyCfg(const std::vector<std::string>& after_app_ids, specs::Cfg cfg) const override {
    specs::CfgList after;
    if (auto it = cfg.find("after"); it != cfg.end()) {
      if (const auto* given = std::get_if<specs::CfgList>(&it->second)) after = *given;
    }
    after.insert(after.end(), after_app_ids.begin(), after_app_ids.end());
    cfg["after"] = after;
    return cfg;
  }

  // The payload says what the app's directory holds: written here, then the job is started.
  Result<std::string> Schedule(const DryRunInfo& info) override {
    JsonView req = JsonView::Parse(info.payload);
    std::string app_id = req["app_id"].Str();
    std::vector<JsonView> replicas = req["replicas"].Items();
    if (app_id.empty() || app_id.find('/') != std::string::npos || replicas.empty()) {
      return InvalidArgumentError("example request: needs app_id and replicas");
    }
    fs::path dir = root_ / app_id;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return UnavailableError(fmt::format("example: cannot make {}: {}", dir.string(), ec.message()));
    std::string after;
    for (const JsonView& a : req["after"].Items()) after += a.Str() + "\n";
    TORCHX_RETURN_IF_ERROR(Write(dir / "after", after));
    TORCHX_RETURN_IF_ERROR(Write(dir / "role", req["role"].Str()));
    for (size_t i = 0; i < replicas.size(); ++i) {
      fs::create_directories(dir / fmt::format("replica-{}", i), ec);
      TORCHX_RETURN_IF_ERROR(Write(dir / fmt::format("replica-{}", i) / "cmd", replicas[i].Str()));
    }
    TORCHX_RETURN_IF_ERROR(Write(dir / "job.sh", kJob));  // last: an app exists once it has its job
    // setsid -f: the job leads its own process group (cancel signals it whole) and outlives us.
    TORCHX_ASSIGN_OR_RETURN(
        auto started,
        internal::RunCommand({"sh", "-c", "setsid -f sh \"$0/job.sh\" \"$0\" </dev/null >/dev/null 2>&1", dir.string()},
                             {}, std::chrono::seconds(10)));
    if (started.exit_code != 0) return UnavailableError(fmt::format("example: cannot start {}", app_id));
    return app_id;
  }

  Result<std::optional<DescribeAppResponse>> Describe(const std::string& app_id) override {
    fs::path dir = root_ / app_id;
    if (app_id.empty() || app_id.find('/') != std::string::npos || !fs::exists(dir / "job.sh")) {
      return std::optional<DescribeAppResponse>();
    }
    DescribeAppResponse d;
    d.app_id = app_id;
    if (fs::exists(dir / "cancelled")) {
      d.state = specs::AppState::kCancelled;
    } else if (fs::exists(dir / "exit")) {
      d.state = internal::Strip(Read(dir / "exit")) == "0" ? specs::AppState::kSucceeded : specs::AppState::kFailed;
    } else {
      d.state = fs::exists(dir / "started") ? specs::AppState::kRunning : specs::AppState::kPending;
    }
    specs::RoleStatus role{Read(dir / "role"), {}};
    for (int i = 0; fs::exists(dir / fmt::format("replica-{}", i)); ++i) {
      specs::ReplicaStatus r;
      r.role = role.role;
      r.id = i;
      r.state = d.state;
      r.hostname = "localhost";
      role.replicas.push_back(r);
    }
    d.roles_statuses.push_back(std::move(role));
    return std::optional(std::move(d));
  }

  Result<std::vector<ListAppResponse>> List() override {
    std::vector<ListAppResponse> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root_, ec)) {
      TORCHX_ASSIGN_OR_RETURN(auto d, Describe(e.path().filename().string()));
      if (d) out.push_back({d->app_id, d->state, "", d->app_id});
    }
    return out;
  }

  Result<std::unique_ptr<LogIterator>> LogIter(const std::string& app_id, const LogOptions& o) override {
    fs::path log = root_ / app_id / fmt::format("replica-{}", o.replica) / "log";
    std::vector<std::string> lines;
    std::istringstream in(Read(log));
    std::string line;
    while (std::getline(in, line)) lines.push_back(in.eof() ? line : line + "\n");
    return MakeLinesIterator(std::move(lines));
  }

 protected:
  // One role per app (what this engine can run); every replica its own shell command. Nothing is
  // written before Schedule.
  Result<DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    if (app.roles.size() != 1) {
      return InvalidArgumentError(fmt::format("example: roles: runs one role per app, got {}", app.roles.size()));
    }
    DryRunInfo info;
    info.app = app;
    info.app_id = specs::MakeUnique(specs::NormalizeName(app.name));
    std::vector<std::string> after = cfg.List("after").value_or(specs::CfgList{});
    nlohmann::json replicas = nlohmann::json::array();
    for (int i = 0; i < app.roles[0].num_replicas; ++i) {
      specs::macros::Values values{"", info.app_id, std::to_string(i), "localhost"};
      specs::Role r = values.Apply(app.roles[0]);
      std::string cmd;
      for (const auto& [k, v] : r.env) cmd += fmt::format("export {}={}\n", k, internal::ShlexQuote(v));
      cmd += "exec " + internal::ShlexQuote(r.entrypoint);
      for (const std::string& a : r.args) cmd += " " + internal::ShlexQuote(a);
      replicas.push_back(cmd + "\n");
      info.request += fmt::format("replica {}: {}\n", i, cmd);
    }
    if (!after.empty()) info.request += fmt::format("after: {}\n", fmt::join(after, ", "));
    info.payload =
        nlohmann::json{{"app_id", info.app_id}, {"role", app.roles[0].name}, {"after", after}, {"replicas", replicas}}
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return info;
  }

  Status DoCancel(const std::string& app_id) override {
    fs::path dir = root_ / app_id;
    TORCHX_RETURN_IF_ERROR(Write(dir / "cancelled", ""));
    std::string pid(internal::Strip(Read(dir / "pid")));
    if (!pid.empty()) {
      (void)internal::RunCommand({"kill", "-TERM", "--", "-" + pid}, {}, std::chrono::seconds(10));
    }
    return OkStatus();
  }

 private:
  fs::path root_;
};

}  // namespace

std::vector<SchedulerEntry> BackendSchedulers() {
  return {{"example", [](const SchedulerContext& context) -> Result<std::unique_ptr<Scheduler>> {
             const char* root = std::getenv("TORCHX_EXAMPLE_ENGINE_DIR");
             if (!root || !*root) {
               return FailedPreconditionError("example: set TORCHX_EXAMPLE_ENGINE_DIR to the engine's directory");
             }
             return std::unique_ptr<Scheduler>(std::make_unique<ExampleScheduler>(context.session_name, root));
           }}};
}

}  // namespace torchx::schedulers::example
