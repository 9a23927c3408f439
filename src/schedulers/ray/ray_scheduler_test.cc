// The ray scheduler against a fake Job Submission API: a FakeHttpClient whose handlers keep a
// small model of Ray's dashboard (jobs, their logs, packages). What the scheduler sends for
// each call and how it reads each answer and error. The live-cluster tests are
// tests/integration/ray.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "schedulers/ray/ray_scheduler.h"
#include "testing/fake_clock.h"
#include "testing/fake_command_runner.h"
#include "testing/fake_http_client.h"
#include "testing/log_lines.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "torchx/specs/serialize.h"

namespace torchx::schedulers::ray {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using internal::HttpResponse;
using specs::AppState;
using testing::FakeHttpClient;
using Request = FakeHttpClient::Request;

// Ray's dashboard, as much of it as the scheduler uses.
struct FakeRay {
  std::shared_ptr<FakeHttpClient> http = std::make_shared<FakeHttpClient>();
  std::map<std::string, Json> jobs;         // submission id -> details
  std::map<std::string, std::string> logs;  // submission id -> log
  std::map<std::string, std::string> packages;
  std::string session = "session_1";
  std::mutex mu;

  FakeRay() {
    http->On("GET", "/api/version", [this](const Request&) -> Result<HttpResponse> {
      std::lock_guard lock(mu);
      return HttpResponse{200, Json{{"version", "4"}, {"ray_version", "2.60.0"}, {"session_name", session}}.dump()};
    });
    http->On("POST", "/api/jobs/", [this](const Request& r) -> Result<HttpResponse> {
      std::lock_guard lock(mu);
      Json body = Json::parse(r.body);
      std::string id = body["submission_id"];
      if (jobs.contains(id)) return HttpResponse{400, "Job with submission_id " + id + " already exists."};
      jobs[id] = {{"submission_id", id},
                  {"status", "PENDING"},
                  {"entrypoint", body["entrypoint"]},
                  {"metadata", body["metadata"]},
                  {"runtime_env", body["runtime_env"]},
                  {"start_time", 1700000000000}};
      logs[id] = "";
      return HttpResponse{200, Json{{"job_id", id}, {"submission_id", id}}.dump()};
    });
    http->On("GET", "/api/jobs/", [this](const Request& r) -> Result<HttpResponse> {
      std::lock_guard lock(mu);
      std::string rest = r.path.substr(std::string("/api/jobs/").size());
      if (rest.empty()) {
        Json all = Json::array();
        for (auto& [id, j] : jobs) all.push_back(j);
        all.push_back({{"type", "DRIVER"}, {"submission_id", nullptr}, {"status", "SUCCEEDED"}});
        return HttpResponse{200, all.dump()};
      }
      bool want_logs = rest.ends_with("/logs");
      std::string id = want_logs ? rest.substr(0, rest.size() - 5) : rest;
      if (!jobs.contains(id)) return HttpResponse{404, "Job " + id + " does not exist"};
      if (want_logs) return HttpResponse{200, Json{{"logs", logs[id]}}.dump()};
      return HttpResponse{200, jobs[id].dump()};
    });
    http->On("POST", "/api/jobs/x", 404, "");  // replaced per job by /stop below
    http->On("DELETE", "/api/jobs/", [this](const Request& r) -> Result<HttpResponse> {
      std::lock_guard lock(mu);
      std::string id = r.path.substr(std::string("/api/jobs/").size());
      if (!jobs.contains(id)) return HttpResponse{404, "Job " + id + " does not exist"};
      std::string st = jobs[id]["status"];
      if (st == "RUNNING" || st == "PENDING") return HttpResponse{400, "Job " + id + " is not in a terminal state"};
      jobs.erase(id);
      return HttpResponse{200, R"({"deleted": true})"};
    });
    http->On("GET", "/api/packages/gcs/", [this](const Request& r) -> Result<HttpResponse> {
      std::lock_guard lock(mu);
      return HttpResponse{packages.contains(r.path.substr(18)) ? 200L : 404L, ""};
    });
    http->On("PUT", "/api/packages/gcs/", [this](const Request& r) -> Result<HttpResponse> {
      std::lock_guard lock(mu);
      packages[r.path.substr(18)] = r.body;
      return HttpResponse{200, ""};
    });
  }
  void OnStop(const std::string& id) {
    http->On("POST", "/api/jobs/" + id + "/stop", [this, id](const Request&) -> Result<HttpResponse> {
      std::lock_guard lock(mu);
      jobs[id]["status"] = "STOPPED";
      return HttpResponse{200, R"({"stopped": true})"};
    });
  }
  void Set(const std::string& id, const std::string& status, const std::string& log) {
    std::lock_guard lock(mu);
    jobs[id]["status"] = status;
    logs[id] = log;
  }
};

constexpr const char* kRunning =
    "\x1eS {\"phase\":\"running\",\"restarts\":1,\"replicas\":[{\"role\":\"sh\",\"replica\":0,\"node_id\":\"n0\","
    "\"host\":\"10.0.0.1\",\"hostname\":\"a\"},{\"role\":\"sh\",\"replica\":1,\"node_id\":\"n1\",\"host\":\"10.0.0.2\","
    "\"hostname\":\"b\"}]}\n";

class RaySchedulerTest : public ::testing::Test {
 protected:
  FakeRay ray;
  std::shared_ptr<testing::FakeCommandRunner> commands = std::make_shared<testing::FakeCommandRunner>();
  std::map<std::string, std::string> env;
  std::shared_ptr<testing::FakeClock> clock = std::make_shared<testing::FakeClock>();
  std::unique_ptr<Scheduler> sched = MakeRayScheduler(
      "sess", ray.http, commands,
      [this](const char* name) -> std::optional<std::string> {
        auto it = env.find(name);
        return it == env.end() ? std::nullopt : std::optional(it->second);
      },
      clock);
  testing::ScopedTempDir dir;
  testing::ScopedTempDir state_dir;
  testing::ScopedEnv state_env{"TORCHX_STATE_DIR", state_dir.path().c_str()};

  specs::AppDef App(int replicas = 2) {
    specs::AppDef app;
    app.name = "echo";
    specs::Role r;
    r.name = "sh";
    r.image = dir.path();
    r.entrypoint = "sh";
    r.args = {"-c", "echo ${replica_id}"};
    r.num_replicas = replicas;
    r.resource = specs::Resource{1, 0, 512, {}, {}, {}};
    app.roles = {r};
    return app;
  }

  std::string Submit(const specs::Cfg& cfg = {}) {
    auto info = sched->SubmitDryRun(App(), cfg);
    EXPECT_THAT(info, IsOk());
    auto id = sched->Schedule(*info);
    EXPECT_THAT(id, IsOk());
    return *id;
  }
};

TEST_F(RaySchedulerTest, SubmitsOneJobWithTheDriverAndTheWorkingDirectory) {
  dir.Write("train.py", "print(1)\n");
  std::string app_id = Submit();
  EXPECT_THAT(app_id, ::testing::StartsWith("127.0.0.1:8265-echo-"));
  std::string sid = app_id.substr(15);
  Json job = ray.jobs.at(sid);
  EXPECT_EQ(job["entrypoint"], "python3 -m torchx_ray_driver");
  const Json& renv = job["runtime_env"];
  ASSERT_EQ(renv["py_modules"].size(), 1u);
  EXPECT_THAT(renv["working_dir"].get<std::string>(), ::testing::MatchesRegex("gcs://_ray_pkg_[0-9a-f]{32}\\.zip"));
  EXPECT_EQ(ray.packages.size(), 2u);  // the driver's and the working directory's
  EXPECT_EQ(job["metadata"]["torchx.session"], "sess");
  EXPECT_EQ(job["metadata"]["torchx.app_name"], "echo");
  // The same working directory again: checked, not uploaded again.
  size_t puts = ray.http->RequestsTo("PUT", "/api/packages/").size();
  Submit();
  EXPECT_EQ(ray.http->RequestsTo("PUT", "/api/packages/").size(), puts + 1);  // only the new driver spec
  for (const Request& r : ray.http->requests()) EXPECT_TRUE(r.headers.empty());
}

TEST_F(RaySchedulerTest, AnUnreadableLogLeavesRaysStatus) {
  std::string app_id = Submit();
  std::string sid = app_id.substr(15);
  ray.Set(sid, "RUNNING", kRunning);
  ray.OnStop(sid);
  ray.http->On("GET", "/api/jobs/" + sid + "/logs", 500, "the driver's node agent cannot be reached");
  auto d = sched->Describe(app_id);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ((*d)->state, AppState::kRunning);
  EXPECT_THAT(sched->Cancel(app_id), IsOk());
}

TEST_F(RaySchedulerTest, RescheduleTimeoutIsBounded) {
  EXPECT_THAT(sched->SubmitDryRun(App(), specs::Cfg{{"reschedule_timeout", int64_t{0}}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("reschedule_timeout `0`")));
  EXPECT_THAT(sched->SubmitDryRun(App(), specs::Cfg{{"reschedule_timeout", int64_t{1} << 40}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("from 1 to 604800")));
}

TEST_F(RaySchedulerTest, AnEmptyDirectoryIsNoWorkingDir) {
  std::string sid = Submit().substr(15);  // `dir` holds nothing
  EXPECT_FALSE(ray.jobs.at(sid)["runtime_env"].contains("working_dir"));
  EXPECT_EQ(ray.packages.size(), 1u);  // the driver's
}

TEST_F(RaySchedulerTest, TheAddressComesFromTheOptionRayAddressOrTheDefault) {
  env["RAY_ADDRESS"] = "http://10.9.8.7:8265";
  auto info = sched->SubmitDryRun(App(), specs::Cfg{});
  ASSERT_THAT(info, IsOk());
  EXPECT_THAT(info->app_id, ::testing::StartsWith("10.9.8.7:8265-echo-"));
  EXPECT_TRUE(info->app_id_is_final);
  info = sched->SubmitDryRun(App(), specs::Cfg{{"dashboard_address", std::string("head:1234")}});
  ASSERT_THAT(info, IsOk());
  EXPECT_THAT(info->app_id, ::testing::StartsWith("head:1234-echo-"));
  EXPECT_THAT(sched->SubmitDryRun(App(), specs::Cfg{{"dashboard_address", std::string("ray://head:10001")}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("dashboard_address `ray://head:10001`")));
}

TEST_F(RaySchedulerTest, AClusterConfigFindsTheHeadWithRaysOwnTool) {
  commands->On({"ray", "get-head-ip", "/c.yaml", "--cluster-name", "prod"}, 0, "10.1.1.1\n");
  auto info = sched->SubmitDryRun(
      App(), specs::Cfg{{"cluster_config_file", std::string("/c.yaml")}, {"cluster_name", std::string("prod")}});
  ASSERT_THAT(info, IsOk());
  EXPECT_FALSE(info->app_id_is_final);
  ray.http->On("POST", "/api/jobs/", 200, "{}");
  ray.http->On("GET", "/api/packages/gcs/", 200, "");
  auto id = sched->Schedule(*info);
  ASSERT_THAT(id, IsOk());
  EXPECT_THAT(*id, ::testing::StartsWith("10.1.1.1:8265-echo-"));
  testing::FakeCommandRunner none;
  auto bare = MakeRayScheduler("s", ray.http, std::make_shared<testing::FakeCommandRunner>(), nullptr, clock);
  auto info2 = bare->SubmitDryRun(App(), specs::Cfg{{"cluster_config_file", std::string("/c.yaml")}});
  ASSERT_THAT(info2, IsOk());
  EXPECT_THAT(bare->Schedule(*info2), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("install ray")));
}

TEST_F(RaySchedulerTest, DescribeReadsTheGangFromTheDriversFrames) {
  std::string app_id = Submit();
  std::string sid = app_id.substr(15);
  auto d = sched->Describe(app_id);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ((*d)->state, AppState::kPending);  // Ray PENDING
  ray.Set(sid, "RUNNING", "\x1eS {\"phase\":\"pending\"}\n");
  EXPECT_EQ((*sched->Describe(app_id))->state, AppState::kPending);  // the placement group waits
  ray.Set(sid, "RUNNING", std::string("\x1eS {\"phase\":\"pending\"}\n") + kRunning);
  d = sched->Describe(app_id);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ((*d)->state, AppState::kRunning);
  EXPECT_EQ((*d)->num_restarts, 1);
  ASSERT_TRUE((*d)->app);
  EXPECT_EQ((*d)->app->roles[0].name, "sh");
  ASSERT_EQ((*d)->roles_statuses.size(), 1u);
  ASSERT_EQ((*d)->roles_statuses[0].replicas.size(), 2u);
  EXPECT_EQ((*d)->roles_statuses[0].replicas[1].hostname, "10.0.0.2");
  EXPECT_EQ((*d)->roles_statuses[0].replicas[1].state, AppState::kRunning);
  auto native = sched->DescribeNative(app_id);
  ASSERT_THAT(native, IsOk());
  EXPECT_EQ(Json::parse((*native)->payload)["placement"][1]["node_id"], "n1");
  EXPECT_THAT((*native)->request, HasSubstr("sh/1: node n1 host 10.0.0.2"));

  ray.Set(sid, "FAILED",
          std::string(kRunning) + "\x1eS {\"phase\":\"exited\",\"role\":\"sh\",\"replica\":1,\"exit_code\":3}\n" +
              "\x1eS {\"phase\":\"failed\",\"role\":\"sh\",\"replica\":1,\"exit_code\":3,\"cause\":\"user_error\","
              "\"stderr_tail\":[\"Traceback\",\"ValueError: bad\"]}\n");
  d = sched->Describe(app_id);
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ((*d)->state, AppState::kFailed);
  EXPECT_EQ((*d)->msg, "sh/1 exited with code 3\nTraceback\nValueError: bad");
  EXPECT_EQ((*d)->roles_statuses[0].replicas[1].state, AppState::kFailed);
  EXPECT_EQ((*d)->roles_statuses[0].replicas[0].state, AppState::kFailed);  // stopped with the gang
  auto why = sched->ClassifyFailure(app_id);
  ASSERT_THAT(why, IsOk());
  EXPECT_EQ((*why)->cause, FailureCause::kUserError);
  auto unknown = sched->Describe("127.0.0.1:8265-nope");
  ASSERT_THAT(unknown, IsOk());
  EXPECT_FALSE(*unknown);
}

TEST_F(RaySchedulerTest, LogsAreEachReplicasOwnAndFollowUntilTheJobEnds) {
  std::string app_id = Submit();
  std::string sid = app_id.substr(15);
  std::string log = std::string(kRunning) + "\x1eL sh 0 o\x1fzero\n\x1eL sh 1 o\x1fone\n\x1eL sh 0 e\x1foops\n";
  ray.Set(sid, "RUNNING", log);
  LogOptions o;
  o.role = "sh";
  auto it = sched->LogIter(app_id, o);
  ASSERT_THAT(it, IsOk());
  EXPECT_THAT(*testing::ReadAllLines(**it), ::testing::ElementsAre("zero\n", "oops\n"));
  o.stream = LogStream::kStderr;
  EXPECT_THAT(*testing::ReadAllLines(**sched->LogIter(app_id, o)), ::testing::ElementsAre("oops\n"));
  o.replica = 5;
  EXPECT_THAT(sched->LogIter(app_id, o), StatusIs(StatusCode::kNotFound, HasSubstr("no replica sh/5")));

  // Following: a line that arrives later is handed on, and the iterator ends with the job.
  o.replica = 0;
  o.stream = LogStream::kStdout;
  o.follow = true;
  int polls = 0;
  ray.http->On("GET", "/api/jobs/" + sid + "/logs", [&](const Request&) -> Result<HttpResponse> {
    ++polls;
    if (polls == 2) ray.Set(sid, "SUCCEEDED", log + "\x1eL sh 0 o\x1flater\n");
    std::lock_guard lock(ray.mu);
    return HttpResponse{200, Json{{"logs", ray.logs[sid]}}.dump()};
  });
  it = sched->LogIter(app_id, o);
  ASSERT_THAT(it, IsOk());
  EXPECT_THAT(*testing::ReadAllLines(**it), ::testing::ElementsAre("zero\n", "later\n"));
}

TEST_F(RaySchedulerTest, CancelDeleteAndListOnlyThisLaunchersJobs) {
  std::string app_id = Submit();
  std::string sid = app_id.substr(15);
  ray.OnStop(sid);
  ray.Set(sid, "RUNNING", kRunning);
  EXPECT_THAT(sched->Delete(app_id), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("terminal")));
  EXPECT_THAT(sched->Cancel(app_id), IsOk());
  EXPECT_EQ(ray.jobs[sid]["status"], "STOPPED");
  EXPECT_EQ((*sched->Describe(app_id))->state, AppState::kCancelled);
  EXPECT_EQ((*sched->ClassifyFailure(app_id))->cause, FailureCause::kCancelled);

  ray.jobs["someone-else"] = {{"submission_id", "someone-else"}, {"status", "RUNNING"}, {"metadata", Json::object()}};
  auto list = sched->List();
  ASSERT_THAT(list, IsOk());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].app_id, app_id);
  EXPECT_EQ((*list)[0].name, "echo");
  EXPECT_EQ((*list)[0].state, AppState::kCancelled);

  // Ray answers `deleted: false` while a stopped job's supervisor ends: asked again. Deleted, it
  // may still answer for the job a moment: `delete` returns once it no longer does.
  int deletes = 0;
  int lingering = 0;
  ray.http->On("DELETE", "/api/jobs/" + sid, [&](const Request&) -> Result<HttpResponse> {
    if (++deletes < 3) return HttpResponse{200, R"({"deleted": false})"};
    lingering = 2;
    return HttpResponse{200, R"({"deleted": true})"};
  });
  ray.http->On("GET", "/api/jobs/" + sid, [&](const Request&) -> Result<HttpResponse> {
    std::lock_guard lock(ray.mu);
    if (!ray.jobs.contains(sid)) return HttpResponse{404, "Job " + sid + " does not exist"};
    if (deletes < 3 || lingering-- > 0) return HttpResponse{200, ray.jobs[sid].dump()};
    ray.jobs.erase(sid);
    return HttpResponse{404, "Job " + sid + " does not exist"};
  });
  EXPECT_THAT(sched->Delete(app_id), IsOk());
  EXPECT_EQ(deletes, 3);
  EXPECT_EQ(lingering, -1);  // asked until it was gone
  auto gone = sched->Describe(app_id);
  ASSERT_THAT(gone, IsOk());
  EXPECT_FALSE(*gone);

  // Ray's job monitor writes a stopped job's record again after the delete (its supervisor
  // actor's end, seen a second later): deleted again, and `delete` returns once it stays gone.
  std::string again = Submit();
  std::string sid2 = again.substr(15);
  ray.Set(sid2, "STOPPED", kRunning);
  int deletes2 = 0, gets_after_delete = 0;
  ray.http->On("DELETE", "/api/jobs/" + sid2, [&](const Request&) -> Result<HttpResponse> {
    ++deletes2;
    return HttpResponse{200, R"({"deleted": true})"};
  });
  ray.http->On("GET", "/api/jobs/" + sid2, [&](const Request&) -> Result<HttpResponse> {
    std::lock_guard lock(ray.mu);
    if (deletes2 == 0) return HttpResponse{200, ray.jobs[sid2].dump()};  // before the delete
    ++gets_after_delete;
    // gone, then written again by the monitor, then gone for good once deleted again
    if (deletes2 == 1 && gets_after_delete == 2) return HttpResponse{200, ray.jobs[sid2].dump()};
    return HttpResponse{404, "Job " + sid2 + " does not exist"};
  });
  EXPECT_THAT(sched->Delete(again), IsOk());
  EXPECT_EQ(deletes2, 2);

  // One that Ray keeps answering for, however often it is deleted, is an error, not a success.
  std::string stuck = Submit();
  std::string sid3 = stuck.substr(15);
  ray.Set(sid3, "STOPPED", kRunning);
  ray.http->On("DELETE", "/api/jobs/" + sid3, 200, R"({"deleted": true})");
  EXPECT_THAT(sched->Delete(stuck), StatusIs(StatusCode::kUnavailable, HasSubstr("still answers")));
  gone = sched->Describe(again);
  ASSERT_THAT(gone, IsOk());
  EXPECT_FALSE(*gone);
  EXPECT_THAT(sched->Delete(app_id), StatusIs(StatusCode::kNotFound, HasSubstr("no job")));
  EXPECT_THAT(sched->Delete("no-address"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("is not `<dashboard")));
}

TEST_F(RaySchedulerTest, ErrorsNameTheDashboardAndRaysWords) {
  auto info = sched->SubmitDryRun(App(), specs::Cfg{});
  ASSERT_THAT(info, IsOk());
  ASSERT_THAT(sched->Schedule(*info), IsOk());
  EXPECT_THAT(sched->Schedule(*info), StatusIs(StatusCode::kAlreadyExists, HasSubstr("already exists")));
  ray.http->On("POST", "/api/jobs/", 400, R"({"message": "runtime_env: bad pip spec"})");
  auto again = sched->SubmitDryRun(App(), specs::Cfg{});
  EXPECT_THAT(sched->Schedule(*again), StatusIs(StatusCode::kInvalidArgument, HasSubstr("bad pip spec")));
  ray.http->On("GET", "/api/jobs/", 500, "Internal Server Error");
  EXPECT_THAT(sched->List(), StatusIs(StatusCode::kUnavailable, HasSubstr("HTTP 500")));
  ray.http->On("GET", "/api/jobs/", 401, "");
  EXPECT_THAT(sched->List(), StatusIs(StatusCode::kPermissionDenied, HasSubstr("RAY_AUTH_TOKEN")));
  env["RAY_AUTH_TOKEN"] = "s3cret";
  (void)sched->List();
  EXPECT_THAT(ray.http->requests().back().headers, ::testing::Contains("Authorization: Bearer s3cret"));
  ray.http->SetUnreachable();
  EXPECT_THAT(sched->Describe("127.0.0.1:8265-x"),
              StatusIs(StatusCode::kUnavailable, HasSubstr("the dashboard at http://127.0.0.1:8265")));
}

TEST_F(RaySchedulerTest, AJobRayLostWithItsHeadIsFailedNotUnknown) {
  std::string app_id = Submit();
  std::string sid = app_id.substr(15);
  {
    std::lock_guard lock(ray.mu);
    ray.jobs.erase(sid);  // the head restarted: a new session, no jobs
    ray.session = "session_2";
  }
  auto d = sched->Describe(app_id);
  ASSERT_THAT(d, IsOk());
  ASSERT_TRUE(*d);
  EXPECT_EQ((*d)->state, AppState::kFailed);
  EXPECT_THAT((*d)->msg, HasSubstr("Ray no longer knows job " + sid +
                                   ": the cluster at http://127.0.0.1:8265 "
                                   "restarted (its session was session_1, now session_2)"));
  EXPECT_EQ((*sched->ClassifyFailure(app_id))->cause, FailureCause::kEngineLost);
  EXPECT_THAT(sched->Delete(app_id), IsOk());  // forgets it
  auto gone = sched->Describe(app_id);
  ASSERT_THAT(gone, IsOk());
  EXPECT_FALSE(*gone);

  // Deleted by someone else while the cluster kept its session.
  std::string other = Submit();
  {
    std::lock_guard lock(ray.mu);
    ray.jobs.erase(other.substr(15));
  }
  EXPECT_THAT((*sched->Describe(other))->msg, HasSubstr("deleted outside torchx"));
  // A job this launcher never submitted is unknown.
  auto unknown = sched->Describe("127.0.0.1:8265-never");
  ASSERT_THAT(unknown, IsOk());
  EXPECT_FALSE(*unknown);
}

TEST_F(RaySchedulerTest, AWorkspaceIsEachRolesWorkingDirectory) {
  specs::AppDef app = App();
  app.roles[0].image = "ghcr.io/pytorch/torchx:0.7.0";
  auto cfg = sched->run_opts().Resolve(specs::Cfg{});
  ASSERT_THAT(cfg, IsOk());
  ASSERT_THAT(sched->BuildWorkspace(dir.path(), app, *cfg), IsOk());
  EXPECT_EQ(app.roles[0].image, std::filesystem::absolute(dir.path()).lexically_normal().string());
  EXPECT_THAT(sched->BuildWorkspace(dir.path() + "/nope", app, *cfg),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("is not a local directory")));
}

}  // namespace
}  // namespace torchx::schedulers::ray
