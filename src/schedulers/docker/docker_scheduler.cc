#include "schedulers/docker/docker_scheduler.h"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "container_engine/engine_client.h"
#include "container_engine/workspace_image.h"
#include "core/json_view.h"
#include "schedulers/docker/container_end.h"
#include "schedulers/docker/docker_request.h"
#include "schedulers/streamed_lines.h"
#include "torchx/specs/app_id.h"
#include "torchx/specs/macros.h"
#include "torchx/specs/serialize.h"
#include "torchx/version.h"

extern char** environ;

namespace torchx::schedulers::docker {
namespace {

using Json = nlohmann::json;
// Between the two stats readings a CPU rate is taken over (docker stats waits a second for its own).
constexpr std::chrono::milliseconds kStatsGap(500);
using container_engine::BuildWorkspaceImage;
using container_engine::EngineClient;
using internal::JsonView;
using internal::UrlEncode;
using specs::AppState;

constexpr const char* kLabelVersion = "torchx.pytorch.org/version";
constexpr const char* kLabelAppId = "torchx.pytorch.org/app-id";
constexpr const char* kLabelRole = "torchx.pytorch.org/role-name";
constexpr const char* kLabelReplica = "torchx.pytorch.org/replica-id";
constexpr const char* kCancelledSuffix = "-cancelled";

// TorchX's container name: <last 30 of app_id>-<first 30 of role>-<i>, no leading non-alnum.
std::string ContainerName(const std::string& app_id, const std::string& role, int i) {
  std::string a = app_id.size() > 30 ? app_id.substr(app_id.size() - 30) : app_id;
  std::string name = fmt::format("{}-{}-{}", a, role.substr(0, 30), i);
  size_t start = 0;
  while (start < name.size() && !std::isalnum(static_cast<unsigned char>(name[start]))) ++start;
  return name.substr(start);
}

// Resource.devices as engine device entries (TorchX's devices.py: EFA and Neuron).
Json DeviceEntry(const std::string& path, const std::string& permissions) {
  return {{"PathOnHost", path}, {"PathInContainer", path}, {"CgroupPermissions", permissions}};
}

void AddResourceDevices(const std::map<std::string, int>& devices, Json& out) {
  for (const specs::DeviceMount& d : specs::DeviceMountsFor(devices))
    out.push_back(DeviceEntry(d.src_path, d.permissions));
}

// The replica-id label of a container (0 when someone else's container carries a bad one).
int ReplicaIdOf(const JsonView& labels) {
  std::string v = labels[kLabelReplica].Str("0");
  int id = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), id);
  return ec == std::errc() && p == v.data() + v.size() ? id : 0;
}

AppState ContainerState(const std::string& state, int64_t exit_code) {
  if (state == "created" || state == "configured") return AppState::kSubmitted;
  if (state == "restarting" || state == "paused" || state == "removing") return AppState::kPending;
  if (state == "running") return AppState::kRunning;
  if (state == "exited" || state == "stopped") return exit_code == 0 ? AppState::kSucceeded : AppState::kFailed;
  return state == "dead" ? AppState::kFailed : AppState::kUnknown;
}

// Splits the engine's multiplexed log stream (8-byte frame headers: stream 1|2, 0, 0, 0, size
// big-endian) into lines of the wanted streams, across arbitrary chunk boundaries.
class FrameDemuxer : public LineDecoder {
 public:
  explicit FrameDemuxer(LogStream want) : want_(want) {}
  void Feed(std::string_view d, std::vector<std::string>& lines) override {
    buf_.append(d);
    size_t pos = 0;
    while (pos + 8 <= buf_.size()) {
      auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(buf_[pos + i])); };
      size_t size = (byte(4) << 24) | (byte(5) << 16) | (byte(6) << 8) | byte(7);
      if (pos + 8 + size > buf_.size()) break;
      size_t kind = byte(0);
      bool keep = want_ == LogStream::kCombined || (want_ == LogStream::kStdout && kind == 1) ||
                  (want_ == LogStream::kStderr && kind == 2);
      if (keep) lines_->Feed(std::string_view(buf_).substr(pos + 8, size), lines);
      pos += 8 + size;
    }
    buf_.erase(0, pos);
  }
  void Flush(std::vector<std::string>& lines) override { lines_->Flush(lines); }

 private:
  LogStream want_;
  std::string buf_;
  std::unique_ptr<LineDecoder> lines_ = MakeNewlineDecoder();
};

class DockerScheduler : public Scheduler {
 public:
  DockerScheduler(std::string session, EngineClient client, std::shared_ptr<const Clock> clock)
      : Scheduler("local_docker", std::move(session)), client_(std::move(client)), clock_(std::move(clock)) {}

  specs::RunOpts run_opts() const override {
    specs::RunOpts o;
    (void)o.Add("copy_env", specs::CfgType::kListStr,
                "list of glob patterns of environment variables to copy if not set in AppDef. Ex: FOO_*");
    (void)o.Add("env", specs::CfgType::kDictStr,
                "environment variables to be passed to the run. The separator sign can be eiher comma or "
                "semicolon (e.g. ENV1:v1,ENV2:v2,ENV3:v3 or ENV1:V1;ENV2:V2). Environment variables from env will be "
                "applied on top of the ones from copy_env");
    (void)o.Add("privileged", specs::CfgType::kBool, "If true runs the container with elevated permissions.", false);
    (void)o.Add("image_repo", specs::CfgType::kStr,
                "(remote jobs) the image repository to use when pushing patched images");
    (void)o.Add("quiet", specs::CfgType::kBool, "whether to suppress verbose output for image building", false);
    return o;
  }
  // Its state is in its engine (or on disk): a thread may have an instance of its own.
  bool instance_per_thread() const override { return true; }
  Capabilities capabilities() const override {
    return {Capability::kLogs,
            Capability::kFollowLogs,
            Capability::kLogTimestamps,
            Capability::kList,
            Capability::kDelete,
            Capability::kWorkspace,
            Capability::kDescribeNative,
            Capability::kResourceUsage,
            Capability::kFailureClassification,
            Capability::kInterruptCancels,
            Capability::kHosts};
  }

  // The engine's host (GET /info: its name, CPUs, memory, state), with the running containers of
  // torchx's apps on it: one host, the one the engine runs containers on.
  Result<std::vector<HostInfo>> Hosts() override {
    TORCHX_ASSIGN_OR_RETURN(auto resp, client_.Request("GET", "/info"));
    if (resp.status >= 300) {
      return UnavailableError(
          fmt::format("local_docker: engine info: HTTP {}: {}", resp.status, internal::Excerpt(resp.body)));
    }
    JsonView info = JsonView::Parse(resp.body);
    if (!info.IsObject()) return UnavailableError("local_docker: engine info: the answer is no JSON object");
    HostInfo h;
    h.name = info["Name"].Str("engine");
    h.address = "127.0.0.1";
    h.state = "up";
    h.groups.push_back(info["OperatingSystem"].Str());
    h.cpus = static_cast<double>(info["NCPU"].Int(0));
    h.memory_mb = info["MemTotal"].Int(0) / (1024 * 1024);
    TORCHX_ASSIGN_OR_RETURN(std::vector<JsonView> containers, Containers(""));
    for (const JsonView& c : containers) {
      if (c["State"].Str() != "running") continue;
      JsonView labels = c["Labels"];
      std::string id = labels[kLabelAppId].Str();
      auto app = std::find_if(h.apps.begin(), h.apps.end(), [&](const HostApp& a) { return a.app_id == id; });
      if (app == h.apps.end()) app = h.apps.insert(h.apps.end(), HostApp{id, "", {}});
      app->where.push_back(fmt::format("{}/{}", labels[kLabelRole].Str(), ReplicaIdOf(labels)));
    }
    return std::vector<HostInfo>{std::move(h)};
  }

  // Each replica's container as the engine's inspect says it ended: ClassifyContainerEnds.
  Result<std::optional<FailureReport>> ClassifyFailure(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(auto d, Describe(app_id));
    if (!d) return std::optional<FailureReport>();
    if (d->state != AppState::kFailed && d->state != AppState::kCancelled) {
      return FailedPreconditionError(
          fmt::format("local_docker: app {} is {}: it has no failure cause", app_id, specs::AppStateName(d->state)));
    }
    TORCHX_ASSIGN_OR_RETURN(std::vector<JsonView> containers, Containers(app_id));
    std::vector<ContainerEnd> ends;
    for (const JsonView& c : containers) {
      TORCHX_ASSIGN_OR_RETURN(auto inspect,
                              client_.Request("GET", "/containers/" + UrlEncode(c["Id"].Str()) + "/json"));
      if (inspect.status == 404) continue;
      JsonView st = JsonView::Parse(inspect.body)["State"];
      JsonView labels = c["Labels"];
      ends.push_back({fmt::format("{}/{}", labels[kLabelRole].Str(), ReplicaIdOf(labels)), st["ExitCode"].Int(0),
                      st["OOMKilled"].Bool(), IsCancelled(c), st["Error"].Str()});
    }
    return std::optional(ClassifyContainerEnds(ends));
  }

  // container_state: TorchX's DockerScheduler._get_app_state, for the Python class (the same table
  // Describe uses): {"status", "exit_code"} -> the AppState's int.
  Result<std::string> Helper(std::string_view function, std::string_view args_json) override {
    if (function != "container_state") {
      return NotFoundError(
          fmt::format("scheduler local_docker has no helper `{}`; helpers: container_state", function));
    }
    nlohmann::json args = nlohmann::json::parse(args_json, nullptr, false);
    if (!args.is_object() || !args.contains("status") || !args["status"].is_string()) {
      return InvalidArgumentError("local_docker container_state: want {\"status\": str, \"exit_code\": int}");
    }
    int64_t exit_code =
        args.value("exit_code", nlohmann::json(0)).is_number_integer() ? args["exit_code"].get<int64_t>() : 0;
    return nlohmann::json(static_cast<int>(ContainerState(args["status"].get<std::string>(), exit_code))).dump();
  }

  // One reading now from the engine's stats API (it keeps no history): two one-shot readings of
  // every running container, kStatsGap apart, give its CPU rate; memory is the engine's usage less
  // the reclaimable page cache, as `docker stats` shows it. The engine reports no GPU figures.
  Result<std::optional<AppUsage>> ResourceUsage(const std::string& app_id, const UsageOptions&) override {
    TORCHX_ASSIGN_OR_RETURN(std::vector<JsonView> containers, Containers(app_id));
    if (containers.empty()) return std::optional<AppUsage>();
    struct Reading {
      ReplicaUsage usage;
      std::string id;
      bool running = false;
      std::optional<uint64_t> cpu_ns;
      std::chrono::steady_clock::time_point at;
    };
    std::vector<Reading> readings;
    for (const JsonView& c : containers) {
      JsonView labels = c["Labels"];
      Reading r;
      r.usage.role = labels[kLabelRole].Str();
      r.usage.replica_id = ReplicaIdOf(labels);
      r.usage.host = ContainerName(app_id, r.usage.role, r.usage.replica_id);
      r.id = c["Id"].Str();
      r.running = c["State"].Str() == "running";
      readings.push_back(std::move(r));
    }
    std::sort(readings.begin(), readings.end(), [](const Reading& a, const Reading& b) {
      return std::tie(a.usage.role, a.usage.replica_id) < std::tie(b.usage.role, b.usage.replica_id);
    });
    auto stats = [&](const std::string& id) -> Result<JsonView> {
      TORCHX_ASSIGN_OR_RETURN(
          auto resp, client_.Request("GET", "/containers/" + UrlEncode(id) + "/stats?stream=false&one-shot=true"));
      if (resp.status == 404 || resp.status == 409) return JsonView();  // gone, or stopped since it was listed
      if (resp.status >= 300) {
        return UnavailableError(
            fmt::format("local_docker: stats of {}: HTTP {}: {}", id, resp.status, internal::Excerpt(resp.body)));
      }
      return JsonView::Parse(resp.body);
    };
    auto cpu_ns = [](const JsonView& j) -> std::optional<uint64_t> {
      JsonView total = j["cpu_stats"]["cpu_usage"]["total_usage"];
      if (!total.Exists()) return std::nullopt;
      return static_cast<uint64_t>(total.Int(0));
    };
    for (Reading& r : readings) {
      if (!r.running) continue;
      TORCHX_ASSIGN_OR_RETURN(JsonView first, stats(r.id));
      r.cpu_ns = cpu_ns(first);
      r.at = clock_->Now();
    }
    clock_->SleepFor(kStatsGap);
    double now = clock_->EpochSeconds();
    for (Reading& r : readings) {
      if (!r.running) continue;
      TORCHX_ASSIGN_OR_RETURN(JsonView second, stats(r.id));
      if (!second.IsObject()) continue;
      UsageSample s;
      s.time = now;
      auto elapsed = std::chrono::duration<double>(clock_->Now() - r.at).count();
      if (auto later = cpu_ns(second); later && r.cpu_ns && *later >= *r.cpu_ns && elapsed > 0) {
        s.cpu_percent = static_cast<double>(*later - *r.cpu_ns) / 1e9 / elapsed * 100.0;
      }
      JsonView mem = second["memory_stats"];
      if (mem["usage"].Exists()) {
        int64_t usage = mem["usage"].Int(0);
        // cgroup v2 names the page cache inactive_file; v1 total_inactive_file (docker's CLI formula).
        int64_t cache = mem["stats"]["inactive_file"].Int(mem["stats"]["total_inactive_file"].Int(0));
        s.rss_bytes = std::max<int64_t>(0, usage - (cache < usage ? cache : 0));
      }
      if (second["pids_stats"]["current"].Exists())
        s.processes = static_cast<int>(second["pids_stats"]["current"].Int(0));
      r.usage.samples.push_back(std::move(s));
    }
    AppUsage usage;
    usage.gpu_note = "the container engine's stats have no GPU figures";
    usage.note = "read now from the engine's stats API (the engine keeps no history)";
    for (Reading& r : readings) usage.replicas.push_back(std::move(r.usage));
    return std::optional<AppUsage>(std::move(usage));
  }

  // Each container's create body as the engine holds it now (its inspected Config, with the
  // HostConfig the engine applied), in the request's form.
  Result<std::optional<DryRunInfo>> DescribeNative(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(std::vector<JsonView> containers, Containers(app_id));
    if (containers.empty()) return std::optional<DryRunInfo>();
    DockerRequest request{app_id, {}};
    std::string printable;
    for (const JsonView& c : containers) {
      TORCHX_ASSIGN_OR_RETURN(auto inspect,
                              client_.Request("GET", "/containers/" + UrlEncode(c["Id"].Str()) + "/json"));
      if (inspect.status == 404) continue;  // removed since it was listed
      if (inspect.status >= 300) {
        return UnavailableError(fmt::format("local_docker: inspect {}: HTTP {}: {}", c["Id"].Str(), inspect.status,
                                            internal::Excerpt(inspect.body)));
      }
      nlohmann::json info = nlohmann::json::parse(inspect.body, nullptr, false);
      if (!info.is_object() || !info["Config"].is_object()) continue;
      nlohmann::json body = info["Config"];
      body["HostConfig"] = info.value("HostConfig", nlohmann::json::object());
      std::string name = info.value("Name", "");
      if (!name.empty() && name[0] == '/') name.erase(0, 1);
      std::string config = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      printable += fmt::format("{}:\n{}\n", name, body.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
      request.containers.push_back({name, std::move(config)});
    }
    if (request.containers.empty()) return std::optional<DryRunInfo>();
    DryRunInfo out;
    out.app_id = app_id;
    out.request = std::move(printable);
    out.payload = DockerRequestToJson(request);
    return std::optional<DryRunInfo>(std::move(out));
  }

  Result<std::string> Schedule(const DryRunInfo& info) override {
    TORCHX_ASSIGN_OR_RETURN(DockerRequest req, DockerRequestFromJson(info.payload));
    for (const DockerContainerRequest& c : req.containers) {
      TORCHX_ASSIGN_OR_RETURN(auto created,
                              client_.Request("POST", "/containers/create?name=" + UrlEncode(c.name), c.config_json));
      if (created.status == 404) {
        std::string image = JsonView::Parse(c.config_json)["Image"].Str();
        return FailedPreconditionError(fmt::format(
            "local_docker: image `{}` is not on this engine ({}); no registry is pulled from: build or import it first",
            image, client_.socket_path()));
      }
      if (created.status >= 300) {
        return UnavailableError(
            fmt::format("local_docker: create {}: HTTP {}: {}", c.name, created.status, created.body));
      }
      JsonView answer = JsonView::Parse(created.body);
      if (!answer.IsObject()) {
        return UnavailableError(
            fmt::format("local_docker: create {}: the engine answered HTTP {} with no JSON object: {}", c.name,
                        created.status, internal::Excerpt(created.body)));
      }
      std::string id = answer["Id"].Str(c.name);
      TORCHX_ASSIGN_OR_RETURN(auto started, client_.Request("POST", "/containers/" + UrlEncode(id) + "/start"));
      if (started.status >= 300) {
        return UnavailableError(
            fmt::format("local_docker: start {}: HTTP {}: {}", c.name, started.status, started.body));
      }
    }
    return req.app_id;
  }

  Result<std::optional<DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(std::vector<JsonView> containers, Containers(app_id));
    if (containers.empty()) return std::optional<DescribeAppResponse>();
    DescribeAppResponse d;
    d.app_id = app_id;
    std::map<std::string, std::vector<specs::ReplicaStatus>> roles;
    bool all_terminal = true, all_ok = true, cancelled = false;
    std::optional<AppState> first_live;
    std::map<std::pair<std::string, int>, std::string> failures;  // why each failed replica ended
    for (const JsonView& c : containers) {
      TORCHX_ASSIGN_OR_RETURN(auto inspect,
                              client_.Request("GET", "/containers/" + UrlEncode(c["Id"].Str()) + "/json"));
      if (inspect.status == 404) continue;  // removed since it was listed (a delete from elsewhere)
      JsonView info = JsonView::Parse(inspect.body);
      JsonView st = info["State"];
      int64_t exit_code = st["ExitCode"].Int(1);
      AppState s = ContainerState(st["Status"].Str(c["State"].Str()), exit_code);
      JsonView labels = c["Labels"];
      bool this_cancelled = IsCancelled(c);
      cancelled |= this_cancelled;
      int restarts = static_cast<int>(info["RestartCount"].Int(0));
      d.num_restarts = std::max(d.num_restarts, restarts);
      // Between an exit and its restart an engine may report "exited" (podman does): a failed
      // container with restarts left is still pending.
      if (s == AppState::kFailed && !this_cancelled && info.IsObject()) {
        JsonView policy = info["HostConfig"]["RestartPolicy"];
        if (policy["Name"].Str() == "on-failure" && restarts < policy["MaximumRetryCount"].Int(0)) {
          s = AppState::kPending;
        }
      }
      specs::ReplicaStatus r;
      r.role = labels[kLabelRole].Str();
      r.id = ReplicaIdOf(labels);
      r.state = s;
      r.hostname = ContainerName(app_id, r.role, r.id);
      if (s == AppState::kFailed && !this_cancelled) {
        // As local_cwd says it; an engine restart (or `docker kill`) shows as 137.
        failures[{r.role, r.id}] = fmt::format("{}/{} exited with code {}{}", r.role, r.id, exit_code,
                                               st["OOMKilled"].Bool() ? " (out of memory)" : "");
      }
      roles[r.role].push_back(r);
      if (!specs::IsTerminal(s)) {
        all_terminal = false;
        if (!first_live) first_live = s;
      }
      all_ok &= s == AppState::kSucceeded;
    }
    d.num_restarts = std::max(0, d.num_restarts);
    d.state = all_terminal ? (all_ok ? AppState::kSucceeded : (cancelled ? AppState::kCancelled : AppState::kFailed))
                           : *first_live;
    if (d.state == AppState::kFailed && !failures.empty()) d.msg = failures.begin()->second;
    for (auto& [name, reps] : roles) {
      std::sort(reps.begin(), reps.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
      d.roles_statuses.push_back({name, reps});
    }
    return std::optional(std::move(d));
  }

  Result<std::vector<ListAppResponse>> List() override {
    TORCHX_ASSIGN_OR_RETURN(std::vector<JsonView> containers, Containers(""));
    std::vector<ListAppResponse> out;
    std::vector<std::string> seen;
    for (const JsonView& c : containers) {
      std::string id = c["Labels"][kLabelAppId].Str();
      if (id.empty() || std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(id);
      TORCHX_ASSIGN_OR_RETURN(auto d, Describe(id));
      if (!d) continue;
      ListAppResponse r;
      r.app_id = id;
      r.state = d->state;
      out.push_back(std::move(r));
    }
    return out;
  }

  // TorchX's docker workspace: each role's image becomes an image built from the workspace
  // (docker/workspace_image), run locally as it is. Images are never pulled.
  Status BuildWorkspace(const std::string& workspace, specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    bool quiet = cfg.Bool("quiet").value_or(false);
    std::map<std::string, std::string> built;  // base image -> built image id
    for (specs::Role& role : app.roles) {
      if (auto it = built.find(role.image); it == built.end()) {
        TORCHX_ASSIGN_OR_RETURN(std::string id, BuildWorkspaceImage(client_, workspace, role.image, "local_docker",
                                                                    container_engine::BuildLogFor(quiet)));
        built[role.image] = std::move(id);
      }
      role.image = built[role.image];
    }
    return OkStatus();
  }

  Status Delete(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(std::vector<JsonView> containers, Containers(app_id));
    if (containers.empty()) return NotFoundError(fmt::format("local_docker: no app {}", app_id));
    for (const JsonView& c : containers) {
      TORCHX_RETURN_IF_ERROR(
          client_.Request("DELETE", "/containers/" + UrlEncode(c["Id"].Str()) + "?force=1").status());
    }
    return OkStatus();
  }

  Result<std::unique_ptr<LogIterator>> LogIter(const std::string& app_id, const LogOptions& o) override {
    TORCHX_ASSIGN_OR_RETURN(std::vector<JsonView> containers, Containers(app_id));
    for (const JsonView& c : containers) {
      JsonView labels = c["Labels"];
      if (labels[kLabelRole].Str() != o.role || labels[kLabelReplica].Str() != std::to_string(o.replica)) {
        continue;
      }
      std::string path =
          fmt::format("/containers/{}/logs?stdout=1&stderr=1&follow={}", UrlEncode(c["Id"].Str()), o.follow ? 1 : 0);
      if (o.since) path += fmt::format("&since={}", static_cast<long long>(*o.since));
      if (o.until) path += fmt::format("&until={}", static_cast<long long>(*o.until));
      if (o.follow) {
        auto producer = [client = client_, path](const std::function<bool(std::string_view)>& on_data) {
          return client.Stream(path, on_data).status();
        };
        return MakeStreamedLinesIterator(producer, std::make_unique<FrameDemuxer>(o.stream), nullptr);
      }
      std::string raw;
      TORCHX_RETURN_IF_ERROR(client_
                                 .Stream(path,
                                         [&raw](std::string_view d) {
                                           raw.append(d);
                                           return true;
                                         })
                                 .status());
      std::vector<std::string> lines;
      FrameDemuxer demux(o.stream);
      demux.Feed(raw, lines);
      demux.Flush(lines);
      return MakeLinesIterator(std::move(lines));
    }
    return NotFoundError(fmt::format("local_docker: {} has no replica {}/{}", app_id, o.role, o.replica));
  }

 protected:
  Result<DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    std::string app_id = specs::MakeUnique(specs::NormalizeName(app.name));
    std::map<std::string, std::string> base_env;
    if (auto patterns = cfg.List("copy_env")) {
      for (char** e = environ; *e; ++e) {
        std::string kv(*e);
        std::string k = kv.substr(0, kv.find('='));
        for (const auto& p : *patterns) {
          if (fnmatch(p.c_str(), k.c_str(), 0) == 0) base_env[k] = kv.substr(k.size() + 1);
        }
      }
    }
    if (auto env = cfg.Dict("env")) {
      for (const auto& [k, v] : *env) base_env[k] = v;
    }
    bool privileged = cfg.Bool("privileged").value();  // declared with a default
    std::string rank0 = ContainerName(app_id, app.roles.empty() ? "" : app.roles[0].name, 0);
    DockerRequest request{app_id, {}};
    std::string printable;
    for (const specs::Role& role : app.roles) {
      for (int i = 0; i < role.num_replicas; ++i) {
        specs::macros::Values values{"", app_id, std::to_string(i), "TORCHX_RANK0_HOST"};
        specs::Role r = values.Apply(role);
        std::string name = ContainerName(app_id, role.name, i);
        Json env = Json::array();
        std::map<std::string, std::string> merged = base_env;
        for (const auto& [k, v] : r.env) merged[k] = v;
        merged["TORCHX_RANK0_HOST"] = rank0;
        merged["TORCHX_IMAGE"] = r.image;  // as TorchX: the image a replica runs, for tools inside it
        for (const auto& [k, v] : merged) env.push_back(k + "=" + v);
        Json cmd = Json::array({r.entrypoint});
        for (const auto& a : r.args) cmd.push_back(a);
        Json host = {{"NetworkMode", "host"},
                     // Replicas share the host's loopback; rank 0's name resolves there.
                     {"ExtraHosts", Json::array({rank0 + ":127.0.0.1"})},
                     {"Privileged", privileged}};
        if (r.resource.memMB > 0) {
          host["Memory"] = static_cast<long long>(r.resource.memMB) * 1024 * 1024;
          host["ShmSize"] = static_cast<long long>(r.resource.memMB) * 1024 * 1024;
        }
        if (r.resource.cpu > 0) host["NanoCpus"] = static_cast<long long>(r.resource.cpu) * 1000000000LL;
        if (r.resource.gpu > 0) {
          host["DeviceRequests"] = Json::array(
              {{{"Count", r.resource.gpu}, {"Capabilities", Json::array({Json::array({"compute", "utility"})})}}});
        }
        if (role.max_retries > 0) {
          host["RestartPolicy"] = {{"Name", "on-failure"}, {"MaximumRetryCount", role.max_retries}};
        }
        Json mounts = Json::array(), devices = Json::array();
        for (const specs::Mount& m : r.mounts) {
          if (const auto* b = std::get_if<specs::BindMount>(&m)) {
            mounts.push_back(
                {{"Type", "bind"}, {"Source", b->src_path}, {"Target", b->dst_path}, {"ReadOnly", b->read_only}});
          } else if (const auto* v = std::get_if<specs::VolumeMount>(&m)) {
            mounts.push_back(
                {{"Type", "volume"}, {"Source", v->src}, {"Target", v->dst_path}, {"ReadOnly", v->read_only}});
          } else if (const auto* d = std::get_if<specs::DeviceMount>(&m)) {
            devices.push_back(
                {{"PathOnHost", d->src_path}, {"PathInContainer", d->dst_path}, {"CgroupPermissions", d->permissions}});
          }
        }
        AddResourceDevices(r.resource.devices, devices);
        if (!mounts.empty()) host["Mounts"] = mounts;
        if (!devices.empty()) host["Devices"] = devices;
        Json config = {{"Image", r.image},
                       {"Cmd", cmd},
                       {"Env", env},
                       {"Hostname", name},
                       {"Labels",
                        {{kLabelVersion, TORCHX_VERSION_STRING},
                         {kLabelAppId, app_id},
                         {kLabelRole, role.name},
                         {kLabelReplica, std::to_string(i)}}},
                       {"HostConfig", host}};
        request.containers.push_back({name, config.dump(-1, ' ', false, Json::error_handler_t::replace)});
        printable += fmt::format("{}:\n  image: {}\n  cmd: {}\n  env: {}\n", name, r.image,
                                 cmd.dump(-1, ' ', false, Json::error_handler_t::replace),
                                 env.dump(-1, ' ', false, Json::error_handler_t::replace));
      }
    }
    DryRunInfo info;
    info.app = app;
    info.app_id = app_id;
    info.app_id_is_final = true;  // every container is labelled with it (Schedule returns it)
    info.request = printable;
    info.payload = DockerRequestToJson(request);
    return info;
  }

  Status DoCancel(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(std::vector<JsonView> containers, Containers(app_id));
    for (const JsonView& c : containers) {
      std::string id = UrlEncode(c["Id"].Str());
      if (IsCancelled(c)) continue;
      // Labels cannot change after creation: a cancelled replica's container is renamed, which
      // every later process can see.
      std::string name = c["Names"][size_t{0}].Str("/" + c["Id"].Str());
      if (!name.empty() && name[0] == '/') name.erase(0, 1);
      (void)client_.Request("POST",
                            fmt::format("/containers/{}/rename?name={}", id, UrlEncode(name + kCancelledSuffix)));
      // Docker restarts an on-failure container that was killed; update the policy first.
      (void)client_.Request("POST", "/containers/" + id + "/update", R"({"RestartPolicy": {"Name": "no"}})");
      TORCHX_RETURN_IF_ERROR(client_.Request("POST", "/containers/" + id + "/stop?t=2", "", 60000).status());
    }
    return OkStatus();
  }

 private:
  static bool IsCancelled(const JsonView& c) {
    for (const JsonView& n : c["Names"].Items()) {
      if (n.Str().ends_with(kCancelledSuffix)) return true;
    }
    return false;
  }

  // The containers of `app_id` (every app's for ""), as the engine lists them: each an object.
  Result<std::vector<JsonView>> Containers(const std::string& app_id) {
    std::string label = app_id.empty() ? std::string(kLabelAppId) : fmt::format("{}={}", kLabelAppId, app_id);
    std::string filters = Json{{"label", Json::array({label})}}.dump();
    std::string path = "/containers/json?all=1&filters=" + UrlEncode(filters);
    TORCHX_ASSIGN_OR_RETURN(auto resp, client_.Request("GET", path));
    // podman answers 500 when a container disappears while it lists (another app being deleted):
    // transient, so ask again a few times.
    for (int attempt = 0; resp.status == 500 && attempt < 5; ++attempt) {
      clock_->SleepFor(std::chrono::milliseconds(100));
      TORCHX_ASSIGN_OR_RETURN(resp, client_.Request("GET", path));
    }
    if (resp.status >= 300) {
      return UnavailableError(fmt::format("local_docker: list containers: HTTP {}: {}", resp.status, resp.body));
    }
    JsonView list = JsonView::Parse(resp.body);
    if (!list.IsArray()) {
      return UnavailableError(
          fmt::format("local_docker: list containers: the engine answered HTTP {} with no JSON "
                      "list: {}",
                      resp.status, internal::Excerpt(resp.body)));
    }
    std::vector<JsonView> out;
    for (JsonView c : list.Items()) {
      if (c.IsObject()) out.push_back(std::move(c));
    }
    return out;
  }

  EngineClient client_;
  std::shared_ptr<const Clock> clock_;
};

}  // namespace

std::unique_ptr<Scheduler> MakeDockerScheduler(const std::string& session_name, EngineClient engine,
                                               std::shared_ptr<const Clock> clock) {
  if (!clock) clock = std::make_shared<SystemClock>();
  return std::make_unique<DockerScheduler>(session_name, std::move(engine), std::move(clock));
}

std::vector<SchedulerEntry> BackendSchedulers() {
  return {{"local_docker", [](const SchedulerContext& context) -> Result<std::unique_ptr<Scheduler>> {
             return MakeDockerScheduler(context.session_name, EngineClient(internal::MakeCurlHttpClient()),
                                        context.clock);
           }}};
}

}  // namespace torchx::schedulers::docker
