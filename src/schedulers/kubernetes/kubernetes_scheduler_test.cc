// The kubernetes scheduler against a fake API server: a FakeHttpClient holding Volcano Jobs the
// way the API server answers for them (create 201 / 409 / 404 without Volcano, get with the job's
// status phase, pods, bus Commands, delete). What the scheduler sends and how it reads the
// answers, as C++ unit tests; the protocol tests against tests/integration/kubernetes's Python
// API-server fake and Volcano's schemas stay where they are.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedulers/kubernetes/kubernetes_request.h"
#include "schedulers/kubernetes/kubernetes_scheduler.h"
#include "schedulers/kubernetes/volcano_job.h"
#include "schedulers/line_filter.h"
#include "testing/fake_clock.h"
#include "testing/fake_http_client.h"
#include "testing/log_lines.h"
#include "testing/status_matchers.h"

namespace torchx::schedulers::kubernetes {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using specs::AppState;
using testing::FakeHttpClient;
using Request = FakeHttpClient::Request;
using internal::HttpResponse;

constexpr const char* kJobs = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs";
constexpr const char* kCommands = "/apis/bus.volcano.sh/v1alpha1/namespaces/default/commands";
constexpr const char* kServer = "https://fake-apiserver:6443";

// A v1 Status, as the API server answers errors.
std::string ApiStatus(int code, const std::string& reason, const std::string& message) {
  return Json{{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
              {"message", message}, {"reason", reason},   {"code", code}}
      .dump();
}

// The API server's side: the Volcano Jobs it holds, by name, and the phase each reports.
struct FakeApiServer {
  std::map<std::string, Json> jobs;
  std::map<std::string, std::string> phases;  // job name -> status.state.phase ("" none yet)
  int next_uid = 1;

  Result<HttpResponse> Create(const Request& r) {
    Json job = Json::parse(r.body);
    std::string name = job["metadata"]["name"];
    if (jobs.contains(name)) {
      return HttpResponse{409,
                          ApiStatus(409, "AlreadyExists", "jobs.batch.volcano.sh \"" + name + "\" already exists")};
    }
    job["metadata"]["uid"] = "uid-" + std::to_string(next_uid++);
    job["metadata"]["namespace"] = "default";
    jobs[name] = job;
    phases[name] = "";
    return HttpResponse{201, job.dump()};
  }

  Result<HttpResponse> Get(const Request& r) {
    std::string name = r.path.substr(std::string(kJobs).size() + 1);
    if (!jobs.contains(name)) {
      return HttpResponse{404, ApiStatus(404, "NotFound", "jobs.batch.volcano.sh \"" + name + "\" not found")};
    }
    Json job = jobs[name];
    if (!phases[name].empty()) job["status"] = {{"state", {{"phase", phases[name]}}}};
    return HttpResponse{200, job.dump()};
  }

  Result<HttpResponse> Delete(const Request& r) {
    std::string name = r.path.substr(std::string(kJobs).size() + 1);
    if (jobs.erase(name) == 0) {
      return HttpResponse{404, ApiStatus(404, "NotFound", "jobs.batch.volcano.sh \"" + name + "\" not found")};
    }
    return HttpResponse{200, ApiStatus(200, "", "")};
  }
};

struct Fixture {
  Fixture() {
    http->On("POST", kJobs, [this](const Request& r) { return api.Create(r); });
    http->On("GET", std::string(kJobs) + "/", [this](const Request& r) { return api.Get(r); });
    http->On("DELETE", std::string(kJobs) + "/", [this](const Request& r) { return api.Delete(r); });
    http->On("POST", kCommands, 201, R"({"kind":"Command"})");
    // Pods are read best effort: an account that may not list them still gets the job's view.
    http->On("GET", "/api/v1/namespaces/default/pods", 403,
             ApiStatus(403, "Forbidden", "pods is forbidden: User \"ci\" cannot list resource \"pods\""));
  }
  KubeConnection Connection() {
    KubeConnection c;
    c.server = kServer;
    c.context = "fake";
    c.source = "the test";
    return c;
  }
  FakeApiServer api;
  std::shared_ptr<FakeHttpClient> http = std::make_shared<FakeHttpClient>();
  // Retries and waits move a fake clock: no test sleeps.
  std::shared_ptr<testing::FakeClock> clock = std::make_shared<testing::FakeClock>();
  std::unique_ptr<Scheduler> sched = MakeKubernetesScheduler("test", http, Connection(), clock);

  Result<std::string> Run() {
    specs::Role r;
    r.name = "trainer";
    r.image = "busybox";
    r.entrypoint = "echo";
    r.args = {"hi"};
    r.num_replicas = 2;
    TORCHX_ASSIGN_OR_RETURN(auto info,
                            sched->SubmitDryRun(specs::AppDef{"train", {r}, {}}, {{"queue", std::string("default")}}));
    return sched->Schedule(info);
  }
  AppState StateOf(const std::string& app_id) {
    auto d = sched->Describe(app_id);
    EXPECT_THAT(d, IsOk());
    return d.ok() && d->has_value() ? (*d)->state : AppState::kUnsubmitted;
  }
  static std::string NameOf(const std::string& app_id) { return app_id.substr(app_id.find(':') + 1); }
};

TEST(KubernetesScheduler, ScheduleCreatesTheDryRunsVolcanoJob) {
  Fixture f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  EXPECT_THAT(*id, ::testing::StartsWith("default:train-"));
  auto creates = f.http->RequestsTo("POST", kJobs);
  ASSERT_EQ(creates.size(), 1u);
  Json job = Json::parse(creates[0].body);
  EXPECT_EQ(job["kind"], "Job");
  EXPECT_EQ(job["apiVersion"], "batch.volcano.sh/v1alpha1");
  EXPECT_EQ(job["metadata"]["name"], Fixture::NameOf(*id));
  EXPECT_EQ(job["spec"]["queue"], "default");
  EXPECT_EQ(job["spec"]["tasks"].size(), 2u);       // one task per replica
  EXPECT_EQ(f.StateOf(*id), AppState::kSubmitted);  // no status yet
}

TEST(KubernetesScheduler, HeadsOptionsShapeTheManifestAndValidateSpecAsksTheServer) {
  Fixture f;
  std::vector<std::string> dry_runs;
  f.http->On("POST", std::string(kJobs) + "?dryRun=All", [&](const Request& r) -> Result<HttpResponse> {
    dry_runs.push_back(r.body);
    return HttpResponse{422, ApiStatus(422, "Invalid", "spec.tasks[0].name: Invalid value")};
  });
  specs::Role r;
  r.name = "trainer";
  r.image = "busybox";
  r.entrypoint = "echo";
  r.resource.cpu = 2;
  r.resource.memMB = 3000;
  r.resource.devices = {{"vpc.amazonaws.com/efa", 4}};
  specs::AppDef app{"train", {r}, {}};
  specs::Cfg cfg = {{"queue", std::string("default")},
                    {"reserved_millicpu", std::int64_t{300}},
                    {"reserved_memmb", std::int64_t{0}},
                    {"efa_device_count", std::int64_t{0}}};
  auto info = f.sched->SubmitDryRun(app, cfg);
  ASSERT_THAT(info, IsOk());
  EXPECT_TRUE(dry_runs.empty());  // validate_spec is off by default: a dry run stays offline
  Json container = Json::parse(info->payload)["job"]["spec"]["tasks"][0]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["resources"]["requests"], (Json{{"cpu", "1700m"}, {"memory", "3000M"}}));
  EXPECT_FALSE(container["resources"]["limits"].contains("vpc.amazonaws.com/efa"));
  EXPECT_EQ(container["env"][0], (Json{{"name", "TORCHX_IMAGE"}, {"value", "busybox"}}));

  cfg["validate_spec"] = true;
  EXPECT_THAT(f.sched->SubmitDryRun(app, cfg),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("invalid job spec (validate_spec)")));
  ASSERT_EQ(dry_runs.size(), 1u);
  EXPECT_EQ(Json::parse(dry_runs[0])["kind"], "Job");
  EXPECT_TRUE(f.api.jobs.empty());  // nothing was created

  cfg["reserved_memmb"] = std::int64_t{-1};
  EXPECT_THAT(f.sched->SubmitDryRun(app, cfg), StatusIs(StatusCode::kInvalidArgument, HasSubstr("reserved_memmb")));
}

TEST(KubernetesScheduler, ScheduleConflictAndMissingVolcanoAreClearErrors) {
  Fixture f;
  f.http->On("POST", kJobs, 409, ApiStatus(409, "AlreadyExists", "jobs.batch.volcano.sh \"x\" already exists"));
  EXPECT_THAT(f.Run(), StatusIs(StatusCode::kAlreadyExists, HasSubstr("resubmit")));
  f.http->On("POST", kJobs, 404, ApiStatus(404, "NotFound", "the server could not find the requested resource"));
  EXPECT_THAT(f.Run(), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("is Volcano installed")));
  EXPECT_THAT(f.Run(), StatusIs(StatusCode::kFailedPrecondition, HasSubstr(kServer)));
}

TEST(KubernetesScheduler, DescribeMapsTheJobPhaseToAppState) {
  Fixture f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  std::string name = Fixture::NameOf(*id);
  const std::map<std::string, AppState> table = {
      {"Pending", AppState::kPending},     {"Running", AppState::kRunning},   {"Restarting", AppState::kRunning},
      {"Completed", AppState::kSucceeded}, {"Failed", AppState::kFailed},     {"Aborted", AppState::kCancelled},
      {"Terminated", AppState::kFailed},   {"Surprising", AppState::kUnknown}};
  for (const auto& [phase, state] : table) {
    f.api.phases[name] = phase;
    EXPECT_EQ(f.StateOf(*id), state) << phase;
  }
  f.api.phases[name] = "Completed";
  auto d = f.sched->Describe(*id);
  ASSERT_THAT(d, IsOk());
  ASSERT_TRUE(d->has_value());
  ASSERT_EQ((*d)->roles_statuses.size(), 1u);
  EXPECT_EQ((*d)->roles_statuses[0].role, "trainer");
  EXPECT_EQ((*d)->roles_statuses[0].replicas.size(), 2u);
  EXPECT_EQ((*d)->roles_statuses[0].replicas[1].state, AppState::kSucceeded);  // no pods: as the job
  auto unknown = f.sched->Describe("default:nosuchjob");
  ASSERT_THAT(unknown, IsOk());
  EXPECT_FALSE(unknown->has_value());
  EXPECT_THAT(f.sched->Describe("no-namespace"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("no-namespace")));
}

TEST(KubernetesScheduler, DescribeNativeReadsTheJobBackFromTheApiServer) {
  Fixture f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  f.api.phases[Fixture::NameOf(*id)] = "Running";
  auto native = f.sched->DescribeNative(*id);
  ASSERT_THAT(native, IsOk());
  ASSERT_TRUE(native->has_value());
  nlohmann::json payload = nlohmann::json::parse((*native)->payload);
  const nlohmann::json& job =
      payload["job"].is_string() ? nlohmann::json::parse(payload["job"].get<std::string>()) : payload["job"];
  EXPECT_EQ(job["metadata"]["name"], Fixture::NameOf(*id));
  EXPECT_EQ(job["status"]["state"]["phase"], "Running");  // as the server holds it now, status included
  EXPECT_THAT((*native)->request, HasSubstr("phase: Running"));
  auto unknown = f.sched->DescribeNative("default:nosuchjob");
  ASSERT_THAT(unknown, IsOk());
  EXPECT_FALSE(unknown->has_value());
  EXPECT_TRUE(f.sched->capabilities().Has(Capability::kDescribeNative));
}

TEST(KubernetesScheduler, CancelAbortsALiveJobWithAVolcanoCommandOwnedByIt) {
  Fixture f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  std::string name = Fixture::NameOf(*id);
  f.api.phases[name] = "Running";
  ASSERT_THAT(f.sched->Cancel(*id), IsOk());
  auto commands = f.http->RequestsTo("POST", kCommands);
  ASSERT_EQ(commands.size(), 1u);
  Json command = Json::parse(commands[0].body);
  EXPECT_EQ(command["action"], "AbortJob");
  EXPECT_EQ(command["target"]["name"], name);
  EXPECT_EQ(command["target"]["kind"], "Job");
  EXPECT_EQ(command["metadata"]["ownerReferences"][0]["uid"], f.api.jobs[name]["metadata"]["uid"]);
  f.api.phases[name] = "Aborted";
  EXPECT_THAT(f.sched->Cancel(*id), IsOk());                  // already over: no second command
  EXPECT_THAT(f.sched->Cancel("default:nosuchjob"), IsOk());  // gone: nothing to do
  EXPECT_EQ(f.http->RequestsTo("POST", kCommands).size(), 1u);
}

TEST(KubernetesScheduler, DeleteRemovesOnlyAFinishedJob) {
  Fixture f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  std::string name = Fixture::NameOf(*id);
  f.api.phases[name] = "Running";
  EXPECT_THAT(f.sched->Delete(*id), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("cancel it first")));
  EXPECT_TRUE(f.http->RequestsTo("DELETE", kJobs).empty());
  f.api.phases[name] = "Aborted";
  ASSERT_THAT(f.sched->Delete(*id), IsOk());
  auto deletes = f.http->RequestsTo("DELETE", kJobs);
  ASSERT_EQ(deletes.size(), 1u);
  EXPECT_EQ(deletes[0].path, std::string(kJobs) + "/" + name);
  EXPECT_EQ(Json::parse(deletes[0].body)["propagationPolicy"], "Background");  // the pods go with it
  EXPECT_THAT(f.sched->Delete(*id), StatusIs(StatusCode::kNotFound, HasSubstr(*id)));
}

TEST(KubernetesScheduler, LogsReadThePodsLogWithTimestampsAndFilter) {
  Fixture f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  std::string pod = PodName(Fixture::NameOf(*id), "trainer", 1);
  f.http->On("GET", "/api/v1/namespaces/default/pods/", 404, ApiStatus(404, "NotFound", "pods not found"));
  f.http->On("GET", "/api/v1/namespaces/default/pods/" + pod + "/log", 200,
             "2026-01-02T03:04:05.000000001Z epoch 1\n2026-01-02T03:04:06.5Z loss 0.5\n"
             "2026-01-02T03:04:07Z epoch 2\n");
  LogOptions o;
  o.role = "trainer";
  o.replica = 1;
  auto it = f.sched->LogIter(*id, o);
  ASSERT_THAT(it, IsOk());
  // Filtered as the Runner filters every back-end's lines.
  auto filtered = FilterLogLines(std::move(*it), *LineFilter::Compile("epoch"));
  auto read = testing::ReadAllLines(*filtered);
  ASSERT_THAT(read, IsOk());
  std::vector<std::string> lines = *read;
  EXPECT_THAT(lines,
              ::testing::ElementsAre("2026-01-02T03:04:05.000000001Z epoch 1\n", "2026-01-02T03:04:07Z epoch 2\n"));
  auto reads = f.http->RequestsTo("GET", "/api/v1/namespaces/default/pods/" + pod + "/log");
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_THAT(reads[0].path, HasSubstr("timestamps=true"));
  o.replica = 0;  // no such pod: the API server's 404
  EXPECT_THAT(f.sched->LogIter(*id, o), StatusIs(StatusCode::kNotFound, HasSubstr("trainer/0")));
  o.stream = LogStream::kStdout;
  EXPECT_THAT(f.sched->LogIter(*id, o), StatusIs(StatusCode::kInvalidArgument, HasSubstr("combined")));
}

// A pod with a sidecar (added by an overlay): each container's log is read, in the pod's order,
// the sidecar's lines prefixed with its name (as TorchX); the API server needs `container=` then.
TEST(KubernetesScheduler, LogsReadEveryContainerOfThePodPrefixingTheOthers) {
  Fixture f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  std::string task = Fixture::NameOf(*id) + "-trainer-0";
  std::string pod = PodName(Fixture::NameOf(*id), "trainer", 0);
  std::string pod_path = "/api/v1/namespaces/default/pods/" + pod;
  Json pod_json = {{"metadata", {{"labels", {{kLabelVolcanoTaskSpec, task}}}}},
                   {"spec", {{"containers", Json::array({{{"name", "log-shipper"}}, {{"name", task}}})}}},
                   {"status", {{"phase", "Succeeded"}}}};
  f.http->On("GET", pod_path, 200, pod_json.dump());
  f.http->On("GET", pod_path + "/log", [&](const Request& r) -> Result<HttpResponse> {
    if (r.path.find("container=log-shipper") != std::string::npos) {
      return HttpResponse{200, "2026-01-02T03:04:05Z shipped\n"};
    }
    if (r.path.find("container=" + task) != std::string::npos) {
      return HttpResponse{200, "2026-01-02T03:04:06Z epoch 1\n2026-01-02T03:04:07Z epoch 2\n"};
    }
    return HttpResponse{400, ApiStatus(400, "BadRequest", "a container name must be specified for pod " + pod)};
  });
  LogOptions o;
  o.role = "trainer";
  o.replica = 0;
  for (bool follow : {false, true}) {
    o.follow = follow;
    auto it = f.sched->LogIter(*id, o);
    ASSERT_THAT(it, IsOk());
    auto read = testing::ReadAllLines(**it);
    ASSERT_THAT(read, IsOk()) << follow;
    EXPECT_THAT(*read, ::testing::ElementsAre("log-shipper 2026-01-02T03:04:05Z shipped\n",
                                              "2026-01-02T03:04:06Z epoch 1\n", "2026-01-02T03:04:07Z epoch 2\n"))
        << follow;
  }
  o.follow = false;
  auto it = f.sched->LogIter(*id, o);
  ASSERT_THAT(it, IsOk());
  // The Runner's filter sees each line as shown: a sidecar's with its prefix.
  auto filtered = FilterLogLines(std::move(*it), *LineFilter::Compile("epoch 2|^log-shipper .* shipped"));
  EXPECT_THAT(testing::ReadAllLines(*filtered),
              IsOkAndHolds(::testing::ElementsAre("log-shipper 2026-01-02T03:04:05Z shipped\n",
                                                  "2026-01-02T03:04:07Z epoch 2\n")));
}

// The payload Schedule reads may have been edited (Python's KubernetesScheduler shows it as
// TorchX's request): a malformed one is kInvalidArgument naming the field, and nothing is sent.
TEST(KubernetesScheduler, AnEditedOrMalformedPayloadIsRefusedNamingTheField) {
  Fixture f;
  specs::Role r;
  r.name = "trainer";
  r.image = "busybox";
  r.entrypoint = "echo";
  auto info = f.sched->SubmitDryRun(specs::AppDef{"train", {r}, {}}, {{"queue", std::string("default")}});
  ASSERT_THAT(info, IsOk());
  auto decoded = KubernetesRequestFromJson(info->payload);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->ns, "default");
  EXPECT_EQ(KubernetesRequestToJson(*decoded), info->payload);
  struct Case {
    std::string payload, field;
  };
  for (const Case& c :
       std::vector<Case>{{"not json", "not a JSON object"},
                         {R"({"job":{"metadata":{"name":"j"}}})", "namespace"},
                         {R"({"namespace":"d","job":[]})", "job"},
                         {R"({"namespace":"d","job":{"metadata":"x"}})", "job.metadata"},
                         {R"({"namespace":"d","job":{"metadata":{"name":5}}})", "job.metadata.name"},
                         {R"({"namespace":"d","job":{"metadata":{"name":"j"}},"push":"img"})", "push"},
                         {R"({"namespace":"d","job":{"metadata":{"name":"j"}},"push":["reg:5000/img"]})", "push[0]"}}) {
    DryRunInfo edited = *info;
    edited.payload = c.payload;
    EXPECT_THAT(f.sched->Schedule(edited), StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.field))) << c.payload;
  }
  EXPECT_TRUE(f.http->RequestsTo("POST", kJobs).empty());
}

// A pod that printed a 1 MiB line, filtered as the Runner filters every back-end's lines with a
// pattern that makes a backtracking engine recurse per character.
TEST(KubernetesScheduler, ARegexOverAOneMebibyteLine) {
  Fixture f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  std::string pod = PodName(Fixture::NameOf(*id), "trainer", 0);
  std::string long_line = "2026-01-02T03:04:05Z " + std::string(1 << 20, 'a') + "\n";
  f.http->On("GET", "/api/v1/namespaces/default/pods/" + pod + "/log", 200, long_line + "2026-01-02T03:04:06Z bac\n");
  LogOptions o;
  o.role = "trainer";
  auto it = f.sched->LogIter(*id, o);
  ASSERT_THAT(it, IsOk());
  auto filtered = FilterLogLines(std::move(*it), *LineFilter::Compile("(a|b)*c"));
  EXPECT_THAT(testing::ReadAllLines(*filtered), IsOkAndHolds(::testing::ElementsAre("2026-01-02T03:04:06Z bac\n")));
}

TEST(KubernetesScheduler, AnUnreachableApiServerIsAClearError) {
  Fixture f;
  f.http->SetUnreachable();
  for (const Status& s : {f.Run().status(), f.sched->Describe("default:x").status(), f.sched->Cancel("default:x")}) {
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_THAT(s.message(), HasSubstr("kubernetes API server https://fake-apiserver:6443 (context `fake`"));
  }
}

// ---- faults: the API server unreachable, overloaded, failing, or taking a create that times out ----

namespace faults {

using std::chrono::milliseconds;
using ::testing::ElementsAre;

struct Faulty : Fixture {
  Scheduler* faulty = sched.get();

  Result<DryRunInfo> DryRun() {
    specs::Role r;
    r.name = "trainer";
    r.image = "busybox";
    r.entrypoint = "echo";
    r.num_replicas = 1;
    return faulty->SubmitDryRun(specs::AppDef{"train", {r}, {}}, {{"queue", std::string("default")}});
  }
  // Answers `errors` first (in order), then goes back to the API server.
  void FailFirst(const std::string& method, const std::string& prefix, std::vector<Result<HttpResponse>> errors,
                 FakeHttpClient::Handler then) {
    auto left = std::make_shared<std::vector<Result<HttpResponse>>>(std::move(errors));
    http->On(method, prefix, [left, then](const Request& r) -> Result<HttpResponse> {
      if (left->empty()) return then(r);
      auto next = left->front();
      left->erase(left->begin());
      return next;
    });
  }
};

std::string TooMany(int retry_after) {
  Json s = Json::parse(ApiStatus(429, "TooManyRequests", "too many requests"));
  s["details"] = {{"retryAfterSeconds", retry_after}};
  return s.dump();
}

TEST(KubernetesFaults, ReadsAreRetriedThrough5xxAnd429HonouringRetryAfter) {
  Faulty f;
  auto info = f.DryRun();
  ASSERT_THAT(info, IsOk());
  auto id = f.faulty->Schedule(*info);
  ASSERT_THAT(id, IsOk());
  f.FailFirst("GET", std::string(kJobs) + "/",
              {HttpResponse{503, ApiStatus(503, "ServiceUnavailable", "etcd leader changed")},
               HttpResponse{429, TooMany(7)}, UnavailableError("connection reset")},
              [&f](const Request& r) { return f.api.Get(r); });
  auto d = f.faulty->Describe(*id);
  ASSERT_THAT(d, IsOk());
  EXPECT_TRUE(d->has_value());
  // 250 ms, then the 7 s the server asked for, then 1 s (the backoff doubles regardless).
  EXPECT_THAT(f.clock->sleeps(), ElementsAre(milliseconds(250), milliseconds(7000), milliseconds(1000)));
}

TEST(KubernetesFaults, AnUnreachableServerIsRetriedABoundedTimeThenAClearError) {
  Faulty f;
  f.http->SetUnreachable();
  auto d = f.faulty->Describe("default:train-abc");
  EXPECT_THAT(d, StatusIs(StatusCode::kUnavailable, HasSubstr("kubernetes API server https://fake-apiserver:6443 "
                                                              "(context `fake` of the test) cannot be reached")));
  EXPECT_EQ(f.http->requests().size(), 5u);
  EXPECT_THAT(f.clock->sleeps(),
              ElementsAre(milliseconds(250), milliseconds(500), milliseconds(1000), milliseconds(2000)));
}

TEST(KubernetesFaults, ACreateThatTimedOutAfterTheServerTookItIsNotDuplicated) {
  Faulty f;
  auto info = f.DryRun();
  ASSERT_THAT(info, IsOk());
  // The first POST reaches the server, which creates the Job, but its answer is lost.
  f.http->On("POST", kJobs, [&f](const Request& r) -> Result<HttpResponse> {
    bool first = f.api.jobs.empty();
    auto created = f.api.Create(r);
    if (first) return UnavailableError("Operation timed out after 30000 milliseconds");
    return created;
  });
  auto id = f.faulty->Schedule(*info);
  ASSERT_THAT(id, IsOk());  // the retry's 409 is our own Job
  EXPECT_EQ(f.api.jobs.size(), 1u);
  EXPECT_EQ(f.http->RequestsTo("POST", kJobs).size(), 2u);
  EXPECT_EQ(Fixture::NameOf(*id), f.api.jobs.begin()->first);
  // Submitting the same request again (nothing lost this time) is a clash, as before.
  EXPECT_THAT(f.faulty->Schedule(*info), StatusIs(StatusCode::kAlreadyExists, HasSubstr("already exists")));
}

TEST(KubernetesFaults, AFailedConnectionIsNotMistakenForACreateThatReachedTheServer) {
  Faulty f;
  auto info = f.DryRun();
  ASSERT_THAT(info, IsOk());
  ASSERT_THAT(f.faulty->Schedule(*info), IsOk());
  // The same request again, after a refused connection: the 409 is a real clash.
  f.FailFirst("POST", kJobs, {internal::NotSentError("https://x", "Couldn't connect to server")},
              [&f](const Request& r) { return f.api.Create(r); });
  EXPECT_THAT(f.faulty->Schedule(*info), StatusIs(StatusCode::kAlreadyExists, HasSubstr("already exists")));
}

TEST(KubernetesFaults, ADeleteThatTimedOutAfterTheServerDidItSucceeds) {
  Faulty f;
  auto info = f.DryRun();
  ASSERT_THAT(info, IsOk());
  auto id = f.faulty->Schedule(*info);
  ASSERT_THAT(id, IsOk());
  f.api.phases[Fixture::NameOf(*id)] = "Completed";
  f.http->On("DELETE", std::string(kJobs) + "/", [&f](const Request& r) -> Result<HttpResponse> {
    bool first = !f.api.jobs.empty();
    auto deleted = f.api.Delete(r);
    if (first) return UnavailableError("Operation timed out after 30000 milliseconds");
    return deleted;
  });
  EXPECT_THAT(f.faulty->Delete(*id), IsOk());
  EXPECT_TRUE(f.api.jobs.empty());
}

TEST(KubernetesFaults, ACreateRefusedWith429IsRetriedAndNotMistakenForOurs) {
  Faulty f;
  auto info = f.DryRun();
  ASSERT_THAT(info, IsOk());
  f.FailFirst("POST", kJobs, {HttpResponse{429, TooMany(2)}}, [&f](const Request& r) { return f.api.Create(r); });
  ASSERT_THAT(f.faulty->Schedule(*info), IsOk());
  EXPECT_EQ(f.api.jobs.size(), 1u);
  EXPECT_THAT(f.clock->sleeps(), ElementsAre(milliseconds(2000)));
}

TEST(KubernetesFaults, AnExpiredTokenIsAClearErrorAndNotRetried) {
  Faulty f;
  auto info = f.DryRun();
  ASSERT_THAT(info, IsOk());
  f.http->On("POST", kJobs, 401, ApiStatus(401, "Unauthorized", "Unauthorized"));
  EXPECT_THAT(f.faulty->Schedule(*info),
              StatusIs(StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("HTTP 401: Unauthorized"), HasSubstr("an expired token?"))));
  EXPECT_EQ(f.http->RequestsTo("POST", kJobs).size(), 1u);
  EXPECT_TRUE(f.clock->sleeps().empty());
}

// `log -t` when the stream is cut under a running container (once with a clean close in the
// middle of a line, once with a reset): it goes on from the last line's second, and the lines the
// new stream repeats are dropped, so every line is read once. Times are compared as instants:
// the kubelet trims a fraction's trailing zeros, so "06.25Z" is later than "06.2Z".
TEST(KubernetesFaults, AFollowedLogCutMidwayGoesOnFromItsLastLineOnce) {
  Faulty f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  std::string pod = PodName(Fixture::NameOf(*id), "trainer", 0);
  std::string pod_path = "/api/v1/namespaces/default/pods/" + pod;
  f.FailFirst("GET", pod_path + "/log",
              {HttpResponse{200,
                            "2026-01-02T03:04:05.1Z a\n2026-01-02T03:04:06.2Z a2\n2026-01-02T03:04:06.25Z b\n"
                            "2026-01-02T03:04:06.25Z c\n2026-01-02T03:04:07Z par"},
               UnavailableError("follow log: Recv failure: Connection reset by peer")},
              [](const Request&) -> Result<HttpResponse> {
                return HttpResponse{200,
                                    "2026-01-02T03:04:06.2Z a2\n2026-01-02T03:04:06.25Z b\n"
                                    "2026-01-02T03:04:06.25Z c\n2026-01-02T03:04:07Z partial line\n"
                                    "2026-01-02T03:04:08Z d\n"};
              });
  // The container runs on after the first cut (the pod is read for its containers, then after
  // the cut); by the end of the third stream it has ended.
  f.FailFirst(
      "GET", pod_path,
      {HttpResponse{200, R"({"status":{"phase":"Running"}})"}, HttpResponse{200, R"({"status":{"phase":"Running"}})"}},
      [](const Request&) -> Result<HttpResponse> {
        return HttpResponse{200, R"({"status":{"phase":"Succeeded"}})"};
      });
  LogOptions o;
  o.role = "trainer";
  o.replica = 0;
  o.follow = true;
  auto it = f.sched->LogIter(*id, o);
  ASSERT_THAT(it, IsOk());
  auto read = testing::ReadAllLines(**it);
  ASSERT_THAT(read, IsOk());
  std::vector<std::string> lines = *read;
  EXPECT_THAT(lines, ElementsAre("2026-01-02T03:04:05.1Z a\n", "2026-01-02T03:04:06.2Z a2\n",
                                 "2026-01-02T03:04:06.25Z b\n", "2026-01-02T03:04:06.25Z c\n",
                                 "2026-01-02T03:04:07Z partial line\n", "2026-01-02T03:04:08Z d\n"));
  auto streams = f.http->RequestsTo("GET", pod_path + "/log");
  ASSERT_EQ(streams.size(), 3u);
  EXPECT_THAT(streams[0].path, ::testing::Not(HasSubstr("sinceTime")));
  for (size_t i : {1u, 2u}) {
    EXPECT_THAT(streams[i].path, HasSubstr("follow=true"));
    EXPECT_THAT(streams[i].path, HasSubstr("sinceTime=2026-01-02T03%3A04%3A06Z"));  // the last whole line's second
  }
}

// The API server gone for good under a followed log: retried with backoff, then the error.
TEST(KubernetesFaults, AFollowedLogGivesUpAfterAnOutageRunnerWaitWouldNotRideOut) {
  Faulty f;
  auto id = f.Run();
  ASSERT_THAT(id, IsOk());
  f.http->SetUnreachable();
  LogOptions o;
  o.role = "trainer";
  o.follow = true;
  auto started = f.clock->Now();  // before LogIter: the stream's thread starts there, on the fake clock
  auto it = f.sched->LogIter(*id, o);
  ASSERT_THAT(it, IsOk());
  EXPECT_THAT((*it)->Next(), StatusIs(StatusCode::kUnavailable, HasSubstr("Couldn't connect")));
  EXPECT_GE(f.clock->Now() - started, std::chrono::minutes(10));
  EXPECT_LT(f.clock->Now() - started, std::chrono::minutes(12));
}

}  // namespace faults

}  // namespace
}  // namespace torchx::schedulers::kubernetes
