#include "schedulers/kubernetes/kubernetes_scheduler.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "container_engine/workspace_image.h"
#include "core/json_view.h"
#include "core/json_yaml.h"
#include "http/http.h"
#include "schedulers/kubernetes/helpers.h"
#include "schedulers/kubernetes/kube_client.h"
#include "schedulers/kubernetes/kubernetes_request.h"
#include "schedulers/kubernetes/log_resume.h"
#include "schedulers/kubernetes/metrics_api.h"
#include "schedulers/kubernetes/node_hosts.h"
#include "schedulers/kubernetes/volcano_job.h"
#include "schedulers/streamed_lines.h"
#include "torchx/specs/app_state.h"
#include "torchx/version.h"

namespace torchx::schedulers::kubernetes {
namespace {

using Json = nlohmann::json;
using specs::AppState;

constexpr const char* kJobsApi = "/apis/batch.volcano.sh/v1alpha1/namespaces/{}/jobs";
constexpr const char* kCommandsApi = "/apis/bus.volcano.sh/v1alpha1/namespaces/{}/commands";

struct JobRef {
  std::string ns, name;
};

Result<JobRef> ParseAppId(const std::string& app_id) {
  auto colon = app_id.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == app_id.size() ||
      app_id.find(':', colon + 1) != std::string::npos) {
    return InvalidArgumentError(fmt::format("kubernetes: app id `{}` is not `<namespace>:<job name>`", app_id));
  }
  return JobRef{app_id.substr(0, colon), app_id.substr(colon + 1)};
}

// Epoch seconds of the RFC 3339 timestamp the API server puts before each log line.
std::optional<double> LineTime(const std::string& line) { return Rfc3339Time(line.substr(0, line.find(' '))); }

// A container of a replica's pod and the prefix of its log lines: none for the replica's own
// (named after its task, as the pod's volcano.sh/task-spec label says), "<name> " for the others
// (sidecars an overlay added), as TorchX prefixes them.
struct PodContainer {
  std::string name;
  std::string prefix;
};

// The pod's containers in its spec's order; empty when the pod cannot be read (the log call then
// goes without a container and reports what is wrong).
std::vector<PodContainer> ContainersOf(const KubeClient& c, const std::string& pod_path) {
  auto resp = c.Call("GET", pod_path);
  if (!resp.ok() || resp->status >= 300) return {};
  internal::JsonView pod = internal::JsonView::Parse(resp->body);
  if (!pod.IsObject()) return {};
  std::string task = pod["metadata"]["labels"][kLabelVolcanoTaskSpec].Str();
  std::vector<PodContainer> out;
  for (const internal::JsonView& ct : pod["spec"]["containers"].Items()) {
    if (!ct["name"].IsString()) continue;
    std::string name = ct["name"].Str();
    bool own = task.empty() ? out.empty() : name == task;
    out.push_back({name, own ? "" : name + " "});
  }
  if (out.size() == 1) out[0].prefix.clear();
  return out;
}

// Whether the container's log can grow no more: the pod Succeeded or Failed, the container (every
// container, for "") terminated, or the pod is gone.
Result<bool> PodDone(const KubeClient& c, const std::string& pod_path, const std::string& container) {
  TORCHX_ASSIGN_OR_RETURN(auto resp, c.Call("GET", pod_path));
  if (resp.status == 404) return true;
  if (resp.status >= 300) return ApiError(resp, "kubernetes: read pod");
  internal::JsonView pod = internal::JsonView::Parse(resp.body);
  if (!pod.IsObject()) return UnavailableError("kubernetes: read pod: the API server's answer is not JSON");
  internal::JsonView status = pod["status"];
  std::string phase = status["phase"].Str();
  if (phase == "Succeeded" || phase == "Failed") return true;
  std::vector<internal::JsonView> containers = status["containerStatuses"].Items();
  if (containers.empty()) return false;
  bool seen = false;
  for (const internal::JsonView& cs : containers) {
    if (!cs.IsObject()) return false;
    if (!container.empty() && cs["name"].Str() != container) continue;
    seen = true;
    if (!cs["state"]["terminated"].Exists()) return false;
  }
  return seen;
}

// `log -t` of one container. A container that has not started has no log yet (HTTP 400 "waiting
// to start"): it is waited for, as `kubectl logs -f` users end up doing by hand. A stream that
// ends while the container still runs (the kubelet or the API server restarted, an idle timeout,
// a dropped connection) is asked for again from the last line's time, the repeated lines dropped.
// Unreachable for longer than an outage Runner::Wait rides out, it is an error.
Status FollowLog(const KubeClient& c, const Clock& clock, const std::string& path, const std::string& since_query,
                 const std::string& pod_path, const std::string& container,
                 const std::function<Status(const HttpResponse&)>& not_found,
                 const std::function<bool(std::string_view)>& on) {
  constexpr auto kOutageLimit = std::chrono::minutes(10);
  LogResume resume;
  std::optional<std::chrono::steady_clock::time_point> failing_since;
  auto backoff = std::chrono::milliseconds(500);
  while (true) {
    bool reader_gone = false;
    auto resp = c.Stream(path + (resume.started() ? resume.SinceQuery() : since_query), [&](std::string_view d) {
      if (!resume.Feed(d, on)) reader_gone = true;
      return !reader_gone;
    });
    if (reader_gone) return OkStatus();
    Status failure = OkStatus();
    if (resp.ok()) {
      if (resp->status == 400 && resp->body.find("waiting to start") != std::string::npos) {
        clock.SleepFor(std::chrono::seconds(1));
        if (!on("")) return OkStatus();  // the reader is gone
        continue;
      }
      if (resp->status == 404) {
        if (!resume.started()) return not_found(*resp);
        resume.Flush(on);  // the pod went away after its log was read: the log ends with it
        return OkStatus();
      }
      if (resp->status >= 300 && resp->status != 429 && resp->status < 500)
        return ApiError(*resp, "kubernetes: follow log");
      if (resp->status >= 300) failure = ApiError(*resp, "kubernetes: follow log");
    } else {
      failure = resp.status();
    }
    if (failure.ok()) {
      // A clean end: the container is done, or the stream was closed under a running one.
      auto done = PodDone(c, pod_path, container);
      if (done.ok() && *done) {
        resume.Flush(on);
        return OkStatus();
      }
      if (!done.ok()) failure = done.status();
    }
    if (failure.ok()) {
      failing_since.reset();
      backoff = std::chrono::milliseconds(500);
    } else {
      if (!failing_since) failing_since = clock.Now();
      if (clock.Now() - *failing_since >= kOutageLimit) return failure;
    }
    clock.SleepFor(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(8000));
    if (!on("")) return OkStatus();
    resume.Restart();
  }
}

class KubernetesScheduler : public Scheduler {
 public:
  KubernetesScheduler(std::string session, std::shared_ptr<internal::HttpClient> http,
                      std::optional<KubeConnection> connection, std::shared_ptr<const Clock> clock)
      : Scheduler("kubernetes", std::move(session)),
        http_(std::move(http)),
        connection_(std::move(connection)),
        clock_(std::move(clock)) {}

  specs::RunOpts run_opts() const override {
    specs::RunOpts o;
    (void)o.Add("namespace", specs::CfgType::kStr, "Kubernetes namespace to schedule job in", std::string("default"));
    (void)o.Add("queue", specs::CfgType::kStr, "Volcano queue to schedule job in", {}, /*required=*/true);
    (void)o.Add("service_account", specs::CfgType::kStr, "The service account name to set on the pod specs");
    (void)o.Add("priority_class", specs::CfgType::kStr, "The name of the PriorityClass to set on the job specs");
    (void)o.Add("image_repo", specs::CfgType::kStr,
                "repository that workspace images are pushed to (push access needed) and the cluster pulls from, "
                "e.g. registry.example.com/team/trainer");
    (void)o.Add("quiet", specs::CfgType::kBool, "whether to suppress verbose output for image building", false);
    // TorchX HEAD validates by default; here a dry run stays offline unless asked (the API server
    // validates the same Job when it is created, before anything runs). docs/compatibility.md.
    (void)o.Add("validate_spec", specs::CfgType::kBool,
                "validate the job with the API server's dry run (dryRun=All) when the dry run is made", false);
    (void)o.Add("reserved_millicpu", specs::CfgType::kInt,
                "CPU (millicores) kept for Kubernetes on each node: pods request this much less than they limit",
                std::int64_t{100});
    (void)o.Add("reserved_memmb", specs::CfgType::kInt,
                "memory (MB) kept for Kubernetes on each node: pods request this much less than they limit",
                std::int64_t{1024});
    (void)o.Add("efa_device_count", specs::CfgType::kInt,
                "vpc.amazonaws.com/efa devices per pod: unset keeps the resource's count, 0 removes them, N sets N");
    (void)o.Add("tolerations", specs::CfgType::kListStr,
                "taints the pods tolerate, each key[:value][:NoSchedule|PreferNoSchedule|NoExecute]");
    (void)o.Add("node_selector", specs::CfgType::kDictStr,
                "node labels the pods must match, label:value (added to the instance-type capability's selector)");
    return o;
  }

  // Its state is in its engine (or on disk): a thread may have an instance of its own.
  bool instance_per_thread() const override { return true; }
  Capabilities capabilities() const override {
    return {Capability::kLogs,           Capability::kFollowLogs,    Capability::kLogTimestamps,
            Capability::kList,           Capability::kDelete,        Capability::kWorkspace,
            Capability::kDescribeNative, Capability::kResourceUsage, Capability::kFailureClassification,
            Capability::kStacks,         Capability::kHosts};
  }
  Result<std::string> Helper(std::string_view function, std::string_view args_json) override {
    return KubernetesHelper(function, args_json);
  }

  Result<std::string> Schedule(const DryRunInfo& info) override {
    TORCHX_ASSIGN_OR_RETURN(KubernetesRequest req, KubernetesRequestFromJson(info.payload));
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());  // before pushing: no push for a job that cannot be sent
    // Workspace images go to the registry first: the cluster's nodes pull them from there.
    for (const std::string& ref : req.push) {
      auto colon = ref.rfind(':');  // the decoder checked `repo:tag`
      TORCHX_RETURN_IF_ERROR(container_engine::PushImage(container_engine::EngineClient(http_), ref.substr(0, colon),
                                                         ref.substr(colon + 1), "kubernetes"));
    }
    const std::string& ns = req.ns;
    std::string name = req.job_name;
    bool maybe_created = false;
    TORCHX_ASSIGN_OR_RETURN(auto resp,
                            c->Create(fmt::format(kJobsApi, internal::UrlEncode(ns)), req.job_json, &maybe_created));
    if (resp.status == 409 && maybe_created) {
      // An earlier attempt reached the server (it timed out, or answered 5xx, after taking the
      // Job): the name is this submission's own (unique, chosen at dry run), so the Job is ours
      // and is not created twice.
      return fmt::format("{}:{}", ns, name);
    }
    if (resp.status == 404) {
      return FailedPreconditionError(fmt::format(
          "kubernetes: {} has no batch.volcano.sh/v1alpha1 jobs in namespace `{}` (is Volcano installed, and does the "
          "namespace exist?): {}",
          c->connection().server, ns, ApiError(resp, "create").message()));
    }
    if (resp.status == 409) {
      return AlreadyExistsError(fmt::format(
          "kubernetes: job `{}` already exists in namespace `{}`; this is transient, resubmit the job", name, ns));
    }
    if (resp.status >= 300) return ApiError(resp, fmt::format("kubernetes: create job {}/{}", ns, name));
    // The server's name for the job (the one asked for, unless it generated one).
    name = internal::JsonView::Parse(resp.body)["metadata"]["name"].Str(name);
    return ns + ":" + name;
  }

  // TorchX's docker workspace for a cluster: each role's image is rebuilt with the workspace by
  // the local container engine and tagged `<image_repo>:<image id>`; Schedule pushes it (a dry
  // run builds but does not push).
  Status BuildWorkspace(const std::string& workspace, specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    std::string repo = cfg.Str("image_repo").value_or("");
    TORCHX_RETURN_IF_ERROR(container_engine::CheckImageRepo(repo, "image_repo", "kubernetes"));
    TORCHX_ASSIGN_OR_RETURN(auto built, container_engine::BuildWorkspaceImagesFor(
                                            container_engine::EngineClient(http_), workspace, repo, app, "kubernetes",
                                            container_engine::BuildLogFor(cfg.Bool("quiet").value_or(false))));
    workspace_images_.insert(built.begin(), built.end());
    return OkStatus();
  }

  // The Volcano Job as the API server holds it now (status, defaults and webhook changes
  // included), in the request's form: nothing to push (that happened at submission).
  Result<std::optional<DryRunInfo>> DescribeNative(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(JobRef ref, ParseAppId(app_id));
    TORCHX_ASSIGN_OR_RETURN(auto job, GetJob(ref));
    if (!job) return std::optional<DryRunInfo>();
    DryRunInfo info;
    info.app_id = app_id;
    info.request = internal::JsonToYaml(*job);
    info.payload = KubernetesRequestToJson(
        KubernetesRequest{ref.ns, job->dump(-1, ' ', false, Json::error_handler_t::replace), ref.name, {}});
    return std::optional<DryRunInfo>(std::move(info));
  }

  Result<std::optional<DescribeAppResponse>> Describe(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(JobRef ref, ParseAppId(app_id));
    TORCHX_ASSIGN_OR_RETURN(auto job, GetJob(ref));
    if (!job) return std::optional<DescribeAppResponse>();
    TORCHX_ASSIGN_OR_RETURN(DescribeAppResponse d, ToDescribe(app_id, *job));
    // The pods say more than Volcano's counts (why a replica waits or failed). Reading them is
    // best effort: an account allowed to read jobs but not pods still gets the job's view.
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    std::string path = fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", internal::UrlEncode(ref.ns),
                                   internal::UrlEncode(std::string(kLabelInstance) + "=" + ref.name));
    if (auto pods = c->Call("GET", path); pods.ok() && pods->status == 200) {
      Json list = Json::parse(pods->body, nullptr, false);
      try {
        if (list.is_object() && list.contains("items") && list["items"].is_array()) ApplyPods(list["items"], d);
      } catch (const Json::exception&) {  // a pod of an odd shape: keep the job's view
      }
    }
    return std::optional(std::move(d));
  }

  // The Job and its pods as the API server holds them: ClassifyVolcanoEnd.
  Result<std::optional<FailureReport>> ClassifyFailure(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(JobRef ref, ParseAppId(app_id));
    TORCHX_ASSIGN_OR_RETURN(auto job, GetJob(ref));
    if (!job) return std::optional<FailureReport>();
    TORCHX_ASSIGN_OR_RETURN(DescribeAppResponse d, ToDescribe(app_id, *job));
    if (d.state != AppState::kFailed && d.state != AppState::kCancelled) {
      return FailedPreconditionError(
          fmt::format("kubernetes: job {} is {}: it has no failure cause", app_id, specs::AppStateName(d.state)));
    }
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    std::string path = fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", internal::UrlEncode(ref.ns),
                                   internal::UrlEncode(std::string(kLabelInstance) + "=" + ref.name));
    Json items = Json::array();
    if (auto pods = c->Call("GET", path); pods.ok() && pods->status == 200) {
      Json list = Json::parse(pods->body, nullptr, false);
      if (list.is_object() && list.contains("items") && list["items"].is_array()) items = list["items"];
    }
    return std::optional(ClassifyVolcanoEnd(*job, items));
  }

  // What metrics-server last scraped of the app's pods (metrics.k8s.io), read when asked: one
  // sample per running replica. A cluster without metrics-server answers 404, said in the note.
  Result<std::optional<AppUsage>> ResourceUsage(const std::string& app_id, const UsageOptions&) override {
    TORCHX_ASSIGN_OR_RETURN(JobRef ref, ParseAppId(app_id));
    TORCHX_ASSIGN_OR_RETURN(auto job, GetJob(ref));
    if (!job) return std::optional<AppUsage>();
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    std::string selector = "?labelSelector=" + internal::UrlEncode(std::string(kLabelInstance) + "=" + ref.name);
    TORCHX_ASSIGN_OR_RETURN(
        auto pods, c->Call("GET", fmt::format("/api/v1/namespaces/{}/pods", internal::UrlEncode(ref.ns)) + selector));
    if (pods.status >= 300) return ApiError(pods, fmt::format("kubernetes: the pods of {}", app_id));
    TORCHX_ASSIGN_OR_RETURN(auto metrics,
                            c->Call("GET", fmt::format(kPodMetricsApi, internal::UrlEncode(ref.ns)) + selector));
    bool no_metrics_api = metrics.status == 404;
    if (metrics.status >= 300 && !no_metrics_api) {
      return ApiError(metrics, fmt::format("kubernetes: the metrics of {}", app_id));
    }
    TORCHX_ASSIGN_OR_RETURN(AppUsage usage,
                            UsageFromPodMetrics(pods.body, no_metrics_api ? R"({"items": []})" : metrics.body));
    TORCHX_ASSIGN_OR_RETURN(DescribeAppResponse d, ToDescribe(app_id, *job));
    if (no_metrics_api) {
      usage.note =
          "kubernetes: the cluster serves no metrics API (metrics.k8s.io): install metrics-server for "
          "CPU and memory figures";
    } else if (specs::IsTerminal(d.state)) {
      usage.note = fmt::format("kubernetes: the job is {}: the metrics API has figures only for running pods",
                               specs::AppStateName(d.state));
    } else {
      usage.note =
          "kubernetes: metrics-server's figures as of its last scrape: CPU % over its window, memory the "
          "containers' working set";
    }
    usage.gpu_note =
        "kubernetes: the metrics API has no GPU figures (NVIDIA's DCGM exporter serves them to "
        "Prometheus)";
    return std::optional(std::move(usage));
  }

  // The cluster's nodes (cluster-wide read: RBAC may refuse it, and says so), metrics-server's
  // node figures where it runs, and the namespace's torchx pods on their nodes.
  Result<std::vector<HostInfo>> Hosts() override {
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    const std::string& ns = c->connection().namespace_;
    TORCHX_ASSIGN_OR_RETURN(auto nodes, c->Call("GET", "/api/v1/nodes"));
    if (nodes.status >= 300) return ApiError(nodes, "kubernetes: list nodes");
    TORCHX_ASSIGN_OR_RETURN(auto metrics, c->Call("GET", "/apis/metrics.k8s.io/v1beta1/nodes"));
    TORCHX_ASSIGN_OR_RETURN(
        auto pods,
        c->Call("GET", fmt::format("/api/v1/namespaces/{}/pods", internal::UrlEncode(ns)) + "?labelSelector=" +
                           internal::UrlEncode(fmt::format("{}={}", kLabelManagedBy, kManagedByTorchx))));
    if (pods.status >= 300) return ApiError(pods, fmt::format("kubernetes: list pods in `{}`", ns));
    // No metrics-server (404) or no right to read it: capacity and state without use.
    return HostsFromNodes(nodes.body, metrics.status < 300 ? metrics.body : "", pods.body, ns);
  }

  // Attaching from here needs the pods/exec WebSocket (libcurl 7.88 has none): each running
  // replica's entry says the `kubectl exec` that dumps it, as its error.
  Result<std::optional<std::vector<ProcessStack>>> DumpStacks(const std::string& app_id,
                                                              const StackOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto pods, RunningPods(app_id, options.role, options.replica_id));
    if (!pods) return std::optional<std::vector<ProcessStack>>();
    std::vector<ProcessStack> out;
    const std::string ns = ParseAppId(app_id)->ns;
    for (const auto& [role, replica, pod, node] : *pods) {
      ProcessStack p;
      p.role = role;
      p.replica_id = replica;
      p.host = node;
      p.command = "pod " + pod;
      p.error = fmt::format(
          "not dumped from here (it needs the pods/exec stream); run `kubectl exec -n {} {} -- py-spy dump --pid 1` "
          "(py-spy in the image; attaching needs the SYS_PTRACE capability)",
          ns, pod);
      out.push_back(std::move(p));
    }
    return std::optional(std::move(out));
  }

  Status Profile(const std::string& app_id, const ProfileOptions& options) override {
    TORCHX_ASSIGN_OR_RETURN(auto pods, RunningPods(app_id, options.role, options.replica_id));
    if (!pods) return NotFoundError(fmt::format("kubernetes: no job {}", app_id));
    std::string commands;
    const std::string ns = ParseAppId(app_id)->ns;
    for (const auto& [role, replica, pod, node] : *pods) {
      commands += fmt::format(
          "\n  {}/{}: kubectl exec -n {} {} -- py-spy record --pid 1 --subprocesses --duration {} "
          "--format speedscope -o /tmp/profile.json && kubectl cp {}/{}:/tmp/profile.json {}",
          role, replica, ns, pod, std::ceil(options.seconds), ns, pod, options.output);
    }
    return FailedPreconditionError(
        fmt::format("kubernetes: profiles are not taken from here (they need the pods/exec stream); run:{}", commands));
  }

  Result<std::vector<ListAppResponse>> List() override {
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    const std::string& ns = c->connection().namespace_;
    std::string path = fmt::format(kJobsApi, internal::UrlEncode(ns)) +
                       "?labelSelector=" + internal::UrlEncode(fmt::format("{}={}", kLabelManagedBy, kManagedByTorchx));
    TORCHX_ASSIGN_OR_RETURN(auto resp, c->Call("GET", path));
    if (resp.status >= 300) return ApiError(resp, fmt::format("kubernetes: list jobs in `{}`", ns));
    Json list = Json::parse(resp.body, nullptr, false);
    if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
      return UnavailableError("kubernetes: the job list is not a JobList");
    }
    std::vector<ListAppResponse> out;
    for (const Json& job : list["items"]) {
      Json meta = job.is_object() ? job.value("metadata", Json::object()) : Json::object();
      Json name = meta.is_object() ? meta.value("name", Json()) : Json();
      if (!name.is_string()) continue;  // not a job this could ever address
      ListAppResponse r;
      r.app_id = ns + ":" + name.get<std::string>();
      // One job of an odd shape (edited by hand) is listed as UNKNOWN, not an error for the list.
      auto d = ToDescribe(r.app_id, job);
      r.state = d ? d->state : specs::AppState::kUnknown;
      Json labels = meta.value("labels", Json::object());
      Json app_name = labels.is_object() ? labels.value(kLabelK8sName, Json()) : Json();
      if (app_name.is_string()) r.name = app_name;
      out.push_back(std::move(r));
    }
    return out;
  }

  Status Delete(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(JobRef ref, ParseAppId(app_id));
    TORCHX_ASSIGN_OR_RETURN(auto job, GetJob(ref));
    if (!job) return NotFoundError(fmt::format("kubernetes: no job {}", app_id));
    TORCHX_ASSIGN_OR_RETURN(DescribeAppResponse d, ToDescribe(app_id, *job));
    if (!specs::IsTerminal(d.state)) {
      return FailedPreconditionError(fmt::format("kubernetes: {} is still running; cancel it first", app_id));
    }
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    // Background propagation: the pods go with the job.
    std::string path = fmt::format(kJobsApi, internal::UrlEncode(ref.ns)) + "/" + internal::UrlEncode(ref.name);
    bool maybe_deleted = false;
    TORCHX_ASSIGN_OR_RETURN(auto resp,
                            c->Call("DELETE", path, R"({"propagationPolicy":"Background"})", 30000, &maybe_deleted));
    if (resp.status == 404 && maybe_deleted) return OkStatus();  // an earlier attempt deleted it
    if (resp.status == 404) return NotFoundError(fmt::format("kubernetes: no job {}", app_id));
    if (resp.status >= 300) return ApiError(resp, fmt::format("kubernetes: delete {}", app_id));
    return OkStatus();
  }

  Result<std::unique_ptr<LogIterator>> LogIter(const std::string& app_id, const LogOptions& o) override {
    if (o.stream != LogStream::kCombined) {
      return InvalidArgumentError(
          "kubernetes: the API server keeps one log per container: the only stream is combined (valid choices: "
          "combined)");
    }
    TORCHX_ASSIGN_OR_RETURN(JobRef ref, ParseAppId(app_id));
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    std::string pod = PodName(ref.name, o.role, o.replica);
    std::string pod_path =
        fmt::format("/api/v1/namespaces/{}/pods/{}", internal::UrlEncode(ref.ns), internal::UrlEncode(pod));
    std::string path = pod_path + "/log?timestamps=true";
    std::string since_query;
    if (o.since) {
      double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      since_query =
          fmt::format("&sinceSeconds={}", std::max<long long>(1, static_cast<long long>(std::ceil(now - *o.since))));
    }
    std::function<bool(const std::string&)> keep;
    if (o.since || o.until) {
      keep = [since = o.since, until = o.until](const std::string& line) {
        auto t = LineTime(line);
        if (t && since && *t < *since) return false;
        if (t && until && *t > *until) return false;
        return true;
      };
    }
    // Copies: the followed stream's thread may call this after LogIter has returned.
    auto not_found = [role = o.role, replica = o.replica, app_id, pod](const HttpResponse& r) {
      return NotFoundError(fmt::format("kubernetes: no log for {}/{} of {} (pod {}: {})", role, replica, app_id, pod,
                                       ApiError(r, "read").message()));
    };
    // A pod may hold more containers than the replica's own (an overlay's sidecars): each one's
    // log is read in the pod's order, its lines prefixed with its name, as TorchX does.
    auto container_query = [](const PodContainer& ct) {
      return ct.name.empty() ? std::string() : "&container=" + internal::UrlEncode(ct.name);
    };
    if (o.follow) {
      auto producer = [c, path, since_query, pod_path, not_found, keep, container_query,
                       clock = clock_](const std::function<bool(std::string_view)>& on) {
        std::vector<PodContainer> containers = ContainersOf(*c, pod_path);
        if (containers.empty()) containers.push_back({});
        bool reader_gone = false;
        for (const PodContainer& ct : containers) {
          // Whole lines arrive here (LogResume cuts them): filtered, then prefixed.
          auto each_line = [&](std::string_view d) {
            if (!d.empty() && keep && !keep(std::string(d))) return true;
            bool more = d.empty() || ct.prefix.empty() ? on(d) : on(ct.prefix + std::string(d));
            reader_gone = !more;
            return more;
          };
          TORCHX_RETURN_IF_ERROR(FollowLog(*c, *clock, path + container_query(ct) + "&follow=true", since_query,
                                           pod_path, ct.name, not_found, each_line));
          if (reader_gone) break;
        }
        return OkStatus();
      };
      return MakeStreamedLinesIterator(producer, MakeNewlineDecoder(), nullptr);
    }
    std::vector<PodContainer> containers = ContainersOf(*c, pod_path);
    if (containers.empty()) containers.push_back({});
    std::vector<std::string> lines;
    for (const PodContainer& ct : containers) {
      TORCHX_ASSIGN_OR_RETURN(auto resp, c->Call("GET", path + container_query(ct) + since_query, "", 120000));
      if (resp.status == 404) return not_found(resp);
      if (resp.status >= 300) return ApiError(resp, fmt::format("kubernetes: log of pod {}", pod));
      std::vector<std::string> read;
      auto decoder = MakeNewlineDecoder();
      decoder->Feed(resp.body, read);
      decoder->Flush(read);
      for (auto& line : read) {
        if (keep && !keep(line)) continue;
        lines.push_back(ct.prefix + line);
      }
    }
    return MakeLinesIterator(std::move(lines));
  }

 protected:
  // (role, replica, pod, node) of the app's running pods that `role`/`replica` pick; nullopt for
  // an unknown job; kFailedPrecondition when none runs.
  using PodPlace = std::tuple<std::string, int, std::string, std::string>;
  Result<std::optional<std::vector<PodPlace>>> RunningPods(const std::string& app_id, const std::string& role,
                                                           std::optional<int> replica) {
    TORCHX_ASSIGN_OR_RETURN(JobRef ref, ParseAppId(app_id));
    TORCHX_ASSIGN_OR_RETURN(auto job, GetJob(ref));
    if (!job) return std::optional<std::vector<PodPlace>>();
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    std::string selector = "?labelSelector=" + internal::UrlEncode(std::string(kLabelInstance) + "=" + ref.name);
    TORCHX_ASSIGN_OR_RETURN(
        auto pods, c->Call("GET", fmt::format("/api/v1/namespaces/{}/pods", internal::UrlEncode(ref.ns)) + selector));
    if (pods.status >= 300) return ApiError(pods, fmt::format("kubernetes: the pods of {}", app_id));
    internal::JsonView list = internal::JsonView::Parse(pods.body);
    std::vector<PodPlace> out;
    for (const internal::JsonView& pod : list["items"].Items()) {
      if (pod["status"]["phase"].Str() != "Running") continue;
      internal::JsonView labels = pod["metadata"]["labels"];
      std::string r = labels[kLabelRoleName].Str();
      int i = std::atoi(labels[kLabelReplicaId].Str().c_str());
      if (!role.empty() && r != role) continue;
      if (replica && i != *replica) continue;
      out.emplace_back(r, i, pod["metadata"]["name"].Str(), pod["spec"]["nodeName"].Str());
    }
    if (out.empty()) {
      return FailedPreconditionError(fmt::format("no pod of job {} that matches is running", app_id));
    }
    return std::optional(std::move(out));
  }

  Result<DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    VolcanoJobOptions o;
    o.job_name = MakeJobName(app.name);
    o.namespace_ = cfg.Str("namespace").value_or("");
    if (o.namespace_.empty()) o.namespace_ = "default";  // `-cfg namespace=` as TorchX: the default one
    o.queue = cfg.Str("queue").value();                  // required
    o.service_account = cfg.Str("service_account").value_or("");
    o.priority_class = cfg.Str("priority_class").value_or("");
    o.torchx_version = TORCHX_VERSION_STRING;
    for (const std::string& t : cfg.List("tolerations").value_or(specs::CfgList{})) {
      TORCHX_ASSIGN_OR_RETURN(Toleration parsed, ParseToleration(t));
      o.tolerations.push_back(std::move(parsed));
    }
    o.node_selector = cfg.Dict("node_selector").value_or(specs::CfgDict{});
    for (const char* key : {"reserved_millicpu", "reserved_memmb", "efa_device_count"}) {
      std::optional<std::int64_t> v = cfg.Int(key);
      if (v && (*v < 0 || *v > std::numeric_limits<int>::max())) {
        return InvalidArgumentError(
            fmt::format("kubernetes: run option `{}` is {}; valid: 0 to {}", key, *v, std::numeric_limits<int>::max()));
      }
    }
    o.reserved_millicpu = static_cast<int>(cfg.Int("reserved_millicpu").value_or(100));
    o.reserved_memmb = static_cast<int>(cfg.Int("reserved_memmb").value_or(1024));
    if (auto efa = cfg.Int("efa_device_count")) o.efa_device_count = static_cast<int>(*efa);
    TORCHX_ASSIGN_OR_RETURN(Json job, AppToVolcanoJob(app, o));
    if (cfg.Bool("validate_spec").value_or(false)) TORCHX_RETURN_IF_ERROR(ValidateOnServer(o.namespace_, job));
    Json push = Json::array();
    std::string pushed_note;
    for (const specs::Role& role : app.roles) {
      if (!workspace_images_.contains(role.image) || std::find(push.begin(), push.end(), role.image) != push.end()) {
        continue;
      }
      push.push_back(role.image);
      pushed_note += "# workspace image pushed before the job is created: " + role.image + "\n";
    }
    DryRunInfo info;
    info.app = app;
    info.app_id = o.namespace_ + ":" + o.job_name;
    info.app_id_is_final = true;  // the Job is created under this name (and a retried create finds it)
    info.request = pushed_note + internal::JsonToYaml(job);
    KubernetesRequest request{o.namespace_, job.dump(-1, ' ', false, Json::error_handler_t::replace), o.job_name, {}};
    for (const Json& image : push) request.push.push_back(image.get<std::string>());
    info.payload = KubernetesRequestToJson(request);
    return info;
  }

  // The API server's verdict on the Job without creating it (dryRun=All: admission and schema
  // checks, Volcano's webhooks included).
  Status ValidateOnServer(const std::string& ns, const Json& job) {
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    TORCHX_ASSIGN_OR_RETURN(auto resp, c->Call("POST", fmt::format(kJobsApi, internal::UrlEncode(ns)) + "?dryRun=All",
                                               job.dump(-1, ' ', false, Json::error_handler_t::replace)));
    if (resp.status >= 300) {
      return ApiError(resp, fmt::format("kubernetes: invalid job spec (validate_spec) for {}/{}", ns,
                                        job["metadata"]["name"].get<std::string>()));
    }
    return OkStatus();
  }

  // Volcano's own way to stop a job (what `vcctl job suspend` sends): a bus Command with the
  // AbortJob action, owned by the job. The pods are killed and the job ends Aborted (CANCELLED),
  // its record kept until `torchx delete`.
  Status DoCancel(const std::string& app_id) override {
    TORCHX_ASSIGN_OR_RETURN(JobRef ref, ParseAppId(app_id));
    TORCHX_ASSIGN_OR_RETURN(auto job, GetJob(ref));
    if (!job) return OkStatus();
    Json owner = {{"apiVersion", "batch.volcano.sh/v1alpha1"},
                  {"kind", "Job"},
                  {"name", ref.name},
                  {"uid", internal::JsonView(*job)["metadata"]["uid"].Str()},
                  {"controller", true},
                  {"blockOwnerDeletion", true}};
    Json command = {{"apiVersion", "bus.volcano.sh/v1alpha1"},
                    {"kind", "Command"},
                    {"metadata",
                     {{"generateName", ref.name.substr(0, 40) + "-abortjob-"},
                      {"namespace", ref.ns},
                      {"ownerReferences", Json::array({owner})}}},
                    {"action", "AbortJob"},
                    {"target", owner}};
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    // Two AbortJob commands abort the job once: a retry is safe.
    TORCHX_ASSIGN_OR_RETURN(auto resp,
                            c->Create(fmt::format(kCommandsApi, internal::UrlEncode(ref.ns)), command.dump(), nullptr));
    if (resp.status >= 300) return ApiError(resp, fmt::format("kubernetes: abort {}", app_id));
    return OkStatus();
  }

 private:
  Result<std::shared_ptr<KubeClient>> Client() {
    if (!client_) {
      if (!connection_) {
        KubeConfigOptions o;
        const char* allow_exec = std::getenv("TORCHX_KUBERNETES_ALLOW_EXEC");
        std::shared_ptr<internal::CommandRunner> exec;
        if (allow_exec && std::string(allow_exec) == "1") exec = internal::MakeSystemCommandRunner();
        o.exec = exec.get();
        TORCHX_ASSIGN_OR_RETURN(connection_, LoadKubeConfig(o));
      }
      client_ = std::make_shared<KubeClient>(http_, *connection_, clock_);
    }
    return client_;
  }

  Result<std::optional<Json>> GetJob(const JobRef& ref) {
    TORCHX_ASSIGN_OR_RETURN(auto c, Client());
    std::string path = fmt::format(kJobsApi, internal::UrlEncode(ref.ns)) + "/" + internal::UrlEncode(ref.name);
    TORCHX_ASSIGN_OR_RETURN(auto resp, c->Call("GET", path));
    if (resp.status == 404) return std::optional<Json>();
    if (resp.status >= 300) return ApiError(resp, fmt::format("kubernetes: get job {}:{}", ref.ns, ref.name));
    Json job = Json::parse(resp.body, nullptr, false);
    if (!job.is_object() || !job.contains("metadata")) {
      return UnavailableError(fmt::format("kubernetes: job {}:{} came back unreadable", ref.ns, ref.name));
    }
    return std::optional(std::move(job));
  }

  // Job phase -> app state; each task's pod phase (taskStatusCount) -> its replica's state. Roles
  // and replica ids come from the pod template's labels (names were normalized).
  // A job someone else wrote (or edited) may hold a field of another type than Volcano's: an
  // error naming the job rather than an exception.
  static Result<DescribeAppResponse> ToDescribe(const std::string& app_id, const Json& job) {
    try {
      return ReadJob(app_id, job);
    } catch (const Json::exception& e) {
      return UnavailableError(fmt::format("kubernetes: job {} has an unexpected shape: {}", app_id, e.what()));
    }
  }

  static DescribeAppResponse ReadJob(const std::string& app_id, const Json& job) {
    DescribeAppResponse d;
    d.app_id = app_id;
    Json status = job.value("status", Json::object());
    Json state = status.is_object() ? status.value("state", Json::object()) : Json::object();
    std::string phase = state.is_object() ? state.value("phase", "") : "";
    d.state = phase.empty() ? AppState::kSubmitted : JobPhaseToState(phase);
    if (state.is_object()) {
      std::string reason = state.value("reason", ""), message = state.value("message", "");
      d.msg = reason.empty() ? message : (message.empty() ? reason : reason + ": " + message);
    }
    if (status.is_object()) d.num_restarts = status.value("retryCount", 0);
    Json counts = status.is_object() ? status.value("taskStatusCount", Json::object()) : Json::object();
    std::map<std::string, std::vector<specs::ReplicaStatus>> roles;
    std::vector<std::string> order;
    Json tasks = job.value("spec", Json::object()).value("tasks", Json::array());
    for (const Json& task : tasks) {
      std::string task_name = task.value("name", "");
      Json labels =
          task.value("template", Json::object()).value("metadata", Json::object()).value("labels", Json::object());
      specs::ReplicaStatus r;
      r.role = labels.value(kLabelRoleName, task_name.substr(0, task_name.rfind('-')));
      r.id = std::atoi(labels.value(kLabelReplicaId, task_name.substr(task_name.rfind('-') + 1)).c_str());
      r.hostname = fmt::format("{}-{}-0", job["metadata"].value("name", ""), task_name);
      // A task without pods yet is pending while the job lives, and ends as the job ends.
      r.state = specs::IsTerminal(d.state) ? d.state : AppState::kPending;
      if (counts.is_object() && counts.contains(task_name)) {
        Json phases = counts[task_name].value("phase", Json::object());
        if (phases.is_object() && !phases.empty()) r.state = TaskPhaseToState(phases.begin().key());
      }
      if (!roles.contains(r.role)) order.push_back(r.role);
      roles[r.role].push_back(r);
    }
    for (const std::string& role : order) d.roles_statuses.push_back({role, roles[role]});
    d.app = AppFromVolcanoJob(job);
    return d;
  }

  // Why a pod is not (or no longer) doing well, in the kubelet's words; empty when it is fine.
  static std::string PodProblem(const Json& pod) {
    Json status = pod.value("status", Json::object());
    if (!status.is_object()) return {};
    for (const Json& c : status.value("containerStatuses", Json::array())) {
      Json state = c.value("state", Json::object());
      if (!state.is_object()) continue;
      if (state.contains("waiting") && state["waiting"].is_object()) {
        std::string reason = state["waiting"].value("reason", "");
        if (!reason.empty() && reason != "ContainerCreating" && reason != "PodInitializing") {
          std::string message = state["waiting"].value("message", "");
          return message.empty() ? reason : reason + ": " + message;
        }
      }
      if (state.contains("terminated") && state["terminated"].is_object()) {
        const Json& t = state["terminated"];
        int code = t.value("exitCode", 0);
        if (code != 0) {
          std::string message = t.value("message", "");
          return fmt::format("{} (exit code {}){}", t.value("reason", "Error"), code,
                             message.empty() ? "" : ": " + message);
        }
      }
    }
    if (std::string reason = status.value("reason", ""); !reason.empty()) {
      std::string message = status.value("message", "");
      return message.empty() ? reason : reason + ": " + message;
    }
    for (const Json& cond : status.value("conditions", Json::array())) {
      if (cond.value("type", "") == "PodScheduled" && cond.value("status", "") == "False") {
        return cond.value("reason", "Unschedulable") + ": " + cond.value("message", "");
      }
    }
    return {};
  }

  // Each replica's pod: its phase as the replica's state, and what is wrong with it, if anything.
  static void ApplyPods(const Json& pods, DescribeAppResponse& d) {
    std::vector<std::string> problems;
    for (specs::RoleStatus& role : d.roles_statuses) {
      for (specs::ReplicaStatus& r : role.replicas) {
        for (const Json& pod : pods) {
          Json labels = pod.value("metadata", Json::object()).value("labels", Json::object());
          if (!labels.is_object() || labels.value(kLabelRoleName, "") != r.role ||
              labels.value(kLabelReplicaId, "") != std::to_string(r.id)) {
            continue;
          }
          std::string phase = pod.value("status", Json::object()).value("phase", "");
          if (!phase.empty()) r.state = TaskPhaseToState(phase);
          if (std::string problem = PodProblem(pod); !problem.empty()) {
            r.structured_error_msg = problem;
            problems.push_back(fmt::format("{}/{}: {}", r.role, r.id, problem));
          }
        }
      }
    }
    for (const std::string& p : problems) d.msg += (d.msg.empty() ? "" : "; ") + p;
  }

  std::shared_ptr<internal::HttpClient> http_;
  // Where the API server is: given, or read from the kubeconfig on first use (a dry run needs none).
  std::optional<KubeConnection> connection_;
  std::shared_ptr<const Clock> clock_;  // a followed log waits on it for its container to start
  std::shared_ptr<KubeClient> client_;
  // Images this scheduler built from a workspace (BuildWorkspace), which the dry run marks for push.
  std::set<std::string> workspace_images_;
};

}  // namespace

std::unique_ptr<Scheduler> MakeKubernetesScheduler(const std::string& session_name,
                                                   std::shared_ptr<internal::HttpClient> http,
                                                   std::optional<KubeConnection> connection,
                                                   std::shared_ptr<const Clock> clock) {
  if (!clock) clock = std::make_shared<SystemClock>();
  return std::make_unique<KubernetesScheduler>(session_name, std::move(http), std::move(connection), std::move(clock));
}

std::vector<SchedulerEntry> BackendSchedulers() {
  return {{"kubernetes", [](const SchedulerContext& context) -> Result<std::unique_ptr<Scheduler>> {
             return MakeKubernetesScheduler(context.session_name, internal::MakeCurlHttpClient(), std::nullopt,
                                            context.clock);
           }}};
}

}  // namespace torchx::schedulers::kubernetes
