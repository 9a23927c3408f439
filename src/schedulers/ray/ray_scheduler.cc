#include "schedulers/ray/ray_scheduler.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/json_view.h"
#include "core/state_dir.h"
#include "schedulers/ray/ray_client.h"
#include "schedulers/ray/ray_frames.h"
#include "schedulers/ray/ray_job.h"
#include "schedulers/ray/ray_nodes.h"
#include "schedulers/ray/ray_package.h"
#include "schedulers/ray/ray_request.h"
#include "schedulers/streamed_lines.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/serialize.h"

namespace torchx::schedulers::ray {
namespace {

using Json = nlohmann::json;
using specs::AppState;

constexpr const char* kDefaultAddress = "127.0.0.1:8265";
constexpr const char* kEntrypoint = "python3 -m torchx_ray_driver";
constexpr std::chrono::milliseconds kFollowPoll(500);

std::string Compact(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// A replica's state from where the gang is: its own exit where it has one, else the app's.
AppState ReplicaState(AppState app, const ReplicaPlace* place) {
  if (place != nullptr && place->exit_code) return *place->exit_code == 0 ? AppState::kSucceeded : AppState::kFailed;
  return app;
}

class RayScheduler : public Scheduler {
 public:
  RayScheduler(std::string session, std::shared_ptr<internal::HttpClient> http,
               std::shared_ptr<internal::CommandRunner> commands, EnvReader env, std::shared_ptr<const Clock> clock)
      : Scheduler("ray", std::move(session)),
        http_(std::move(http)),
        commands_(std::move(commands)),
        env_(std::move(env)),
        clock_(std::move(clock)) {}

  specs::RunOpts run_opts() const override {
    specs::RunOpts o;
    (void)o.Add("cluster_config_file", specs::CfgType::kStr,
                "Use CLUSTER_CONFIG_FILE to access or create the Ray cluster (its head's address comes from `ray "
                "get-head-ip`, which must be installed).");
    (void)o.Add("cluster_name", specs::CfgType::kStr, "Override the configured cluster name.");
    (void)o.Add("dashboard_address", specs::CfgType::kStr,
                "Use ray status to get the dashboard address you will submit jobs against (default: RAY_ADDRESS when "
                "set)",
                DefaultAddress());
    (void)o.Add("requirements", specs::CfgType::kStr,
                "Path to requirements.txt (default: the working directory's, if it has one)");
    (void)o.Add("placement_strategy", specs::CfgType::kStr,
                "how the gang's bundles (one per replica) spread over nodes: SPREAD, PACK, STRICT_SPREAD, STRICT_PACK",
                std::string("SPREAD"));
    (void)o.Add("reschedule_timeout", specs::CfgType::kInt,
                "seconds a replica whose node was lost may wait for a new place before the app fails", int64_t{120});
    return o;
  }

  // Its state is in its engine (or on disk): a thread may have an instance of its own.
  bool instance_per_thread() const override { return true; }
  Capabilities capabilities() const override {
    return {Capability::kLogs,
            Capability::kFollowLogs,
            Capability::kList,
            Capability::kDelete,
            Capability::kWorkspace,
            Capability::kDescribeNative,
            Capability::kFailureClassification,
            Capability::kStacks,
            Capability::kHosts};
  }

  // TorchX's DirWorkspaceMixin: the workspace is the job's working directory, each role's image.
  Status BuildWorkspace(const std::string& workspace, specs::AppDef& app, const specs::ResolvedCfg&) override {
    std::error_code ec;
    if (!std::filesystem::is_directory(workspace, ec)) {
      return InvalidArgumentError(fmt::format("ray: workspace `{}` is not a local directory", workspace));
    }
    std::string dir = std::filesystem::absolute(workspace).lexically_normal().string();
    for (specs::Role& role : app.roles) role.image = dir;
    return OkStatus();
  }

  Result<std::string> Schedule(const DryRunInfo& info) override {
    TORCHX_ASSIGN_OR_RETURN(RayRequest req, RayRequestFromJson(info.payload));
    if (req.address.empty()) {
      TORCHX_ASSIGN_OR_RETURN(req.address, HeadAddress(req));
    }
    RayClient client = Client(req.address);
    std::vector<PackageFile> driver = {{"torchx_ray_driver/__init__.py", "", "", false},
                                       {"torchx_ray_driver/__main__.py", "", RayDriverSource(), false},
                                       {"torchx_ray_driver/spec.json", "", req.spec_json, false}};
    // The spec makes the driver's package new for every job: uploaded without asking first.
    TORCHX_ASSIGN_OR_RETURN(std::string driver_uri, Upload(client, std::move(driver), /*ask_first=*/false));
    Json runtime_env = {{"py_modules", Json::array({driver_uri})}};
    if (!req.working_dir.empty()) {
      TORCHX_ASSIGN_OR_RETURN(std::vector<PackageFile> files, DirectoryFiles(req.working_dir));
      // Ray cannot unpack an empty package as a working_dir ("does not exist on the cluster"): an
      // empty directory is no working_dir at all.
      if (!files.empty()) {
        TORCHX_ASSIGN_OR_RETURN(runtime_env["working_dir"], Upload(client, std::move(files)));
      }
    }
    if (!req.pip.empty()) runtime_env["pip"] = req.pip;
    Json body = {{"entrypoint", kEntrypoint},
                 {"submission_id", req.submission_id},
                 {"runtime_env", runtime_env},
                 {"metadata", req.metadata},
                 {"entrypoint_num_cpus", 0}};
    // The cluster's session, asked before submitting: a record naming it tells later calls that a job
    // Ray no longer knows was lost with its head, not deleted.
    TORCHX_ASSIGN_OR_RETURN(RayClient::Version version, client.RayVersion());
    TORCHX_RETURN_IF_ERROR(client.Submit(req.submission_id, Compact(body)));
    Remember(req.address, req.submission_id, version.session_name);
    return RayAppId(req.address, req.submission_id);
  }

  Result<std::optional<DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto view, View(app_id));
    if (!view) return std::optional<DescribeAppResponse>();
    DescribeAppResponse d;
    d.app_id = app_id;
    d.state = view->state;
    d.num_restarts = view->gang.restarts;
    d.msg = Message(*view);
    d.app = view->app;
    if (view->app) {
      for (const specs::Role& role : view->app->roles) {
        specs::RoleStatus rs{role.name, {}};
        for (int i = 0; i < role.num_replicas; ++i) {
          const ReplicaPlace* place = Place(view->gang, role.name, i);
          specs::ReplicaStatus r;
          r.id = i;
          r.role = role.name;
          r.state = ReplicaState(view->state, place);
          if (place != nullptr) r.hostname = place->host;
          rs.replicas.push_back(std::move(r));
        }
        d.roles_statuses.push_back(std::move(rs));
      }
    }
    return std::optional<DescribeAppResponse>(std::move(d));
  }

  // Ray's job as it holds it, and where each replica runs (its Ray node and host).
  Result<std::optional<DryRunInfo>> DescribeNative(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto view, View(app_id));
    if (!view) return std::optional<DryRunInfo>();
    Json placement = Json::array();
    std::string text =
        fmt::format("ray job {} ({}) on http://{}\n", view->job.submission_id, view->job.status, view->address);
    for (const ReplicaPlace& p : view->gang.replicas) {
      placement.push_back({{"role", p.role},
                           {"replica", p.replica},
                           {"node_id", p.node_id},
                           {"host", p.host},
                           {"hostname", p.hostname}});
      text += fmt::format("  {}/{}: node {} host {} ({})\n", p.role, p.replica, p.node_id, p.host, p.hostname);
    }
    Json job = {{"submission_id", view->job.submission_id},
                {"status", view->job.status},
                {"message", view->job.message},
                {"error_type", view->job.error_type},
                {"entrypoint", view->job.entrypoint},
                {"driver_node_id", view->job.driver_node_id}};
    DryRunInfo out;
    out.scheduler = "ray";
    out.app_id = app_id;
    out.app_id_is_final = true;
    out.request = text;
    out.payload = Compact({{"job", job}, {"placement", placement}});
    if (view->app) out.app = *view->app;
    return std::optional<DryRunInfo>(std::move(out));
  }

  // Each running replica's command and its subprocesses, dumped by its node's agent (the
  // dashboard's own "Stack Trace": py-spy on that node), found by the pid the gang driver reported.
  Result<std::optional<std::vector<ProcessStack>>> DumpStacks(const std::string& app_id,
                                                              const StackOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto chosen, RunningPlaces(app_id, options.role, options.replica_id, "dump"));
    if (!chosen) return std::optional<std::vector<ProcessStack>>();
    RayClient client = Client(chosen->first);
    std::vector<ProcessStack> out;
    // One agent call per replica, in turn: the whole dump within two minutes; the rest say why.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    for (const ReplicaPlace& p : chosen->second) {
      auto text = std::chrono::steady_clock::now() >= deadline
                      ? Result<std::string>(DeadlineExceededError(
                            "not dumped: the dump's 2 minute limit was reached (dump one replica with --role and "
                            "--replica)"))
                      : client.Traceback(p.node_id, *p.pid);
      auto got = text ? ParsePySpyText(*text) : Result<std::vector<ProcessStack>>(text.error());
      if (!got) {  // this replica has no stacks, and says why; the others are still dumped
        ProcessStack none;
        none.role = p.role;
        none.replica_id = p.replica;
        none.pid = *p.pid;
        none.host = p.hostname.empty() ? p.host : p.hostname;
        none.error = got.error().message();
        out.push_back(std::move(none));
        continue;
      }
      for (ProcessStack& proc : *got) {
        proc.role = p.role;
        proc.replica_id = p.replica;
        proc.host = p.hostname.empty() ? p.host : p.hostname;
        out.push_back(std::move(proc));
      }
    }
    return std::optional(std::move(out));
  }

  // The node's agent samples the replica's command and its subprocesses (the dashboard's "CPU
  // Flame Graph", as speedscope JSON).
  Status Profile(const std::string& app_id, const ProfileOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto chosen, RunningPlaces(app_id, options.role, options.replica_id, "profile"));
    if (!chosen) return NotFoundError(fmt::format("ray: app {} not found", app_id));
    if (chosen->second.size() > 1) {
      std::string names;
      for (const ReplicaPlace& p : chosen->second)
        names += fmt::format("{}{}/{}", names.empty() ? "" : ", ", p.role, p.replica);
      return InvalidArgumentError(fmt::format(
          "a profile is of one replica, and app {} has {} running that match ({}): name one with --role and --replica",
          app_id, chosen->second.size(), names));
    }
    const ReplicaPlace& p = chosen->second.front();
    TORCHX_ASSIGN_OR_RETURN(
        std::string profile,
        Client(chosen->first).CpuProfile(p.node_id, *p.pid, static_cast<int>(std::ceil(options.seconds))));
    std::ofstream out(options.output, std::ios::binary | std::ios::trunc);
    out << profile;
    if (!out.good()) return InternalError(fmt::format("cannot write {}", options.output));
    return OkStatus();
  }

  // The dashboard's node summary, and each running torchx gang's replicas on their nodes.
  Result<std::vector<HostInfo>> Hosts() override {
    TORCHX_ASSIGN_OR_RETURN(std::string address, NormalizeAddress(DefaultAddress(), "dashboard address"));
    RayClient client = Client(address);
    TORCHX_ASSIGN_OR_RETURN(std::string summary, client.NodesSummary());
    TORCHX_ASSIGN_OR_RETURN(std::vector<RayNode> nodes, ParseRayNodes(summary));
    TORCHX_ASSIGN_OR_RETURN(std::vector<RayJob> jobs, client.Jobs());
    for (const RayJob& job : jobs) {
      if (!job.metadata.contains(std::string(kMetadataLauncher)) || RayJobState(job.status) != AppState::kRunning) {
        continue;
      }
      auto logs = client.Logs(job.submission_id);
      if (!logs.ok() || !*logs) continue;  // its driver's node cannot be read now: placed nowhere
      PlaceGang(RayAppId(address, job.submission_id), ReadGangStatus(**logs), nodes);
    }
    std::vector<HostInfo> out;
    out.reserve(nodes.size());
    for (RayNode& n : nodes) out.push_back(std::move(n.host));
    return out;
  }

  Result<std::vector<ListAppResponse>> List() override {
    TORCHX_ASSIGN_OR_RETURN(std::string address, NormalizeAddress(DefaultAddress(), "dashboard address"));
    TORCHX_ASSIGN_OR_RETURN(std::vector<RayJob> jobs, Client(address).Jobs());
    std::vector<ListAppResponse> out;
    for (const RayJob& job : jobs) {
      if (!job.metadata.contains(std::string(kMetadataLauncher))) continue;  // this launcher's jobs only
      ListAppResponse r;
      r.app_id = RayAppId(address, job.submission_id);
      r.state = RayJobState(job.status);
      if (auto it = job.metadata.find("torchx.app_name"); it != job.metadata.end()) r.name = it->second;
      r.created = job.start_time;
      if (specs::IsTerminal(r.state)) r.ended = job.end_time;
      if (r.state == AppState::kFailed) r.reason = job.message.substr(0, job.message.find('\n'));
      out.push_back(std::move(r));
    }
    return out;
  }

  Status Delete(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto parts, ParseRayAppId(app_id));
    RayClient client = Client(parts.first);
    // Ray answers a DELETE of a live job with a 500 and its traceback: ask first.
    TORCHX_ASSIGN_OR_RETURN(auto job, client.Job(parts.second));
    if (!job) {
      std::error_code ec;
      if (std::filesystem::remove(RecordPath(parts.first, parts.second), ec)) return OkStatus();  // a lost job
      return NotFoundError(fmt::format("ray: no job {} on http://{}", parts.second, parts.first));
    }
    if (!specs::IsTerminal(RayJobState(job->status))) {
      return FailedPreconditionError(
          fmt::format("ray: job {} is {}, not terminal: cancel it first", parts.second, job->status));
    }
    // A job just stopped may still be ending on Ray's side (`deleted: false`): asked again for a while.
    for (int attempt = 0;; ++attempt) {
      TORCHX_ASSIGN_OR_RETURN(bool deleted, client.Delete(parts.second));
      if (deleted) break;
      if (attempt == 40) {
        return UnavailableError(
            fmt::format("ray: job {} was not deleted (Ray answered deleted: false for 20 s)", parts.second));
      }
      clock_->SleepFor(std::chrono::milliseconds(500));
    }
    // Ray's dashboard can still answer for a job for a moment after deleting it, and its job
    // monitor, finding a just-stopped job's supervisor actor dead and no record left, writes the
    // job again as FAILED ("Job supervisor actor died"): seen 0.5-1.2 s after the delete on Ray
    // 2.x (the monitor looks once a second). `delete` returns once the job has stayed gone for
    // 2 s, deleting a record that came back, so that a `status` right after finds nothing.
    constexpr int kGoneChecks = 8;  // 250 ms apart
    int gone = 0;
    for (int attempt = 0; attempt < 80 && gone < kGoneChecks; ++attempt) {
      TORCHX_ASSIGN_OR_RETURN(auto still, client.Job(parts.second));
      if (!still) {
        ++gone;
      } else {
        if (gone > 0) (void)client.Delete(parts.second);  // written again after it was gone
        gone = 0;
      }
      if (gone < kGoneChecks) clock_->SleepFor(std::chrono::milliseconds(250));
    }
    if (gone == 0) {
      return UnavailableError(
          fmt::format("ray: job {} was deleted but Ray still answers for it after 20 s", parts.second));
    }
    Forget(parts.first, parts.second);
    return OkStatus();
  }

  Result<std::optional<FailureReport>> ClassifyFailure(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto view, View(app_id));
    if (!view) return std::optional<FailureReport>();
    if (view->state != AppState::kFailed && view->state != AppState::kCancelled) {
      return FailedPreconditionError(
          fmt::format("ray: app {} is {}: it has no failure cause", app_id, specs::AppStateName(view->state)));
    }
    return std::optional<FailureReport>(
        ClassifyRayFailure(view->job.status, view->job.error_type, view->job.message, view->gang));
  }

  Result<std::unique_ptr<LogIterator>> LogIter(const std::string& app_id, const LogOptions& o) override {
    TORCHX_ASSIGN_OR_RETURN(auto view, View(app_id));
    if (!view) return NotFoundError(fmt::format("ray: no app {}", app_id));
    if (view->app) {
      bool known = false;
      for (const specs::Role& role : view->app->roles) known |= role.name == o.role && o.replica < role.num_replicas;
      if (!known) return NotFoundError(fmt::format("ray: {} has no replica {}/{}", app_id, o.role, o.replica));
    }
    RayClient client = Client(view->address);
    std::string sid = view->job.submission_id;
    if (!o.follow) {
      std::vector<std::string> lines;
      auto decoder = MakeReplicaLineDecoder(o.role, o.replica, o.stream);
      decoder->Feed(view->logs, lines);
      decoder->Flush(lines);
      return MakeLinesIterator(std::move(lines));
    }
    // Following: the log is read whole each time (the REST call has no offset) and what is new handed on, until
    // the job has ended and its log was read once more after that.
    auto producer = [client, sid, clock = clock_](const std::function<bool(std::string_view)>& on_data) -> Status {
      size_t offset = 0;
      while (true) {
        TORCHX_ASSIGN_OR_RETURN(auto job, client.Job(sid));
        bool ended = !job || specs::IsTerminal(RayJobState(job->status));
        TORCHX_ASSIGN_OR_RETURN(auto logs, client.Logs(sid));
        if (!logs) return OkStatus();
        if (logs->size() > offset) {
          if (!on_data(std::string_view(*logs).substr(offset))) return OkStatus();
          offset = logs->size();
        } else if (!on_data({})) {
          return OkStatus();  // the reader is gone: stop polling a quiet job
        }
        if (ended) return OkStatus();
        clock->SleepFor(kFollowPoll);
      }
    };
    return MakeStreamedLinesIterator(producer, MakeReplicaLineDecoder(o.role, o.replica, o.stream), nullptr);
  }

 protected:
  Result<DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    RayOptions options;
    if (!cfg.Str("cluster_config_file")) {
      TORCHX_ASSIGN_OR_RETURN(options.address, NormalizeAddress(cfg.Str("dashboard_address").value_or(DefaultAddress()),
                                                                "dashboard_address"));
    }
    options.requirements = cfg.Str("requirements");
    options.placement_strategy = cfg.Str("placement_strategy").value_or("SPREAD");
    int64_t reschedule = cfg.Int("reschedule_timeout").value_or(120);
    if (reschedule < 1 || reschedule > 7 * 24 * 3600) {
      return InvalidArgumentError(fmt::format(
          "ray: reschedule_timeout `{}` must be a number of seconds from 1 to 604800 (a week)", reschedule));
    }
    options.reschedule_timeout_s = static_cast<int>(reschedule);
    std::string sid = specs::MakeUnique(specs::NormalizeName(app.name));
    TORCHX_ASSIGN_OR_RETURN(RayRequest req, BuildRayRequest(app, options, sid, session_name()));
    req.cluster_config_file = cfg.Str("cluster_config_file").value_or("");
    req.cluster_name = cfg.Str("cluster_name").value_or("");
    DryRunInfo info;
    info.app = app;
    // With a cluster config the head's address (and so the id's first part) is learnt at submission.
    info.app_id = options.address.empty() ? sid : RayAppId(options.address, sid);
    info.app_id_is_final = !options.address.empty();
    info.request = RayRequestText(req);
    info.payload = RayRequestToJson(req);
    return info;
  }

  Status DoCancel(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto parts, ParseRayAppId(app_id));
    return Client(parts.first).Stop(parts.second);
  }

 private:
  // What one look at a job gives: Ray's details, its log, the gang's status in it, the app.
  struct JobView {
    std::string address;
    RayJob job;
    std::string logs;
    GangStatus gang;
    AppState state = AppState::kUnknown;
    std::optional<specs::AppDef> app;
  };

  Result<std::optional<JobView>> View(const std::string& app_id) {
    TORCHX_ASSIGN_OR_RETURN(auto parts, ParseRayAppId(app_id));
    RayClient client = Client(parts.first);
    TORCHX_ASSIGN_OR_RETURN(auto job, client.Job(parts.second));
    if (!job) return LostJob(client, parts.first, parts.second);
    JobView v;
    v.address = parts.first;
    v.job = std::move(*job);
    // The log is read from the driver's node, which may be unreachable while Ray still knows the job:
    // then Ray's status alone.
    auto logs = client.Logs(parts.second);
    if (logs.ok() && *logs) v.logs = std::move(**logs);
    v.gang = ReadGangStatus(v.logs);
    v.state = RayJobState(v.job.status);
    // Ray runs the driver while the placement group waits for room: the gang is pending until it starts.
    if (logs.ok() && v.state == AppState::kRunning &&
        (v.gang.phase == GangPhase::kNone || v.gang.phase == GangPhase::kPending)) {
      v.state = AppState::kPending;
    }
    if (auto it = v.job.metadata.find(std::string(kMetadataApp)); it != v.job.metadata.end()) {
      if (auto app = specs::AppDefFromJson(it->second); app.ok()) v.app = std::move(*app);
    }
    return std::optional<JobView>(std::move(v));
  }

  // A job Ray does not know: unknown, unless this launcher submitted it (its record is here). Then
  // Ray lost it (its head restarted without GCS fault tolerance, or someone deleted it outside
  // torchx): FAILED, saying which.
  Result<std::optional<JobView>> LostJob(const RayClient& client, const std::string& address,
                                         const std::string& sid) const {
    std::ifstream in(RecordPath(address, sid));
    if (!in) return std::optional<JobView>();
    std::string session((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    TORCHX_ASSIGN_OR_RETURN(RayClient::Version now, client.RayVersion());
    JobView v;
    v.address = address;
    v.job.submission_id = sid;
    v.job.status = "FAILED";
    v.job.error_type = std::string(kJobLost);
    v.job.message =
        session != now.session_name
            ? fmt::format("Ray no longer knows job {}: the cluster at http://{} restarted (its session was {}, now {})",
                          sid, address, session, now.session_name)
            : fmt::format("Ray no longer knows job {}: it was deleted outside torchx", sid);
    v.state = AppState::kFailed;
    return std::optional<JobView>(std::move(v));
  }

  std::string RecordPath(const std::string& address, const std::string& sid) const {
    std::string dir = address;
    for (char& c : dir) {
      if (c == ':' || c == '/') c = '_';
    }
    return (std::filesystem::path(internal::DefaultStateDir()) / "ray" / dir / sid).string();
  }

  // Best effort: without the record a lost job reads as unknown, which is what it was before.
  void Remember(const std::string& address, const std::string& sid, const std::string& session) const {
    std::filesystem::path path = RecordPath(address, sid);
    if (!internal::CreatePrivateDirs(path.parent_path().string())) return;
    std::ofstream(path) << session;
  }

  void Forget(const std::string& address, const std::string& sid) const {
    std::error_code ec;
    std::filesystem::remove(RecordPath(address, sid), ec);
  }

  static std::string Message(const JobView& v) {
    const GangStatus& g = v.gang;
    if (v.state == AppState::kFailed && g.phase == GangPhase::kFailed && g.failed_replica) {
      std::string msg =
          g.failed_exit_code
              ? fmt::format("{}/{} exited with code {}", g.failed_role, *g.failed_replica, *g.failed_exit_code)
              : fmt::format("{}/{} {}", g.failed_role, *g.failed_replica,
                            g.failure_cause == "node_failure" ? "lost its Ray node" : "could not start");
      for (const std::string& line : g.stderr_tail) msg += "\n" + line;
      return msg;
    }
    if (specs::IsTerminal(v.state) && v.state != AppState::kSucceeded) return ReadableLog(v.job.message);
    return "";
  }

  // The address and the running replicas of the app that `role`/`replica` pick, with their
  // pids; nullopt for an unknown app; kFailedPrecondition for one that has ended or has none running.
  Result<std::optional<std::pair<std::string, std::vector<ReplicaPlace>>>> RunningPlaces(const std::string& app_id,
                                                                                         const std::string& role,
                                                                                         std::optional<int> replica,
                                                                                         std::string_view what) {
    TORCHX_ASSIGN_OR_RETURN(auto view, View(app_id));
    using Out = std::pair<std::string, std::vector<ReplicaPlace>>;
    if (!view) return std::optional<Out>();
    if (specs::IsTerminal(view->state)) {
      return FailedPreconditionError(fmt::format("app {} has ended ({}): it has no process to {}", app_id,
                                                 specs::AppStateName(view->state), what));
    }
    Out out{view->address, {}};
    std::string names;
    for (const ReplicaPlace& p : view->gang.replicas) {
      names += fmt::format("{}{}/{}", names.empty() ? "" : ", ", p.role, p.replica);
      if (!role.empty() && p.role != role) continue;
      if (replica && p.replica != *replica) continue;
      if (p.exit_code || !p.pid || p.node_id.empty()) continue;
      out.second.push_back(p);
    }
    if (out.second.empty()) {
      return FailedPreconditionError(
          fmt::format("no replica of app {} that matches is running (replicas: {}; app {}{})", app_id,
                      names.empty() ? "none placed yet" : names, specs::AppStateName(view->state),
                      view->gang.replicas.empty() || view->gang.replicas.front().pid
                          ? ""
                          : "; its gang driver predates stack dumps (it reports no pids): submit it again"));
    }
    return std::optional<Out>(std::move(out));
  }

  static const ReplicaPlace* Place(const GangStatus& g, const std::string& role, int replica) {
    for (const ReplicaPlace& p : g.replicas) {
      if (p.role == role && p.replica == replica) return &p;
    }
    return nullptr;
  }

  std::optional<std::string> Env(const char* name) const {
    if (env_) return env_(name);
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::optional<std::string>(v) : std::nullopt;
  }

  // RAY_ADDRESS where set (as Ray's own clients read it), else the local dashboard.
  std::string DefaultAddress() const { return Env("RAY_ADDRESS").value_or(kDefaultAddress); }

  RayClient Client(const std::string& address) const {
    return RayClient(http_, address, Env("RAY_AUTH_TOKEN").value_or(""));
  }

  // cluster_config_file: the head's address from Ray's own tooling, with the dashboard's default port.
  Result<std::string> HeadAddress(const RayRequest& req) const {
    std::vector<std::string> argv = {"ray", "get-head-ip", req.cluster_config_file};
    if (!req.cluster_name.empty()) argv.insert(argv.end(), {"--cluster-name", req.cluster_name});
    auto res = commands_->Run(argv, "", std::chrono::seconds(120));
    if (!res.ok()) {
      return FailedPreconditionError(
          fmt::format("ray: cluster_config_file needs Ray's `ray` command to find the head ({}); install ray, or pass "
                      "dashboard_address",
                      res.status().message()));
    }
    if (res->exit_code != 0) {
      return FailedPreconditionError(
          fmt::format("ray: `ray get-head-ip` failed (exit {}): {}", res->exit_code, internal::Excerpt(res->err)));
    }
    std::string ip = res->out;
    ip.erase(0, ip.find_first_not_of(" \t\r\n"));
    ip = ip.substr(0, ip.find_first_of(" \t\r\n"));
    if (ip.empty()) return FailedPreconditionError("ray: `ray get-head-ip` printed no address");
    return ip + ":8265";
  }

  // Uploads the package unless the cluster has it (`ask_first`: else it is sent at once); its URI.
  static Result<std::string> Upload(const RayClient& client, std::vector<PackageFile> files, bool ask_first = true) {
    TORCHX_ASSIGN_OR_RETURN(std::string zip, ZipPackage(std::move(files)));
    std::string uri = PackageUri(zip);
    bool has = false;
    if (ask_first) {
      TORCHX_ASSIGN_OR_RETURN(has, client.HasPackage(PackageName(uri)));
    }
    if (!has) TORCHX_RETURN_IF_ERROR(client.UploadPackage(PackageName(uri), zip));
    return uri;
  }

  std::shared_ptr<internal::HttpClient> http_;
  std::shared_ptr<internal::CommandRunner> commands_;
  EnvReader env_;
  std::shared_ptr<const Clock> clock_;
};

}  // namespace

std::unique_ptr<Scheduler> MakeRayScheduler(const std::string& session_name, std::shared_ptr<internal::HttpClient> http,
                                            std::shared_ptr<internal::CommandRunner> commands, EnvReader env,
                                            std::shared_ptr<const Clock> clock) {
  if (!clock) clock = std::make_shared<SystemClock>();
  return std::make_unique<RayScheduler>(session_name, std::move(http), std::move(commands), std::move(env),
                                        std::move(clock));
}

std::vector<SchedulerEntry> BackendSchedulers() {
  return {{"ray", [](const SchedulerContext& context) -> Result<std::unique_ptr<Scheduler>> {
             return MakeRayScheduler(context.session_name, internal::MakeCurlHttpClient(),
                                     internal::MakeSystemCommandRunner(), nullptr, context.clock);
           }}};
}

}  // namespace torchx::schedulers::ray
