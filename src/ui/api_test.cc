// The REST API over an in-memory back-end: what each call answers, and the Status -> HTTP table.
// The real server, local_cwd and Slurm are exercised by tests/integration/ui/.
#include "ui/api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "testing/log_lines.h"
#include "testing/status_matchers.h"
#include "torchx/ui/server.h"

namespace torchx::ui {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Apps shared by every scheduler instance the Api's per-call Runners build.
struct MemApps {
  struct App {
    std::string name;
    specs::AppState state;
    double created;
    specs::AppDef def;
    std::vector<std::string> log;
    std::vector<schedulers::MemberApp> members;  // as a composite's listing has them
  };
  std::map<std::string, App> apps;
  int next = 0;
  bool cancel_ends_later = false;  // as a process's supervisor does: the cancel is answered first
  bool composite = false;          // says it is one (a capability), as a sweep or pipeline does
};

class MemScheduler : public schedulers::Scheduler {
 public:
  MemScheduler(const schedulers::SchedulerContext& c, std::shared_ptr<MemApps> apps)
      : Scheduler("mem", c.session_name), apps_(std::move(apps)) {}
  specs::RunOpts run_opts() const override {
    specs::RunOpts o;
    (void)o.Add("queue", specs::CfgType::kStr, "the queue", std::string("default"));
    return o;
  }
  bool requires_resources() const override { return false; }
  schedulers::Capabilities capabilities() const override {
    using schedulers::Capability;
    schedulers::Capabilities caps{Capability::kLogs, Capability::kFollowLogs, Capability::kList, Capability::kDelete,
                                  Capability::kResourceUsage};
    if (apps_->composite) caps = caps.With(Capability::kComposite);
    return caps;
  }
  // Two samples of replica 0 (the options are the back-end's to apply; this one keeps the newest).
  Result<std::optional<schedulers::AppUsage>> ResourceUsage(const std::string& id,
                                                            const schedulers::UsageOptions& options) override {
    if (!apps_->apps.count(id)) return std::optional<schedulers::AppUsage>();
    schedulers::AppUsage u;
    u.interval_seconds = 5;
    u.gpu_note = "no GPU here";
    u.replicas.push_back({"echo", 0, "localhost", {{10, 50.0, 1024, 1, {}}, {15, 150.0, 2048, 2, {}}}});
    if (options.max_samples == 1) u.replicas[0].samples.erase(u.replicas[0].samples.begin());
    return std::optional(u);
  }
  Result<std::string> Schedule(const schedulers::DryRunInfo& info) override {
    std::string id = "app" + std::to_string(++apps_->next);
    apps_->apps[id] = {info.app.name, specs::AppState::kRunning, 1000.0 + apps_->next,
                       info.app,      {"hello\n", "world\n"},    {}};
    return id;
  }
  Result<std::optional<schedulers::DescribeAppResponse>> Describe(const std::string& id) override {
    auto it = apps_->apps.find(id);
    if (it == apps_->apps.end()) return std::optional<schedulers::DescribeAppResponse>();
    schedulers::DescribeAppResponse d;
    d.app_id = id;
    d.state = it->second.state;
    d.app = it->second.def;
    specs::RoleStatus role{"echo", {}};
    for (int i = 0; i < 2; ++i) {
      specs::ReplicaStatus r;
      r.id = i;
      r.role = "echo";
      r.state = it->second.state;
      r.hostname = "localhost";
      if (it->second.state == specs::AppState::kFailed) {
        r.structured_error_msg =
            i == 0 ? R"({"message": {"message": "boom", "errorCode": 3, "extraInfo": {"timestamp": "17"}}})"
                   : "not json \xff";
      }
      role.replicas.push_back(r);
    }
    d.roles_statuses = {role};
    return std::optional(d);
  }
  Result<std::vector<schedulers::ListAppResponse>> List() override {
    std::vector<schedulers::ListAppResponse> out;
    for (const auto& [id, a] : apps_->apps) {
      out.push_back({id, a.state, "", a.name, a.created, 0});
      out.back().members = a.members;
    }
    return out;
  }
  Status Delete(const std::string& id) override {
    auto it = apps_->apps.find(id);
    if (it == apps_->apps.end()) return NotFoundError("no app " + id);
    if (!specs::IsTerminal(it->second.state)) return FailedPreconditionError("app " + id + " is still running");
    apps_->apps.erase(it);
    return OkStatus();
  }
  Result<std::unique_ptr<schedulers::LogIterator>> LogIter(const std::string& id,
                                                           const schedulers::LogOptions&) override {
    return schedulers::MakeLinesIterator(apps_->apps.at(id).log);
  }

 protected:
  Result<schedulers::DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg& cfg) override {
    schedulers::DryRunInfo info;
    info.app = app;
    info.request = "mem request on queue " + cfg.Str("queue").value_or("");
    return info;
  }
  Status DoCancel(const std::string& id) override {
    if (apps_->cancel_ends_later) return OkStatus();
    apps_->apps.at(id).state = specs::AppState::kCancelled;
    return OkStatus();
  }

 private:
  std::shared_ptr<MemApps> apps_;
};

class ApiTest : public ::testing::Test {
 protected:
  ApiTest() : registry_(plugins::PluginRegistry::Options{std::vector<std::string>{}}) {
    plugins::RegisterBuiltins(registry_);
    (void)registry_.AddScheduler("mem", "test", [apps = apps_](const schedulers::SchedulerContext& c) {
      return Result<std::unique_ptr<schedulers::Scheduler>>(std::make_unique<MemScheduler>(c, apps));
    });
    ApiOptions options;
    options.schedulers = {"mem"};
    api_ = std::make_unique<Api>(registry_, options);
  }

  std::string Submit(const std::string& msg) {
    ApiResponse r =
        api_->SubmitApp(json({{"component", "utils.echo"}, {"args", {"--msg", msg}}, {"scheduler", "mem"}}).dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body).at("app_handle");
  }

  std::shared_ptr<MemApps> apps_ = std::make_shared<MemApps>();
  plugins::PluginRegistry registry_;
  std::unique_ptr<Api> api_;
};

json Body(const ApiResponse& r) { return json::parse(r.body); }

TEST(HttpStatusFor, OneTableForEveryCode) {
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusFor(StatusCode::kFailedPrecondition), 409);
  EXPECT_EQ(HttpStatusFor(StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInternal), 500);
  ApiResponse r = ErrorResponse(InvalidArgumentError("field `x` is bad"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Body(r)["error"]["code"], "INVALID_ARGUMENT");
  EXPECT_EQ(Body(r)["error"]["message"], "field `x` is bad");
}

TEST_F(ApiTest, SubmittedAppsAreListedNewestFirstWithRolesAndPaged) {
  std::string first = Submit("one");
  std::string second = Submit("two");
  EXPECT_EQ(first, "mem://torchx/app1");
  json page = Body(api_->ListApps({}));
  EXPECT_EQ(page["total"], 2);
  ASSERT_EQ(page["apps"].size(), 2u);
  EXPECT_EQ(page["apps"][0]["app_handle"], second);
  EXPECT_EQ(page["apps"][0]["scheduler"], "mem");
  EXPECT_EQ(page["apps"][0]["state"], "RUNNING");
  EXPECT_EQ(page["apps"][0]["roles"][0]["replicas"], 2);
  EXPECT_EQ(page["apps"][0]["roles"][0]["states"]["RUNNING"], 2);

  json one = Body(api_->ListApps({{"limit", "1"}, {"offset", "1"}}));
  EXPECT_EQ(one["total"], 2);
  ASSERT_EQ(one["apps"].size(), 1u);
  EXPECT_EQ(one["apps"][0]["app_handle"], first);
}

TEST_F(ApiTest, FiltersByStateAndName) {
  Submit("one");
  std::string second = Submit("two");
  ASSERT_EQ(api_->CancelApp(second).status, 202);
  json cancelled = Body(api_->ListApps({{"state", "CANCELLED"}}));
  ASSERT_EQ(cancelled["total"], 1);
  EXPECT_EQ(cancelled["apps"][0]["app_handle"], second);
  EXPECT_EQ(Body(api_->ListApps({{"name", "ECHO"}}))["total"], 2);
  EXPECT_EQ(Body(api_->ListApps({{"name", "nope"}}))["total"], 0);
}

TEST_F(ApiTest, BadListParametersNameTheParameterAndTheChoices) {
  ApiResponse state = api_->ListApps({{"state", "DONE"}});
  EXPECT_EQ(state.status, 400);
  EXPECT_THAT(Body(state)["error"]["message"].get<std::string>(), AllOf(HasSubstr("`state`"), HasSubstr("SUCCEEDED")));
  ApiResponse limit = api_->ListApps({{"limit", "0"}});
  EXPECT_EQ(limit.status, 400);
  EXPECT_THAT(limit.body, HasSubstr("`limit` must be an integer from 1 to 500"));
  ApiResponse sched = api_->ListApps({{"scheduler", "slurm"}});
  EXPECT_EQ(sched.status, 400);
  EXPECT_THAT(sched.body, HasSubstr("torchx ui -s slurm"));
}

TEST_F(ApiTest, AnAppShowsItsReplicasStructuredErrorsAndDefinition) {
  std::string h = Submit("hi");
  apps_->apps["app1"].state = specs::AppState::kFailed;
  json app = Body(api_->GetApp(h));
  EXPECT_EQ(app["app_id"], "app1");
  EXPECT_EQ(app["status"]["state"], "FAILED");
  EXPECT_EQ(app["status"]["roles"][0]["replicas"][1]["state"], "FAILED");
  const json& torchelastic = app["status"]["roles"][0]["replicas"][0]["structured_error"];
  EXPECT_EQ(torchelastic["message"], "boom");
  EXPECT_EQ(torchelastic["exit_code"], 3);
  EXPECT_EQ(torchelastic["timestamp"], "17");
  // Not JSON, not UTF-8: shown as its text, the bad byte replaced rather than failing the call.
  const json& raw = app["status"]["roles"][0]["replicas"][1]["structured_error"];
  EXPECT_EQ(raw["message"], "not json \xef\xbf\xbd");
  EXPECT_TRUE(raw["exit_code"].is_null());
  EXPECT_EQ(app["appdef"]["roles"][0]["args"].back(), "hi");
  EXPECT_EQ(app["attempts"], json::array());  // a back-end without a history
}

TEST_F(ApiTest, ResourcesAreTheSchedulersSamplesWithCheckedQueryOptions) {
  std::string h = Submit("hi");
  json all = Body(api_->GetResources(h, {}));
  EXPECT_EQ(all["interval_seconds"], 5);
  EXPECT_EQ(all["gpu_note"], "no GPU here");
  ASSERT_EQ(all["replicas"][0]["samples"].size(), 2u);
  EXPECT_EQ(all["replicas"][0]["samples"][1]["cpu_percent"], 150.0);
  json newest = Body(api_->GetResources(h, {{"max_samples", "1"}, {"since", "12.5"}}));
  ASSERT_EQ(newest["replicas"][0]["samples"].size(), 1u);
  ApiResponse bad = api_->GetResources(h, {{"since", "yesterday"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("since: must be epoch seconds, got 'yesterday'"));
  EXPECT_EQ(api_->GetResources(h, {{"max_samples", "-1"}}).status, 400);
  EXPECT_EQ(api_->GetResources(h, {{"since", "nan"}}).status, 400);
  EXPECT_EQ(api_->GetResources("mem://torchx/nope", {}).status, 404);
}

TEST_F(ApiTest, UnknownAppsAre404AndMalformedHandles400) {
  EXPECT_EQ(api_->GetApp("mem://torchx/nope").status, 404);
  EXPECT_EQ(api_->CancelApp("mem://torchx/nope").status, 404);
  EXPECT_EQ(api_->DeleteApp("mem://torchx/nope").status, 404);
  EXPECT_EQ(api_->GetApp("nonsense").status, 400);
}

TEST_F(ApiTest, DeletingARunningAppIsAConflictAndATerminalOneGoes) {
  std::string h = Submit("hi");
  ApiResponse running = api_->DeleteApp(h);
  EXPECT_EQ(running.status, 409);
  EXPECT_THAT(running.body, HasSubstr("still running"));
  ASSERT_EQ(api_->CancelApp(h).status, 202);
  EXPECT_EQ(Body(api_->GetApp(h))["status"]["state"], "CANCELLED");
  EXPECT_EQ(api_->DeleteApp(h).status, 200);
  EXPECT_EQ(api_->GetApp(h).status, 404);
}

TEST_F(ApiTest, DryRunShowsTheRequestAndSubmitsNothing) {
  ApiResponse r = api_->SubmitApp(json({{"component", "utils.echo"},
                                        {"args", {{"msg", "typed"}}},
                                        {"scheduler", "mem"},
                                        {"cfg", "queue=q7"},
                                        {"dryrun", true}})
                                      .dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["dryrun"]["request"], "mem request on queue q7");
  EXPECT_EQ(Body(r)["dryrun"]["appdef"]["roles"][0]["args"].back(), "typed");
  EXPECT_TRUE(apps_->apps.empty());
}

TEST_F(ApiTest, SubmitErrorsNameTheField) {
  auto message = [&](const json& req) {
    ApiResponse r = api_->SubmitApp(req.dump());
    EXPECT_EQ(r.status, 400) << req.dump();
    return Body(r)["error"]["message"].get<std::string>();
  };
  EXPECT_THAT(message({{"scheduler", "mem"}}), HasSubstr("`component`"));
  EXPECT_THAT(message({{"component", "utils.echo"}, {"bogus", 1}}), AllOf(HasSubstr("`bogus`"), HasSubstr("dryrun")));
  EXPECT_THAT(message({{"component", "utils.echo"}, {"args", {"--nope", "x"}}, {"scheduler", "mem"}}),
              HasSubstr("--nope"));
  EXPECT_THAT(message({{"component", "utils.echo"}, {"scheduler", "mem"}, {"cfg", {{"queu", "x"}}}}),
              AllOf(HasSubstr("`cfg`"), HasSubstr("queu"), HasSubstr("queue")));
  EXPECT_THAT(message({{"appdef", "x"}}), HasSubstr("`appdef`"));
  EXPECT_EQ(api_->SubmitApp("not json").status, 400);
  EXPECT_EQ(api_->SubmitApp(json({{"component", "utils.echo"}, {"scheduler", "nope"}}).dump()).status, 404);
  EXPECT_TRUE(apps_->apps.empty());
}

TEST_F(ApiTest, AnAppDefIsSubmittedAsGiven) {
  json appdef = {{"name", "raw"}, {"roles", {{{"name", "r"}, {"image", "/tmp"}, {"entrypoint", "true"}}}}};
  ApiResponse r = api_->SubmitApp(json({{"appdef", appdef}, {"scheduler", "mem"}}).dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(apps_->apps.at("app1").name, "raw");
}

TEST_F(ApiTest, LogsOfTheFirstRoleByDefaultAndBadParametersNamed) {
  std::string h = Submit("hi");
  auto log = api_->OpenLog(h, {});
  ASSERT_THAT(log, IsOk());
  std::string text;
  while (true) {
    auto line = log->lines->Next();
    ASSERT_THAT(line, IsOk());
    if (!*line) break;
    text += **line;
  }
  EXPECT_EQ(text, "hello\nworld\n");
  auto filtered = api_->OpenLog(h, {{"regex", "^wor(ld)?"}});
  ASSERT_THAT(filtered, IsOk());  // the Runner's filter (RE2) keeps only the matching lines
  EXPECT_THAT(testing::ReadAllLines(*filtered->lines), IsOkAndHolds(ElementsAre("world\n")));
  EXPECT_THAT(api_->OpenLog(h, {{"regex", "(unclosed"}}), StatusIs(StatusCode::kInvalidArgument, HasSubstr("`regex`")));
  EXPECT_THAT(api_->OpenLog(h, {{"regex", std::string(5000, 'a')}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("4096")));
  EXPECT_THAT(api_->OpenLog(h, {{"stream", "both"}}), StatusIs(StatusCode::kInvalidArgument, HasSubstr("`stream`")));
  EXPECT_THAT(api_->OpenLog(h, {{"follow", "maybe"}}), StatusIs(StatusCode::kInvalidArgument, HasSubstr("`follow`")));
  EXPECT_THAT(api_->OpenLog("mem://torchx/nope", {}), StatusIs(StatusCode::kNotFound, HasSubstr("nope")));
  // Every replica at once, prefixed as `torchx log` prints them.
  auto all = api_->OpenLog(h, {{"replica", "all"}});
  ASSERT_THAT(all, IsOk());
  EXPECT_THAT(testing::ReadAllLines(*all->lines), IsOkAndHolds(ElementsAre("echo/0 hello\n", "echo/0 world\n")));
  EXPECT_THAT(api_->OpenLog(h, {{"replica", "all"}, {"attempt", "0"}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("`attempt`")));
  EXPECT_THAT(api_->OpenLog(h, {{"replica", "all"}, {"role", "nope"}}),
              StatusIs(StatusCode::kNotFound, HasSubstr("nope")));
}

TEST_F(ApiTest, ComponentsAndSchedulersDescribeThemselves) {
  json comps = Body(api_->ListComponents());
  bool has_echo = false;
  for (const json& c : comps["components"]) has_echo |= c["name"] == "utils.echo";
  EXPECT_TRUE(has_echo);
  json echo = Body(api_->GetComponent("utils.echo"));
  EXPECT_EQ(echo["name"], "utils.echo");
  EXPECT_EQ(echo["params"][0]["name"], "msg");
  EXPECT_EQ(api_->GetComponent("utils.nope").status, 404);
  json scheds = Body(api_->ListSchedulers());
  bool mem_listed = false;
  for (const json& s : scheds["schedulers"]) {
    if (s["name"] == "mem") {
      mem_listed = s["listed"] && s["runopts"][0]["name"] == "queue";
      // What the pages offer comes from the back-end's capabilities.
      EXPECT_EQ(s["capabilities"], json::array({"logs", "follow_logs", "list", "delete", "resource_usage"}));
    }
  }
  EXPECT_TRUE(mem_listed);
}

TEST_F(ApiTest, TheDigestChangesWhenAnAppDoes) {
  std::string h = Submit("hi");
  std::string before = api_->AppsDigest({}).value();
  EXPECT_EQ(api_->AppsDigest({}).value(), before);
  ASSERT_EQ(api_->CancelApp(h).status, 202);
  EXPECT_NE(api_->AppsDigest({}).value(), before);
  EXPECT_THAT(api_->AppsDigest({{"state", "DONE"}}), StatusIs(StatusCode::kInvalidArgument, HasSubstr("`state`")));
}

// Pages share a listing and an app's document for a second (Api::Listings): a change made
// elsewhere (the CLI, a driver) shows once that second has passed, a change made through the API
// at once.
TEST_F(ApiTest, PagesShareAListingForASecondAndSeeTheirOwnChangesAtOnce) {
  std::string h = Submit("hi");
  std::string id = h.substr(h.rfind('/') + 1);
  EXPECT_EQ(Body(api_->ListApps({{"state", "CANCELLED"}}))["total"], 0);
  EXPECT_EQ(Body(api_->GetAppShared(h))["status"]["state"], "RUNNING");
  apps_->apps.at(id).state = specs::AppState::kCancelled;  // as another process would
  EXPECT_EQ(Body(api_->ListApps({{"state", "CANCELLED"}}))["total"], 0);
  EXPECT_EQ(Body(api_->GetAppShared(h))["status"]["state"], "RUNNING");
  EXPECT_EQ(Body(api_->GetApp(h))["status"]["state"], "CANCELLED");  // what event streams read
  std::this_thread::sleep_for(Api::kListingMaxAge + std::chrono::milliseconds(100));
  EXPECT_EQ(Body(api_->ListApps({{"state", "CANCELLED"}}))["total"], 1);
  EXPECT_EQ(Body(api_->GetAppShared(h))["status"]["state"], "CANCELLED");
  std::string second = Submit("two");  // through the API: listed at once
  EXPECT_EQ(Body(api_->ListApps({}))["total"], 2);
  ASSERT_EQ(api_->CancelApp(second).status, 202);
  EXPECT_EQ(Body(api_->ListApps({{"state", "CANCELLED"}}))["total"], 2);
  EXPECT_EQ(Body(api_->GetAppShared(second))["status"]["state"], "CANCELLED");
}

// A cancel that ends the app after it is answered (local_cwd's supervisor): a page that read the
// app running in between is not kept, so once one client sees the app end, every client does.
TEST_F(ApiTest, AnAppCancelledThroughTheApiIsReadAfreshUntilItIsSeenEnded) {
  apps_->cancel_ends_later = true;
  std::string h = Submit("hi");
  // Its document says when it was submitted, as the listing does; this scheduler has no history
  // (no start) and no user.
  json doc = Body(api_->GetApp(h));
  EXPECT_EQ(doc["created"], 1001.0);
  EXPECT_TRUE(doc["started"].is_null() && doc["ended"].is_null() && doc["user"].is_null()) << doc.dump();
  EXPECT_EQ(doc["composite"], false);
  std::string id = h.substr(h.rfind('/') + 1);
  EXPECT_EQ(Body(api_->ListApps({{"state", "RUNNING"}}))["total"], 1);
  ASSERT_EQ(api_->CancelApp(h).status, 202);
  EXPECT_EQ(Body(api_->GetAppShared(h))["status"]["state"], "RUNNING");
  EXPECT_EQ(Body(api_->ListApps({{"state", "RUNNING"}}))["total"], 1);
  apps_->apps.at(id).state = specs::AppState::kCancelled;  // its supervisor stops it
  EXPECT_EQ(Body(api_->ListApps({{"state", "CANCELLED"}}))["total"], 1);
  EXPECT_EQ(Body(api_->GetAppShared(h))["status"]["state"], "CANCELLED");
  // Seen ended, it is shared again: a change made elsewhere shows after a second.
  apps_->apps.at(id).state = specs::AppState::kFailed;
  EXPECT_EQ(Body(api_->GetAppShared(h))["status"]["state"], "CANCELLED");

  // The document alone may be what sees the end: the listing is then taken anew too.
  std::string second = Submit("two");
  std::string second_id = second.substr(second.rfind('/') + 1);
  ASSERT_EQ(api_->CancelApp(second).status, 202);
  EXPECT_EQ(Body(api_->ListApps({{"state", "RUNNING"}}))["total"], 1);
  apps_->apps.at(second_id).state = specs::AppState::kCancelled;
  EXPECT_EQ(Body(api_->GetAppShared(second))["status"]["state"], "CANCELLED");
  EXPECT_EQ(Body(api_->ListApps({{"state", "RUNNING"}}))["total"], 0);
}

// A composite's children: counted by state in its row, paged from the shared listing.
TEST_F(ApiTest, AppsCarryTheirMembersCountsByStateAndTheMembersArePaged) {
  std::string h = Submit("sweep-like");
  std::string id = h.substr(h.rfind('/') + 1);
  for (int i = 0; i < 120; ++i) {
    schedulers::MemberApp m;
    m.name = std::to_string(i);
    m.scheduler = "mem";
    m.state = i < 100 ? specs::AppState::kSucceeded : i < 117 ? specs::AppState::kRunning : specs::AppState::kFailed;
    apps_->apps.at(id).members.push_back(m);
  }
  apps_->composite = true;
  json listed = Body(api_->ListApps({}))["apps"][0];
  EXPECT_EQ(listed["member_counts"], json({{"SUCCEEDED", 100}, {"RUNNING", 17}, {"FAILED", 3}}));
  // One row: the counts, not the members themselves, and no role per child.
  EXPECT_EQ(listed["composite"], true);
  EXPECT_FALSE(listed.contains("members"));
  EXPECT_EQ(listed["roles"], json::array());
  json page = Body(api_->ListMembers(h, {{"offset", "100"}, {"limit", "50"}}));
  EXPECT_EQ(page["total"], 120);
  ASSERT_EQ(page["members"].size(), 20u);
  EXPECT_EQ(page["members"][0]["name"], "100");
  EXPECT_EQ(page["members"][19]["state"], "FAILED");
  EXPECT_EQ(Body(api_->ListMembers(h, {}))["members"].size(), 50u);  // 50 by default
  EXPECT_EQ(api_->ListMembers(h, {{"limit", "0"}}).status, 400);
  std::string plain = Submit("plain");
  EXPECT_EQ(Body(api_->ListMembers(plain, {}))["total"], 0);
  json all = Body(api_->ListApps({}));
  apps_->composite = false;
  all = Body(api_->ListApps({}));
  for (const json& app : all["apps"]) {
    if (app["app_handle"] != plain) continue;
    EXPECT_EQ(app["member_counts"], json::object());
    EXPECT_EQ(app["composite"], false);
    EXPECT_EQ(app["roles"].size(), 1u);
  }
}

TEST(UiSchedulers, LocalFirstThenConfiguredThenAskedForEachOnce) {
  auto config = config::TorchxConfig::Parse("[slurm]\npartition = p\n[component:dist.ddp]\nj = 1x1\n", "t");
  ASSERT_THAT(config, IsOk());
  std::vector<std::string> known = {"local_cwd", "local_docker", "slurm", "kubernetes"};
  EXPECT_THAT(UiSchedulers(known, *config, {"kubernetes", "slurm"}),
              IsOkAndHolds(ElementsAre("local_cwd", "slurm", "kubernetes")));
  // Composites (pipelines) come after the default, where they are registered.
  EXPECT_THAT(UiSchedulers({"local_cwd", "pipeline", "slurm"}, *config, {}, {"pipeline", "sweep"}),
              IsOkAndHolds(ElementsAre("local_cwd", "pipeline", "slurm")));
  EXPECT_THAT(UiSchedulers(known, *config, {"slurmm"}),
              StatusIs(StatusCode::kNotFound, AllOf(HasSubstr("slurmm"), HasSubstr("slurm"))));
}

}  // namespace
}  // namespace torchx::ui
