// The ray back-end's pure parts: Ray's job details decoded, the driver's log frames read back,
// failure causes, app ids and addresses, the request a dry run builds, and packages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "schedulers/ray/ray_frames.h"
#include "schedulers/ray/ray_job.h"
#include "schedulers/ray/ray_nodes.h"
#include "schedulers/ray/ray_package.h"
#include "schedulers/ray/ray_request.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::schedulers::ray {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;
using specs::AppState;

TEST(RayJobTest, DecodesJobDetails) {
  auto job = ParseRayJob(
      R"({"type":"SUBMISSION","job_id":null,"submission_id":"t1","status":"FAILED","entrypoint":"python3 -m x",
          "message":"Job entrypoint command failed with exit code 3","error_type":"JOB_ENTRYPOINT_COMMAND_ERROR",
          "start_time":1795736992352,"end_time":1795736994562,"metadata":{"torchx.launcher":"torchx 1","n":5},
          "driver_node_id":"abc","driver_exit_code":3})",
      "ray: job t1");
  ASSERT_THAT(job, IsOk());
  EXPECT_EQ(job->submission_id, "t1");
  EXPECT_EQ(job->status, "FAILED");
  EXPECT_EQ(job->error_type, "JOB_ENTRYPOINT_COMMAND_ERROR");
  EXPECT_DOUBLE_EQ(*job->start_time, 1795736992.352);
  EXPECT_DOUBLE_EQ(*job->end_time, 1795736994.562);
  EXPECT_EQ(job->driver_exit_code, 3);
  EXPECT_EQ(job->metadata.size(), 1u);  // only string values are kept
  EXPECT_EQ(job->metadata.at("torchx.launcher"), "torchx 1");
}

TEST(RayJobTest, NullsAndMissingFieldsAreAbsentNotErrors) {
  auto job = ParseRayJob(R"({"submission_id":"t","status":"PENDING","message":null,"metadata":null,
                             "start_time":null,"end_time":0,"driver_exit_code":null})",
                         "w");
  ASSERT_THAT(job, IsOk());
  EXPECT_FALSE(job->start_time);
  EXPECT_FALSE(job->end_time);
  EXPECT_FALSE(job->driver_exit_code);
  EXPECT_TRUE(job->message.empty());
}

TEST(RayJobTest, WhatIsNotAJobIsAnErrorNamingTheCall) {
  EXPECT_THAT(ParseRayJob("Job nope does not exist", "ray: job nope"),
              StatusIs(StatusCode::kUnavailable, HasSubstr("ray: job nope: the answer is not JSON")));
  EXPECT_THAT(ParseRayJob(R"({"submission_id":"t"})", "w"), StatusIs(StatusCode::kUnavailable, HasSubstr("no status")));
  EXPECT_THAT(ParseRayJob(R"({"status":"RUNNING"})", "w"),
              StatusIs(StatusCode::kUnavailable, HasSubstr("no submission_id")));
  EXPECT_THAT(ParseRayJob("[1]", "w"), StatusIs(StatusCode::kUnavailable, HasSubstr("not a job")));
  EXPECT_THAT(ParseRayJobList("{}", "w"), StatusIs(StatusCode::kUnavailable, HasSubstr("not a JSON list")));
}

TEST(RayJobTest, ListSkipsDriversWithoutASubmissionId) {
  auto jobs = ParseRayJobList(R"([{"type":"DRIVER","submission_id":null,"status":"SUCCEEDED"},
                                  {"submission_id":"a","status":"RUNNING"}, 7])",
                              "w");
  ASSERT_THAT(jobs, IsOk());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].submission_id, "a");
}

TEST(RayJobTest, StatesMapToTorchX) {
  EXPECT_EQ(RayJobState("PENDING"), AppState::kPending);
  EXPECT_EQ(RayJobState("RUNNING"), AppState::kRunning);
  EXPECT_EQ(RayJobState("STOPPED"), AppState::kCancelled);
  EXPECT_EQ(RayJobState("SUCCEEDED"), AppState::kSucceeded);
  EXPECT_EQ(RayJobState("FAILED"), AppState::kFailed);
  EXPECT_EQ(RayJobState("NEW_STATE"), AppState::kUnknown);
}

TEST(RayFramesTest, ReplicaLinesAreSplitByRoleReplicaAndStream) {
  auto out = ParseReplicaLine("\x1eL trainer 12 o\x1fhello world\n");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->role, "trainer");
  EXPECT_EQ(out->replica, 12);
  EXPECT_FALSE(out->is_stderr);
  EXPECT_EQ(out->text, "hello world\n");
  auto last = ParseReplicaLine("\x1eL t 0 E\x1fno newline\n");  // the driver added the newline
  ASSERT_TRUE(last);
  EXPECT_TRUE(last->is_stderr);
  EXPECT_EQ(last->text, "no newline");
  // A replica's text may hold anything, the frame's bytes included.
  EXPECT_EQ(ParseReplicaLine("\x1eL t 0 o\x1f\x1eL x 1 e\x1fy\n")->text, "\x1eL x 1 e\x1fy\n");
  for (const char* bad : {"plain line\n", "\x1eS {}\n", "\x1eL t 0 x\x1fz\n", "\x1eL t -1 o\x1fz\n", "\x1eL t 0 o z\n",
                          "\x1eL  0 o\x1fz\n", "\x1eL t 0x o\x1fz\n"}) {
    EXPECT_FALSE(ParseReplicaLine(bad)) << bad;
  }
}

TEST(RayFramesTest, GangStatusFollowsTheDriversFrames) {
  std::string log =
      "2026 INFO Runtime env is setting up.\n"
      "\x1eS {\"phase\":\"pending\",\"bundles\":[]}\n"
      "\x1eS {\"phase\":\"running\",\"restarts\":0,\"replicas\":[{\"role\":\"t\",\"replica\":0,\"node_id\":\"n0\","
      "\"host\":\"10.0.0.1\",\"hostname\":\"a\",\"pid\":4242},{\"role\":\"t\",\"replica\":1,\"node_id\":\"n1\","
      "\"host\":\"10.0.0."
      "2\","
      "\"hostname\":\"b\"}]}\n"
      "\x1eL t 0 o\x1f\x1eS {\"phase\":\"succeeded\"}\n"  // a replica printing a frame is not the driver
      "\x1eS {\"phase\":\"exited\",\"role\":\"t\",\"replica\":1,\"exit_code\":3}\n"
      "\x1eS not json\n";
  GangStatus g = ReadGangStatus(log);
  EXPECT_EQ(g.phase, GangPhase::kRunning);
  ASSERT_EQ(g.replicas.size(), 2u);
  EXPECT_EQ(g.replicas[0].node_id, "n0");
  EXPECT_EQ(g.replicas[0].pid, 4242);
  EXPECT_EQ(g.replicas[1].pid, std::nullopt);  // a driver that reported none (an older one)
  EXPECT_EQ(g.replicas[1].host, "10.0.0.2");
  EXPECT_FALSE(g.replicas[0].exit_code);
  EXPECT_EQ(g.replicas[1].exit_code, 3);

  g = ReadGangStatus(log +
                     "\x1eS {\"phase\":\"failed\",\"role\":\"t\",\"replica\":1,\"exit_code\":3,"
                     "\"cause\":\"user_error\",\"restarts\":2,\"stderr_tail\":[\"boom\",\"bang\"]}");
  EXPECT_EQ(g.phase, GangPhase::kFailed);
  EXPECT_EQ(g.restarts, 2);
  EXPECT_EQ(g.failed_role, "t");
  EXPECT_EQ(g.failed_replica, 1);
  EXPECT_EQ(g.failed_exit_code, 3);
  EXPECT_THAT(g.stderr_tail, ElementsAre("boom", "bang"));
  EXPECT_EQ(ReadGangStatus("").phase, GangPhase::kNone);
}

// GET /nodes?view=summary as Ray 2.60 answers it (the fields a host needs; two nodes on one machine).
constexpr const char* kNodesSummary = R"({"result": true, "msg": "", "data": {"summary": [
  {"hostname": "vm", "ip": "192.0.2.2", "cpu": 50.0, "cpus": [2, 2],
   "mem": [25276502016, 24328978432, 3.7, 947523584],
   "raylet": {"nodeId": "14e5894d858bb20b6201", "state": "ALIVE", "isHeadNode": true,
              "resourcesTotal": {"CPU": 2.0, "memory": 4294967296.0, "GPU": 1.0}}},
  {"hostname": "vm", "ip": "192.0.2.2", "cpu": 0.0, "cpus": [2, 2], "mem": [25276502016, 1, 0, 0],
   "raylet": {"nodeId": "99aa00bb11cc22dd33ee", "state": "ALIVE", "isHeadNode": false,
              "resourcesTotal": {"CPU": 2.0}}},
  {"hostname": "gone", "raylet": {}}
]}})";

TEST(RayNodesTest, EachNodeWithItsResourcesAndReadings) {
  auto nodes_or = ParseRayNodes(kNodesSummary);
  ASSERT_THAT(nodes_or, IsOk());
  auto& nodes = *nodes_or;
  ASSERT_EQ(nodes.size(), 2u);  // one without a raylet is no node yet
  EXPECT_EQ(nodes[0].node_id, "14e5894d858bb20b6201");
  EXPECT_EQ(nodes[0].host.name, "vm/14e5894d");  // two nodes share the machine: told apart by id
  EXPECT_EQ(nodes[1].host.name, "vm/99aa00bb");
  EXPECT_EQ(nodes[0].host.address, "192.0.2.2");
  EXPECT_EQ(nodes[0].host.state, "ALIVE");
  EXPECT_THAT(nodes[0].host.groups, ElementsAre("head"));
  EXPECT_TRUE(nodes[1].host.groups.empty());
  EXPECT_EQ(nodes[0].host.cpus, 2);
  EXPECT_EQ(nodes[0].host.cpus_used, 1.0);
  EXPECT_EQ(nodes[0].host.gpus, 1);
  EXPECT_EQ(nodes[0].host.memory_mb, 24105);
  EXPECT_EQ(nodes[0].host.memory_used_mb, 903);
  EXPECT_THAT(ParseRayNodes("{}"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("summary")));
  EXPECT_THAT(ParseRayNodes("not json"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("summary")));
}

TEST(RayNodesTest, AGangsLiveReplicasGoOnTheirNodes) {
  auto nodes_or = ParseRayNodes(kNodesSummary);
  ASSERT_THAT(nodes_or, IsOk());
  auto& nodes = *nodes_or;
  GangStatus g;
  g.replicas = {{"trainer", 0, "14e5894d858bb20b6201", "192.0.2.2", "vm", std::nullopt, 10},
                {"trainer", 1, "99aa00bb11cc22dd33ee", "192.0.2.2", "vm", std::nullopt, 11},
                {"ps", 0, "14e5894d858bb20b6201", "192.0.2.2", "vm", 0, 12}};  // ended
  PlaceGang("127.0.0.1:8265-tx-1", g, nodes);
  ASSERT_EQ(nodes[0].host.apps.size(), 1u);
  EXPECT_EQ(nodes[0].host.apps[0].app_id, "127.0.0.1:8265-tx-1");
  EXPECT_THAT(nodes[0].host.apps[0].where, ElementsAre("trainer/0"));
  EXPECT_THAT(nodes[1].host.apps[0].where, ElementsAre("trainer/1"));
}

TEST(RayFramesTest, ReadableLogShowsReplicaLinesAndDropsStatus) {
  EXPECT_EQ(ReadableLog("Job failed, last logs:\n\x1eS {\"phase\":\"running\"}\n\x1eL t 1 e\x1f"
                        "boom\n"
                        "\x1eL t 0 O\x1fpartial\ntail"),
            "Job failed, last logs:\nt/1 boom\nt/0 partial\ntail");
}

TEST(RayFramesTest, FailureCauses) {
  GangStatus none;
  EXPECT_EQ(ClassifyRayFailure("STOPPED", "", "", none).cause, FailureCause::kCancelled);
  GangStatus user;
  user.phase = GangPhase::kFailed;
  user.failed_role = "t";
  user.failed_replica = 1;
  user.failed_exit_code = 3;
  user.failure_cause = "user_error";
  FailureReport r = ClassifyRayFailure("FAILED", "JOB_ENTRYPOINT_COMMAND_ERROR", "", user);
  EXPECT_EQ(r.cause, FailureCause::kUserError);
  EXPECT_EQ(r.reason, "replica t/1 exited with code 3");
  GangStatus lost = user;
  lost.failed_exit_code.reset();
  lost.failure_cause = "node_failure";
  EXPECT_EQ(ClassifyRayFailure("FAILED", "", "", lost).cause, FailureCause::kNodeFailure);
  EXPECT_EQ(ClassifyRayFailure("FAILED", "JOB_SUPERVISOR_ACTOR_DIED", "the node died", none).cause,
            FailureCause::kEngineLost);
  EXPECT_EQ(ClassifyRayFailure("FAILED", "RUNTIME_ENV_SETUP_FAILURE", "pip failed", none).cause,
            FailureCause::kUserError);
  EXPECT_EQ(ClassifyRayFailure("FAILED", "", "", none).cause, FailureCause::kUnknown);
}

TEST(RayFramesTest, DecoderKeepsOneReplicasStreamAcrossChunks) {
  std::string log =
      "ray line\n\x1eL t 0 o\x1fout 1\n\x1eL t 1 o\x1fother\n\x1eL t 0 e\x1f"
      "err 1\n\x1eL t 0 O\x1flast\n";
  for (auto [stream, want] : std::vector<std::pair<LogStream, std::vector<std::string>>>{
           {LogStream::kCombined, {"out 1\n", "err 1\n", "last"}},
           {LogStream::kStdout, {"out 1\n", "last"}},
           {LogStream::kStderr, {"err 1\n"}}}) {
    auto d = MakeReplicaLineDecoder("t", 0, stream);
    std::vector<std::string> lines;
    for (char c : log) d->Feed(std::string_view(&c, 1), lines);  // one byte at a time
    d->Flush(lines);
    EXPECT_EQ(lines, want);
  }
}

TEST(RayRequestTest, AppIdsCarryTheDashboardAddress) {
  EXPECT_EQ(RayAppId("127.0.0.1:8265", "train-abc"), "127.0.0.1:8265-train-abc");
  auto parts = ParseRayAppId("127.0.0.1:8265-train-abc");
  ASSERT_THAT(parts, IsOk());
  EXPECT_EQ(parts->first, "127.0.0.1:8265");
  EXPECT_EQ(parts->second, "train-abc");
  parts = ParseRayAppId("ray-head-1.example.com:8265-a-b");
  ASSERT_THAT(parts, IsOk());
  EXPECT_EQ(parts->first, "ray-head-1.example.com:8265");
  // The id names a file of the launcher's and the host gets the auth token: nothing else passes.
  for (const char* bad : {"train-abc", "127.0.0.1:8265-", ":8265-x", "host:port-x", "h:1-/home/u/.ssh/x",
                          "h:1-../../etc/passwd", "h:1-..", "a@evil:80-x", "ev/il:80-x", "h:1-a b"}) {
    EXPECT_THAT(ParseRayAppId(bad), StatusIs(StatusCode::kInvalidArgument, HasSubstr("is not `<dashboard"))) << bad;
  }
}

TEST(RayRequestTest, AddressesAreHostAndPort) {
  EXPECT_THAT(NormalizeAddress("http://10.1.2.3:8265/", "RAY_ADDRESS"), IsOkAndHolds("10.1.2.3:8265"));
  EXPECT_THAT(NormalizeAddress("head:8265", "dashboard_address"), IsOkAndHolds("head:8265"));
  for (const char* bad : {"ray://head:10001", "head", "https://head:8265", "auto", "head:port"}) {
    EXPECT_THAT(NormalizeAddress(bad, "dashboard_address"),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("dashboard_address")))
        << bad;
  }
}

specs::AppDef TwoRoleApp(const std::string& dir) {
  specs::AppDef app;
  app.name = "train";
  specs::Role t;
  t.name = "trainer";
  t.image = dir;
  t.entrypoint = "python3";
  t.args = {"-m", "train", "--rank0=${rank0_env}", "--id=${app_id}", "--replica=${replica_id}", "${img_root}/x"};
  t.env = {{"REPLICA", "${replica_id}"}};
  t.num_replicas = 2;
  t.max_retries = 3;
  t.retry_policy = specs::RetryPolicy::kReplica;
  t.resource.cpu = 2;
  t.resource.gpu = 1;
  t.resource.memMB = 1024;
  t.resource.devices = {{"vpc.amazonaws.com/efa", 2}};
  specs::Role ps = t;
  ps.name = "ps";
  ps.num_replicas = 1;
  ps.resource = specs::Resource{1, 0, -1, {}, {}, {}};
  app.roles = {t, ps};
  return app;
}

TEST(RayRequestTest, TheDriversSpecHasEveryReplicaResolved) {
  testing::ScopedTempDir dir;
  RayOptions o;
  o.address = "127.0.0.1:8265";
  o.placement_strategy = "STRICT_SPREAD";
  auto req = BuildRayRequest(TwoRoleApp(dir.path()), o, "train-x1", "sess");
  ASSERT_THAT(req, IsOk());
  EXPECT_EQ(req->working_dir, std::filesystem::absolute(dir.path()).lexically_normal().string());
  Json spec = Json::parse(req->spec_json);
  EXPECT_EQ(spec["placement_strategy"], "STRICT_SPREAD");
  EXPECT_EQ(spec["app_id"], "train-x1");
  ASSERT_EQ(spec["roles"].size(), 2u);
  const Json& t = spec["roles"][0];
  EXPECT_EQ(t["retry_policy"], "REPLICA");
  EXPECT_EQ(t["max_retries"], 3);
  EXPECT_EQ(t["resource"],
            Json::parse(R"({"cpu":2,"gpu":1,"memory":1073741824,"custom":{"vpc.amazonaws.com/efa":2}})"));
  ASSERT_EQ(t["replicas"].size(), 2u);
  EXPECT_EQ(t["replicas"][1]["argv"],
            Json::parse(R"(["python3","-m","train","--rank0=TORCHX_RANK0_HOST","--id=train-x1","--replica=1","./x"])"));
  EXPECT_EQ(t["replicas"][1]["env"]["REPLICA"], "1");
  EXPECT_EQ(spec["roles"][1]["resource"], Json::parse(R"({"cpu":1,"custom":{}})"));
  EXPECT_EQ(req->metadata.at(std::string(kMetadataSession)), "sess");
  EXPECT_EQ(req->metadata.at("torchx.app_name"), "train");
  EXPECT_TRUE(req->metadata.contains(std::string(kMetadataLauncher)));
  auto back = RayRequestFromJson(RayRequestToJson(*req));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->spec_json, req->spec_json);
  EXPECT_EQ(back->metadata, req->metadata);
}

TEST(RayRequestTest, RefusesWhatRayCannotRunNamingTheField) {
  testing::ScopedTempDir dir, other;
  RayOptions o;
  o.address = "h:1";
  specs::AppDef app = TwoRoleApp(dir.path());
  app.roles[0].image = "ghcr.io/pytorch/torchx:0.7.0";
  EXPECT_THAT(BuildRayRequest(app, o, "x", "s"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("role `trainer` image `ghcr.io/pytorch/torchx:0.7.0` is not a local directory")));
  app = TwoRoleApp(dir.path());
  app.roles[1].image = other.path();
  EXPECT_THAT(BuildRayRequest(app, o, "x", "s"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("one working_dir")));
  app = TwoRoleApp(dir.path());
  app.roles[0].mounts.push_back(specs::BindMount{"/a", "/b", false});
  EXPECT_THAT(BuildRayRequest(app, o, "x", "s"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("role `trainer` has mounts")));
  o.placement_strategy = "RANDOM";
  EXPECT_THAT(BuildRayRequest(TwoRoleApp(dir.path()), o, "x", "s"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("placement_strategy `RANDOM` is not one of SPREAD, PACK, STRICT_SPREAD")));
}

TEST(RayRequestTest, RequirementsComeFromTheFileOrTheWorkingDirectory) {
  testing::ScopedTempDir dir;
  std::ofstream(std::filesystem::path(dir.path()) / "requirements.txt")
      << "# pinned\nnumpy==2.0  # why\n\n  tqdm\ngit+https://x/y.git#egg=y\n";
  RayOptions o;
  o.address = "h:1";
  auto req = BuildRayRequest(TwoRoleApp(dir.path()), o, "x", "s");
  ASSERT_THAT(req, IsOk());
  EXPECT_THAT(req->pip, ElementsAre("numpy==2.0", "tqdm", "git+https://x/y.git#egg=y"));
  o.requirements = dir.path() + "/missing.txt";
  EXPECT_THAT(BuildRayRequest(TwoRoleApp(dir.path()), o, "x", "s"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("missing.txt` cannot be read")));
}

TEST(RayPackageTest, SameFilesSameBytesSameName) {
  testing::ScopedTempDir dir;
  namespace fs = std::filesystem;
  fs::create_directories(fs::path(dir.path()) / "pkg" / "data");
  fs::create_directories(fs::path(dir.path()) / "skip");
  std::ofstream(fs::path(dir.path()) / "train.py") << "print(1)\n";
  std::ofstream(fs::path(dir.path()) / "pkg" / "data" / "x.txt") << "x";
  std::ofstream(fs::path(dir.path()) / "skip" / "big.bin") << "big";
  std::ofstream(fs::path(dir.path()) / "notes.log") << "log";
  std::ofstream(fs::path(dir.path()) / ".torchxignore") << "skip\n*.log\n";
  auto files = DirectoryFiles(dir.path());
  ASSERT_THAT(files, IsOk());
  std::vector<std::string> names;
  for (const PackageFile& f : *files) names.push_back(f.archive_path);
  std::sort(names.begin(), names.end());
  EXPECT_THAT(names, ElementsAre(".torchxignore", "pkg/data/x.txt", "train.py"));
  auto a = ZipPackage(*files);
  std::reverse(files->begin(), files->end());
  auto b = ZipPackage(*files);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(*a, *b);
  EXPECT_TRUE(a->starts_with("PK\x03\x04"));
  std::string uri = PackageUri(*a);
  EXPECT_THAT(uri, ::testing::MatchesRegex("gcs://_ray_pkg_[0-9a-f]{32}\\.zip"));
  EXPECT_EQ(PackageName(uri), uri.substr(6));
  auto c = ZipPackage({{"a.py", "", "other", false}});
  ASSERT_THAT(c, IsOk());
  EXPECT_NE(PackageUri(*c), uri);
  EXPECT_THAT(DirectoryFiles(dir.path() + "/train.py"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("is not a directory")));
}

}  // namespace
}  // namespace torchx::schedulers::ray
