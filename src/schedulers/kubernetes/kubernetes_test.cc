// The Volcano manifest against TorchX's own (goldens written by TorchX, tests/golden/kubernetes),
// names, tolerations, states, and kubeconfig reading. The API protocol is tested against an API
// server fake in tests/integration/kubernetes.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "schedulers/kubernetes/helpers.h"
#include "schedulers/kubernetes/kube_config.h"
#include "schedulers/kubernetes/kubernetes_scheduler.h"
#include "schedulers/kubernetes/node_hosts.h"
#include "schedulers/kubernetes/volcano_job.h"
#include "testing/fake_command_runner.h"
#include "testing/fake_http_client.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "torchx/specs/serialize.h"

namespace torchx::schedulers::kubernetes {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream b;
  b << f.rdbuf();
  return b.str();
}

std::string GoldenDir() { return std::string(TORCHX_SOURCE_DIR) + "/tests/golden/kubernetes/"; }

// The documented differences from TorchX's manifest, undone: the job's own namespace and labels,
// our version label, env sorted by name (TorchX keeps insertion order).
Json Comparable(Json job) {
  job["metadata"].erase("namespace");
  job["metadata"].erase("labels");
  for (Json& task : job["spec"]["tasks"]) {
    task["template"]["metadata"]["labels"].erase(kLabelVersion);
    Json& env = task["template"]["spec"]["containers"][0]["env"];
    std::sort(env.begin(), env.end(), [](const Json& a, const Json& b) { return a["name"] < b["name"]; });
  }
  return job;
}

TEST(VolcanoJob, MatchesTorchXsManifestForEachGoldenCase) {
  Json cases = Json::parse(ReadFile(GoldenDir() + "cases.json"));
  ASSERT_FALSE(cases.empty());
  for (const Json& c : cases) {
    SCOPED_TRACE(c["id"].get<std::string>());
    auto app = specs::AppDefFromJson(c["app"].dump());
    ASSERT_THAT(app, IsOk());
    VolcanoJobOptions o;
    o.job_name = c["job_name"];
    o.namespace_ = "default";
    o.queue = c["queue"];
    o.service_account = c.value("service_account", "");
    o.priority_class = c.value("priority_class", "");
    o.torchx_version = "0.1.0";
    auto ours = AppToVolcanoJob(*app, o);
    ASSERT_THAT(ours, IsOk());
    Json theirs = Json::parse(ReadFile(GoldenDir() + c["id"].get<std::string>() + ".torchx.json"));
    EXPECT_EQ(Comparable(*ours).dump(1), Comparable(theirs).dump(1));
  }
}

specs::Role SimpleRole(std::string name, int replicas = 1) {
  specs::Role r;
  r.name = std::move(name);
  r.image = "img";
  r.entrypoint = "python";
  r.num_replicas = replicas;
  r.resource = specs::Resource{1, 0, 1024, {}, {}, {}};
  return r;
}

VolcanoJobOptions Options() {
  VolcanoJobOptions o;
  o.job_name = "app-abc";
  o.namespace_ = "ns";
  o.queue = "q";
  o.torchx_version = "0.1.0";
  return o;
}

TEST(VolcanoJob, RetryPoliciesPerTask) {
  specs::Role r = SimpleRole("r", 2);
  r.max_retries = 2;
  r.retry_policy = specs::RetryPolicy::kReplica;
  auto job = AppToVolcanoJob(specs::AppDef{"a", {r}, {}}, Options());
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ((*job)["spec"]["tasks"][1]["policies"][1], (Json{{"event", "PodFailed"}, {"action", "RestartTask"}}));
  EXPECT_EQ((*job)["spec"]["tasks"][1]["maxRetry"], 2);

  r.retry_policy = specs::RetryPolicy::kRole;  // one role: the role is the job
  job = AppToVolcanoJob(specs::AppDef{"a", {r}, {}}, Options());
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ((*job)["spec"]["tasks"][0]["policies"][0]["action"], "RestartJob");

  auto refused = AppToVolcanoJob(specs::AppDef{"a", {r, SimpleRole("other")}, {}}, Options());
  EXPECT_THAT(refused, StatusIs(StatusCode::kInvalidArgument, HasSubstr("valid choices here: APPLICATION, REPLICA")));
}

TEST(VolcanoJob, TolerationsNodeSelectorsAndNamespace) {
  VolcanoJobOptions o = Options();
  o.tolerations = {*ParseToleration("gpu:true:NoSchedule"), *ParseToleration("spot")};
  o.node_selector = {{"zone", "a"}};
  specs::Role r = SimpleRole("r");
  r.resource.capabilities["node.kubernetes.io/instance-type"] = Value(std::string("m5.large"));
  auto job = AppToVolcanoJob(specs::AppDef{"a", {r}, {}}, o);
  ASSERT_THAT(job, IsOk());
  const Json& pod = (*job)["spec"]["tasks"][0]["template"]["spec"];
  EXPECT_EQ(pod["nodeSelector"], (Json{{"zone", "a"}, {"node.kubernetes.io/instance-type", "m5.large"}}));
  EXPECT_EQ(pod["tolerations"][0],
            (Json{{"key", "gpu"}, {"operator", "Equal"}, {"value", "true"}, {"effect", "NoSchedule"}}));
  EXPECT_EQ(pod["tolerations"][1], (Json{{"key", "spot"}, {"operator", "Exists"}}));
  EXPECT_EQ((*job)["metadata"]["namespace"], "ns");
}

TEST(VolcanoJob, PodOverlayFromRoleMetadataPatchesThePodTemplate) {
  specs::Role r = SimpleRole("r");
  // As torchx.specs.overlays.set_overlay stores it: nested by kind, operators as keys.
  Value::Map pod_spec{{"nodeSelector", Value(Value::Map{{"accelerator", Value(std::string("a100"))}})},
                      {"__del__:restartPolicy", Value()},
                      {"__join__:containers:name",
                       Value(Value::List{Value(Value::Map{{"name", Value(std::string("r-0"))}, {"tty", Value(true)}}),
                                         Value(Value::Map{{"name", Value(std::string("sidecar"))}})})}};
  r.metadata["kubernetes"] =
      Value(Value::Map{{"__torchx_overlays__", Value(true)}, {"V1Pod", Value(Value::Map{{"spec", Value(pod_spec)}})}});
  auto job = AppToVolcanoJob(specs::AppDef{"a", {r}, {}}, Options());
  ASSERT_THAT(job, IsOk());
  const Json& pod = (*job)["spec"]["tasks"][0]["template"]["spec"];
  EXPECT_EQ(pod["nodeSelector"]["accelerator"], "a100");
  EXPECT_FALSE(pod.contains("restartPolicy"));
  ASSERT_EQ(pod["containers"].size(), 2u);
  EXPECT_EQ(pod["containers"][0]["tty"], true);
  EXPECT_EQ(pod["containers"][1]["name"], "sidecar");
}

TEST(VolcanoJob, PodOverlayKeepsTorchXsLabelsAndTupleFilesReplaceLists) {
  testing::ScopedTempDir dir;
  std::string path = dir.Write("overlay.yaml",
                               "apiVersion: ignored\nmetadata:\n  __put__:labels: {team: a}\n"
                               "spec:\n  volumes: !!python/tuple\n    - name: only\n");
  specs::Role r = SimpleRole("r");
  r.mounts = {specs::BindMount{"/host", "/job", false}};
  r.metadata["kubernetes"] = Value(path);
  auto job = AppToVolcanoJob(specs::AppDef{"a", {r}, {}}, Options());
  ASSERT_THAT(job, IsOk());
  const Json& tmpl = (*job)["spec"]["tasks"][0]["template"];
  EXPECT_FALSE(tmpl.contains("apiVersion"));
  EXPECT_EQ(tmpl["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(tmpl["metadata"]["labels"][kLabelRoleName], "r");             // put back on top
  EXPECT_EQ(tmpl["spec"]["volumes"], Json::array({{{"name", "only"}}}));  // replaced, marker gone
}

TEST(VolcanoJob, PodOverlayFileAndBadOverlayErrors) {
  testing::ScopedTempDir dir;
  std::string path = dir.Write("overlay.yaml", "spec:\n  priorityClassName: high\n");
  specs::Role r = SimpleRole("r");
  r.metadata["kubernetes"] = Value("file://" + path);
  auto job = AppToVolcanoJob(specs::AppDef{"a", {r}, {}}, Options());
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ((*job)["spec"]["tasks"][0]["template"]["spec"]["priorityClassName"], "high");

  r.metadata["kubernetes"] = Value(std::string("s3://bucket/overlay.yaml"));
  EXPECT_THAT(AppToVolcanoJob(specs::AppDef{"a", {r}, {}}, Options()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("only local paths and file:// URIs")));
  r.metadata["kubernetes"] = Value(Value::Map{{"spec", Value(Value::Map{{"containers", Value(std::string("x"))}})}});
  EXPECT_THAT(AppToVolcanoJob(specs::AppDef{"a", {r}, {}}, Options()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("type mismatch for attr: `containers`. list != str")));
}

TEST(VolcanoJob, EnvValuesFromPodFields) {
  specs::Role r = SimpleRole("r");
  r.env = {{"POD_IP", "[FIELD_PATH]status.podIP"}, {"PLAIN", "[FIELD_PATH"}};
  auto job = AppToVolcanoJob(specs::AppDef{"a", {r}, {}}, Options());
  ASSERT_THAT(job, IsOk());
  const Json& env = (*job)["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"];
  EXPECT_EQ(env[0], (Json{{"name", "PLAIN"}, {"value", "[FIELD_PATH"}}));
  EXPECT_EQ(env[1], (Json{{"name", "POD_IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}}));
}

TEST(VolcanoJob, DescribeReadsTheAppBackFromTheManifest) {
  specs::Role a = SimpleRole("trainer", 3);
  a.args = {"-m", "train"};
  a.env = {{"A", "1"}, {"IP", "[FIELD_PATH]status.podIP"}};
  a.resource = specs::Resource{8, 2, 32000, {}, {{"vpc.amazonaws.com/efa", 1}}, {}};
  a.resource.capabilities["node.kubernetes.io/instance-type"] = Value(std::string("p4d.24xlarge"));
  a.port_map = {{"c10d", 29500}};
  a.max_retries = 2;
  a.retry_policy = specs::RetryPolicy::kReplica;
  a.min_replicas = 2;
  a.mounts = {specs::BindMount{"/data", "/mnt/data", true}, specs::VolumeMount{"claim", "/mnt/c", false},
              specs::DeviceMount{"/dev/fuse", "/dev/fuse", "rwm"}};
  specs::Role b = SimpleRole("reader");
  auto job = AppToVolcanoJob(specs::AppDef{"app", {a, b}, {}}, Options());
  ASSERT_THAT(job, IsOk());
  specs::AppDef back = AppFromVolcanoJob(*job);
  EXPECT_EQ(back.name, "app-abc");
  ASSERT_EQ(back.roles.size(), 2u);
  EXPECT_EQ(back.roles[0], a);
  EXPECT_EQ(back.roles[1], b);
}

TEST(VolcanoJob, DescribeTreatsQuantitiesItCannotReadAsUnknown) {
  Json job = Json::parse(R"({"metadata": {"name": "j"}, "spec": {"tasks": [{"name": "r-0", "template": {"spec": {
      "containers": [{"image": "i", "command": ["x"], "resources": {"limits": {
        "cpu": "99999999999999999999m", "memory": "4Ti", "nvidia.com/gpu": "x"}}}]}}}]}})");
  specs::AppDef app = AppFromVolcanoJob(job);
  ASSERT_EQ(app.roles.size(), 1u);
  EXPECT_EQ(app.roles[0].resource.cpu, -1);
  EXPECT_EQ(app.roles[0].resource.memMB, -1);
  EXPECT_EQ(app.roles[0].resource.gpu, -1);
  EXPECT_EQ(app.roles[0].entrypoint, "x");
}

TEST(Tolerations, ParseEachFormAndRefuseBadEffects) {
  auto t = ParseToleration("dedicated=ml:NoExecute");
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->key, "dedicated");
  EXPECT_EQ(t->value, "ml");
  EXPECT_EQ(t->op, "Equal");
  EXPECT_EQ(t->effect, "NoExecute");
  t = ParseToleration("key:PreferNoSchedule");
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->op, "Exists");
  EXPECT_EQ(t->effect, "PreferNoSchedule");
  t = ParseToleration("key:value");
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->value, "value");
  EXPECT_EQ(t->effect, "");
  EXPECT_THAT(ParseToleration("a:b:Sometimes"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("NoSchedule, PreferNoSchedule, NoExecute")));
  EXPECT_THAT(ParseToleration(":NoSchedule"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("has no key")));
  EXPECT_THAT(ParseToleration("a:b:c:NoSchedule"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("is not")));
}

TEST(Names, FollowTorchXAndFitKubernetesLimits) {
  EXPECT_EQ(NormalizeStr("-Foo_Bar.1-x"), "foobar1-x");
  std::string job = MakeJobName("My_Very.Long-Application-Name-For.Training");
  EXPECT_LE(job.size(), 63u);
  EXPECT_EQ(job.rfind("myverylong-applicati-", 0), 0u) << job;
  EXPECT_EQ(MakeJobName("123").rfind("app-", 0), 0u);
  EXPECT_EQ(TaskName("j", "Trainer_Role", 3), "trainerrole-3");
  std::string pod = PodName(job, std::string(80, 'r'), 12);
  EXPECT_EQ(pod.size(), 63u);
  EXPECT_TRUE(pod.ends_with("-12-0")) << pod;

  specs::Role a = SimpleRole(std::string(70, 'x') + "a"), b = SimpleRole(std::string(70, 'x') + "b");
  EXPECT_THAT(AppToVolcanoJob(specs::AppDef{"a", {a, b}, {}}, Options()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("same task name")));
}

TEST(States, VolcanoPhasesMapToTorchXStates) {
  using specs::AppState;
  EXPECT_EQ(JobPhaseToState("Pending"), AppState::kPending);
  EXPECT_EQ(JobPhaseToState("Restarting"), AppState::kRunning);
  EXPECT_EQ(JobPhaseToState("Aborted"), AppState::kCancelled);
  EXPECT_EQ(JobPhaseToState("Completed"), AppState::kSucceeded);
  EXPECT_EQ(JobPhaseToState("Terminated"), AppState::kFailed);
  EXPECT_EQ(JobPhaseToState("Something"), AppState::kUnknown);
  EXPECT_EQ(TaskPhaseToState("Bound"), AppState::kPending);
  EXPECT_EQ(TaskPhaseToState("Releasing"), AppState::kRunning);
  EXPECT_EQ(TaskPhaseToState("Failed"), AppState::kFailed);
}

constexpr const char* kConfig = R"(
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority: certs/ca.crt
- name: c2
  cluster:
    server: https://10.0.0.2:6443
    certificate-authority-data: aGVsbG8=
    insecure-skip-tls-verify: true
users:
- name: u-token
  user:
    token: abc
- name: u-certs
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
- name: u-exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: sh
      args: ["-c", "echo '{\"status\": {\"token\": \"from-exec\"}}'"]
contexts:
- name: dev
  context: {cluster: c1, user: u-token, namespace: team}
- name: prod
  context: {cluster: c2, user: u-certs}
- name: exec
  context: {cluster: c2, user: u-exec}
- name: broken
  context: {cluster: nowhere, user: u-token}
)";

TEST(KubeConfig, ReadsContextsClustersAndCredentials) {
  testing::ScopedTempDir dir;
  dir.Write("certs/ca.crt", "pem");
  auto dev = KubeConfigFromYaml(kConfig, dir.path(), {});
  ASSERT_THAT(dev, IsOk());
  EXPECT_EQ(dev->server, "https://10.0.0.1:6443");
  EXPECT_EQ(dev->namespace_, "team");
  EXPECT_EQ(dev->transport.ca_file, dir.path() + "/certs/ca.crt");  // relative to the file
  EXPECT_EQ(dev->transport.headers, std::vector<std::string>{"Authorization: Bearer abc"});

  auto prod = KubeConfigFromYaml(kConfig, dir.path(), {"prod"});
  ASSERT_THAT(prod, IsOk());
  EXPECT_EQ(prod->namespace_, "default");
  EXPECT_EQ(prod->transport.ca_pem, "hello");
  EXPECT_EQ(prod->transport.client_cert_pem, "cert");
  EXPECT_EQ(prod->transport.client_key_pem, "key");
  EXPECT_TRUE(prod->transport.insecure_skip_verify);
}

TEST(KubeConfig, ExecPluginsRunOnlyWhenAllowed) {
  auto off = KubeConfigFromYaml(kConfig, "", {"exec"});
  EXPECT_THAT(off, StatusIs(StatusCode::kFailedPrecondition, HasSubstr("TORCHX_KUBERNETES_ALLOW_EXEC=1")));
  auto system = internal::MakeSystemCommandRunner();  // the plugin is `sh -c 'echo ...'`: run it for real
  auto on = KubeConfigFromYaml(kConfig, "", {"exec", system.get()});
  ASSERT_THAT(on, IsOk());
  EXPECT_EQ(on->transport.headers, std::vector<std::string>{"Authorization: Bearer from-exec"});
}

TEST(KubeConfig, ExecPluginGetsItsEnvironmentAndItsFailuresAreNamed) {
  testing::FakeCommandRunner runner;
  runner.On({"env"}, 0, R"({"status": {"clientCertificateData": "C", "clientKeyData": "K"}})");
  auto certs = KubeConfigFromYaml(kConfig, "", {"exec", &runner});
  ASSERT_THAT(certs, IsOk());
  EXPECT_EQ(certs->transport.client_cert_pem, "C");
  EXPECT_EQ(certs->transport.client_key_pem, "K");
  ASSERT_EQ(runner.calls().size(), 1u);
  EXPECT_THAT(runner.calls()[0],
              ElementsAre("env", HasSubstr(R"("kind":"ExecCredential")"), "sh", "-c", HasSubstr("from-exec")));

  runner.On({"env"}, 1, "", "token expired\n");
  EXPECT_THAT(KubeConfigFromYaml(kConfig, "", {"exec", &runner}),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("exec plugin `sh` exited 1: token expired")));
  runner.On({"env"}, 0, "not json");
  EXPECT_THAT(KubeConfigFromYaml(kConfig, "", {"exec", &runner}),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("did not print an ExecCredential")));
}

TEST(KubeConfig, MissingPiecesNameWhatIsMissing) {
  EXPECT_THAT(
      KubeConfigFromYaml(kConfig, "", {"nope"}),
      StatusIs(StatusCode::kFailedPrecondition, HasSubstr("no context `nope`; contexts: broken, dev, exec, prod")));
  EXPECT_THAT(KubeConfigFromYaml(kConfig, "", {"broken"}),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("cluster `nowhere`, which is not defined")));
  EXPECT_THAT(KubeConfigFromYaml(kConfig, "/nonexistent", {}),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("certificate-authority")));
  EXPECT_THAT(KubeConfigFromYaml("clusters: 3", "", {}),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("is not a list")));
  EXPECT_THAT(KubeConfigFromYaml("current-context: x\n", "", {}),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("no context `x`")));
  EXPECT_THAT(KubeConfigFromYaml("{{{", "", {}), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("not YAML")));
  std::string bad_exec = std::string(kConfig) + R"(
- name: bad-exec
  context: {cluster: c2, user: u-bad-exec}
)";
  bad_exec.replace(bad_exec.find("contexts:"), 9, R"(- name: u-bad-exec
  user:
    exec: {command: sh, args: [[nested]], env: {A: b}}
contexts:)");
  testing::FakeCommandRunner runner;
  EXPECT_THAT(KubeConfigFromYaml(bad_exec, "", {"bad-exec", &runner}),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("wrong shape")));
  EXPECT_TRUE(runner.calls().empty());
}

// The kubernetes back-end refuses a workspace it could not push before touching any engine.
TEST(KubernetesWorkspace, NeedsAValidImageRepoBeforeBuildingAnything) {
  auto http = std::make_shared<testing::FakeHttpClient>();
  auto sched = MakeKubernetesScheduler("test", http);
  specs::AppDef app;
  app.name = "ws";
  specs::Role role;
  role.name = "trainer";
  role.image = "busybox";
  role.entrypoint = "true";
  app.roles.push_back(role);
  auto resolve = [&](specs::Cfg cfg) {
    cfg["queue"] = std::string("default");
    return sched->run_opts().Resolve(cfg).value();
  };
  auto missing = sched->BuildWorkspace("/nonexistent", app, resolve({}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("image_repo"));
  for (const char* bad : {"Registry.example.com/Team", "r.example.com/x:tag", "r.example.com/x@sha256:00", "/x"}) {
    auto refused = sched->BuildWorkspace("/nonexistent", app, resolve({{"image_repo", std::string(bad)}}));
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.message(), HasSubstr(bad));
  }
  EXPECT_EQ(app.roles[0].image, "busybox");  // nothing changed
  EXPECT_TRUE(http->requests().empty());     // and no engine was asked
}

// What Python's KubernetesScheduler asks through Scheduler::Helper: the manifest builder's
// pieces, JSON in and out, bad arguments named.
TEST(KubernetesHelpers, ManifestPiecesAsJson) {
  nlohmann::json app = nlohmann::json::parse(R"({"name":"train","roles":[{"name":"trainer","image":"busybox",)"
                                             R"("entrypoint":"echo","num_replicas":2}]})");
  nlohmann::json options = {{"queue", "default"}, {"namespace", "ns"}, {"job_name", "train-abc"}};
  auto job = KubernetesHelper("app_to_resource", nlohmann::json{{"app", app}, {"options", options}}.dump());
  ASSERT_THAT(job, IsOk());
  auto parsed = nlohmann::json::parse(*job);
  EXPECT_EQ(parsed["kind"], "Job");
  EXPECT_EQ(parsed["spec"]["tasks"].size(), 2u);
  auto pod = KubernetesHelper("role_to_pod", nlohmann::json{{"name", "c"}, {"app", app}, {"options", options}}.dump());
  ASSERT_THAT(pod, IsOk());
  EXPECT_EQ(nlohmann::json::parse(*pod)["spec"]["containers"][0]["name"], "c");
  auto labels = KubernetesHelper(
      "pod_labels", nlohmann::json{{"app", app}, {"role_idx", 0}, {"replica_id", 1}, {"job", "train-abc"}}.dump());
  ASSERT_THAT(labels, IsOk());
  EXPECT_EQ(nlohmann::json::parse(*labels)[kLabelReplicaId], "1");
  EXPECT_THAT(KubernetesHelper("job_app_part", R"({"name":"train"})"), IsOkAndHolds(std::string("\"train\"")));

  EXPECT_THAT(KubernetesHelper("pod_labels", nlohmann::json{{"app", app}, {"role_idx", 3}}.dump()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("role_idx 3")));
  options["reserved_memmb"] = -1;
  EXPECT_THAT(KubernetesHelper("app_to_resource", nlohmann::json{{"app", app}, {"options", options}}.dump()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("reserved_memmb must be an int")));
  EXPECT_THAT(KubernetesHelper("app_to_resource", "[]"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("object")));
  EXPECT_THAT(KubernetesHelper("nope", "{}"), StatusIs(StatusCode::kNotFound, HasSubstr("role_to_pod")));
}

Json EndedJob(const std::string& phase, const std::string& reason = "") {
  return {{"status", {{"state", {{"phase", phase}, {"reason", reason}}}}}};
}

Json Pod(Json status) { return {{"metadata", {{"name", "job-trainer-0-0"}}}, {"status", std::move(status)}}; }

// What a managed job reads from a Volcano Job and its pods, a row per kubelet and Volcano reason.
TEST(ClassifyVolcanoEnd, EachReason) {
  struct Row {
    Json pod_status;
    FailureCause cause;
  };
  Json oom = {{"phase", "Failed"},
              {"containerStatuses",
               {{{"name", "trainer"}, {"state", {{"terminated", {{"exitCode", 137}, {"reason", "OOMKilled"}}}}}}}}};
  Json exit1 = {{"phase", "Failed"},
                {"containerStatuses",
                 {{{"name", "trainer"}, {"state", {{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}}}}}}};
  Json disrupted = {
      {"phase", "Failed"},
      {"conditions", {{{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "PreemptionByScheduler"}}}}};
  for (const Row& row :
       {Row{{{"phase", "Failed"}, {"reason", "Evicted"}, {"message", "low on memory"}}, FailureCause::kEviction},
        Row{{{"phase", "Failed"}, {"reason", "NodeLost"}}, FailureCause::kNodeFailure},
        Row{{{"phase", "Failed"}, {"reason", "DeadlineExceeded"}}, FailureCause::kTimeLimit},
        Row{disrupted, FailureCause::kPreemption}, Row{oom, FailureCause::kOutOfMemory},
        Row{exit1, FailureCause::kUserError}}) {
    FailureReport r = ClassifyVolcanoEnd(EndedJob("Failed"), Json::array({Pod(row.pod_status)}));
    EXPECT_EQ(r.cause, row.cause) << row.pod_status.dump();
    EXPECT_THAT(r.reason, HasSubstr("pod job-trainer-0-0")) << row.pod_status.dump();
  }
  // An eviction explains the exit it caused in another pod.
  FailureReport both = ClassifyVolcanoEnd(EndedJob("Failed"),
                                          Json::array({Pod(exit1), Pod({{"phase", "Failed"}, {"reason", "Evicted"}})}));
  EXPECT_EQ(both.cause, FailureCause::kEviction);
  EXPECT_EQ(ClassifyVolcanoEnd(EndedJob("Aborted", "vcctl"), Json::array()).cause, FailureCause::kCancelled);
  EXPECT_EQ(ClassifyVolcanoEnd(EndedJob("Failed", "PodEvicted"), Json::array()).cause, FailureCause::kEviction);
  EXPECT_EQ(ClassifyVolcanoEnd(EndedJob("Failed"), Json::array()).cause, FailureCause::kUnknown);
}

TEST(HostsFromNodes, ReadyCordonedAndUnreadNodesAndOnlyRunningPods) {
  const char* nodes = R"({"kind": "NodeList", "items": [
    {"metadata": {"name": "a"}, "spec": {"unschedulable": true},
     "status": {"capacity": {"cpu": "8", "memory": "32Gi"}, "allocatable": {"cpu": "7500m", "memory": "30Gi"},
                "conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.1.0.1"}]}},
    {"metadata": {"name": "b"}, "status": {"capacity": {"cpu": "4", "memory": "8Gi"},
                                           "conditions": [{"type": "Ready", "status": "Unknown"}]}},
    {"metadata": {}}]})";
  const char* pods = R"({"items": [
    {"metadata": {"labels": {"app.kubernetes.io/instance": "j1", "torchx.pytorch.org/role-name": "t",
                             "torchx.pytorch.org/replica-id": "0"}},
     "spec": {"nodeName": "a"}, "status": {"phase": "Running"}},
    {"metadata": {"labels": {"app.kubernetes.io/instance": "j1", "torchx.pytorch.org/role-name": "t",
                             "torchx.pytorch.org/replica-id": "1"}},
     "spec": {"nodeName": "b"}, "status": {"phase": "Pending"}}]})";
  auto hosts =
      HostsFromNodes(nodes, R"({"items": [{"metadata": {"name": "a"}, "usage": {"cpu": "1500m"}}]})", pods, "ns");
  ASSERT_THAT(hosts, IsOk());
  ASSERT_EQ(hosts->size(), 2u);  // a node without a name is none
  const HostInfo& a = (*hosts)[0];
  EXPECT_EQ(a.state, "Ready,SchedulingDisabled");
  EXPECT_EQ(a.address, "10.1.0.1");
  EXPECT_EQ(a.cpus, 7.5);  // allocatable, not capacity
  EXPECT_EQ(a.memory_mb, 30 * 1024);
  EXPECT_EQ(a.cpus_used, 1.5);
  EXPECT_EQ(a.memory_used_mb, std::nullopt);
  ASSERT_EQ(a.apps.size(), 1u);
  EXPECT_EQ(a.apps[0].app_id, "ns:j1");
  EXPECT_THAT(a.apps[0].where, ElementsAre("t/0"));
  EXPECT_EQ((*hosts)[1].state, "Unknown");
  EXPECT_EQ((*hosts)[1].cpus, 4);         // capacity where there is no allocatable
  EXPECT_TRUE((*hosts)[1].apps.empty());  // its pod is not running
  EXPECT_THAT(HostsFromNodes("[]", "", "{}", "ns"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("NodeList")));
}

}  // namespace
}  // namespace torchx::schedulers::kubernetes
