// The Runner over a registry built with exactly what each test needs: a fake back-end records
// what it was built with and asked for, so name resolution is checked without any engine.
#include "torchx/runner/runner.h"

#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "testing/fake_clock.h"
#include "testing/status_matchers.h"
#include "torchx/components/component.h"

namespace torchx::runner {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Remembers the context it was built with and the last request; apps never leave memory.
class FakeScheduler : public schedulers::Scheduler {
 public:
  explicit FakeScheduler(const schedulers::SchedulerContext& context, std::string name = "fake")
      : Scheduler(std::move(name), context.session_name), devices(context.devices), clock(context.clock) {}
  specs::RunOpts run_opts() const override {
    specs::RunOpts o;
    (void)o.Add("queue", specs::CfgType::kStr, "the queue", std::string("default"));
    return o;
  }
  Result<std::string> Schedule(const schedulers::DryRunInfo& info) override {
    submitted = info.app;
    return std::string("app-1");
  }
  // app-1 runs for `running_polls` describes, then succeeds (forever_running: never ends); any
  // other app is unknown.
  Result<std::optional<schedulers::DescribeAppResponse>> Describe(const std::string& app_id) override {
    calls.push_back("describe " + app_id);
    if (app_id != "app-1") return std::optional<schedulers::DescribeAppResponse>();
    schedulers::DescribeAppResponse d;
    d.app_id = app_id;
    if (unreachable_polls > 0) {
      --unreachable_polls;
      return UnavailableError("fake: the engine cannot be reached");
    }
    d.state = forever_running || describes++ < running_polls ? specs::AppState::kRunning : specs::AppState::kSucceeded;
    if (failed) {  // replica r/1 failed, r/0 succeeded
      d.state = specs::AppState::kFailed;
      specs::RoleStatus rs{"r", {}};
      for (int i : {0, 1}) {
        specs::ReplicaStatus rep;
        rep.id = i;
        rep.role = "r";
        rep.state = i == 1 ? specs::AppState::kFailed : specs::AppState::kSucceeded;
        rs.replicas.push_back(rep);
      }
      d.roles_statuses = {rs};
    }
    return std::optional(d);
  }
  int unreachable_polls = 0;
  const devices::DeviceSource* devices;
  std::shared_ptr<const Clock> clock;
  std::optional<specs::AppDef> submitted;
  int running_polls = 0;
  int describes = 0;
  bool forever_running = false;
  schedulers::Capabilities caps;         // none unless a test declares some
  std::vector<std::string> depended_on;  // what DependencyCfg was asked to wait for

  bool own_filter = false;                // applies_log_filter
  std::optional<std::string> regex_seen;  // what LogIter was given
  bool failed = false;                    // app-1 FAILED, its replica r/1 failed
  bool no_stderr = false;                 // LogIter refuses the stderr stream
  std::vector<std::string> streams_asked;
  std::vector<std::string> calls;  // Describe and DoCancel, in order

  schedulers::Capabilities capabilities() const override { return caps; }
  bool instance_per_thread() const override { return per_thread; }
  bool per_thread = false;
  bool applies_log_filter() const override { return own_filter; }
  Result<std::unique_ptr<schedulers::LogIterator>> LogIter(const std::string&,
                                                           const schedulers::LogOptions& o) override {
    regex_seen = o.regex;
    if (failed) {
      streams_asked.push_back(fmt::format("{}/{} {}", o.role, o.replica, static_cast<int>(o.stream)));
      if (no_stderr && o.stream == schedulers::LogStream::kStderr) return UnimplementedError("fake: no stderr");
      std::vector<std::string> lines;
      for (int i = 1; i <= 30; ++i) lines.push_back(fmt::format("line {}\n", i));
      lines.push_back(std::string(5000, 'x') + "\n");
      return schedulers::MakeLinesIterator(lines);
    }
    return schedulers::MakeLinesIterator({"QPS 10\n", "hello\n"});
  }
  Result<specs::Cfg> DependencyCfg(const std::vector<std::string>& after, specs::Cfg cfg) const override {
    std::string joined;
    for (const std::string& id : after) joined += (joined.empty() ? "" : ",") + id;
    cfg["after"] = joined;
    return cfg;
  }

 protected:
  Result<schedulers::DryRunInfo> DoDryRun(const specs::AppDef& app, const specs::ResolvedCfg&) override {
    schedulers::DryRunInfo info;
    info.app = app;
    info.request = "fake request";
    return info;
  }
  Status DoCancel(const std::string& app_id) override {
    calls.push_back("cancel " + app_id);
    return app_id == "app-1" || !caps.Has(schedulers::Capability::kComposite) ? OkStatus()
                                                                              : NotFoundError("fake: no " + app_id);
  }
};

RunnerOptions Options(std::string session, std::shared_ptr<const Clock> clock) {
  RunnerOptions o;
  o.session_name = std::move(session);
  o.clock = std::move(clock);
  return o;
}

class RunnerTest : public ::testing::Test {
 protected:
  RunnerTest() : registry_(plugins::PluginRegistry::Options{std::vector<std::string>{}}) {
    plugins::RegisterBuiltins(registry_);
    (void)registry_.AddScheduler("fake", "test", [this](const schedulers::SchedulerContext& context) {
      auto s = std::make_unique<FakeScheduler>(context);
      s->per_thread = per_thread_;
      ++made_;
      last_ = s.get();
      return Result<std::unique_ptr<schedulers::Scheduler>>(std::move(s));
    });
    (void)registry_.AddNamedResource("test.box", "test", [] {
      specs::Resource r;
      r.cpu = 7;
      r.gpu = 0;
      r.memMB = 700;
      return Result<specs::Resource>(r);
    });
  }
  plugins::PluginRegistry registry_;
  FakeScheduler* last_ = nullptr;
  bool per_thread_ = false;
  int made_ = 0;
};

TEST_F(RunnerTest, BuildsAPluginSchedulerWithTheSessionAndTheRegistrysDevices) {
  Runner r(registry_, Options("sess", nullptr));
  auto handle = r.RunComponent("utils.echo", {"--msg", "hi"}, "fake", {{"queue", specs::CfgVal(std::string("q"))}});
  ASSERT_THAT(handle, IsOkAndHolds("fake://sess/app-1"));
  ASSERT_NE(last_, nullptr);
  EXPECT_EQ(last_->session_name(), "sess");
  EXPECT_EQ(last_->devices, &registry_.devices());
  ASSERT_TRUE(last_->submitted.has_value());
  EXPECT_EQ(last_->submitted->roles[0].env.at("TORCHX_JOB_ID"), "fake://sess/${app_id}");
}

TEST_F(RunnerTest, EveryRoleLearnsItsParentRunAndTheConfiguredTrackers) {
  RunnerOptions options;
  options.tracking.parent_run_id = "experiment-7";
  options.tracking.trackers = {{"fsspec", "file:///tmp/runs"}, {"mlflow", std::nullopt}};
  Runner r(registry_, options);
  auto info = r.DryRun(r.ComponentAppDef("utils.echo", {"--msg", "hi"}).value(), "fake", {});
  ASSERT_THAT(info, IsOk());
  const auto& env = info->app.roles[0].env;
  EXPECT_EQ(env.at("TORCHX_PARENT_RUN_ID"), "experiment-7");
  EXPECT_EQ(env.at("TORCHX_TRACKERS"), "fsspec,mlflow");
  EXPECT_EQ(env.at("TORCHX_TRACKER_FSSPEC_CONFIG"), "file:///tmp/runs");
  EXPECT_FALSE(env.contains("TORCHX_TRACKER_MLFLOW_CONFIG"));  // no config: nothing to pass

  Runner plain(registry_);  // nothing configured: nothing added
  auto bare = plain.DryRun(plain.ComponentAppDef("utils.echo", {"--msg", "hi"}).value(), "fake", {});
  ASSERT_THAT(bare, IsOk());
  EXPECT_FALSE(bare->app.roles[0].env.contains("TORCHX_PARENT_RUN_ID"));
  EXPECT_FALSE(bare->app.roles[0].env.contains("TORCHX_TRACKERS"));

  // Tracking given with one launch wins over the Runner's, for that launch only.
  specs::Tracking once{"sweep-3", {{"mlflow", "http://127.0.0.1:5000"}}};
  auto given = r.DryRun(r.ComponentAppDef("utils.echo", {"--msg", "hi"}).value(), "fake",
                        r.ResolveCfg("fake", {}).value(), "", once);
  ASSERT_THAT(given, IsOk());
  EXPECT_EQ(given->app.roles[0].env.at("TORCHX_PARENT_RUN_ID"), "sweep-3");
  EXPECT_EQ(given->app.roles[0].env.at("TORCHX_TRACKERS"), "mlflow");
  EXPECT_EQ(given->app.roles[0].env.at("TORCHX_TRACKER_MLFLOW_CONFIG"), "http://127.0.0.1:5000");
  EXPECT_FALSE(given->app.roles[0].env.contains("TORCHX_TRACKER_FSSPEC_CONFIG"));
}

TEST_F(RunnerTest, OptionsAreResolvedOnceAndOnlyForTheirScheduler) {
  Runner r(registry_);
  specs::AppDef app = r.ComponentAppDef("utils.echo", {"--msg", "hi"}).value();
  auto resolved = r.ResolveCfg("fake", {});
  ASSERT_THAT(resolved, IsOk());
  EXPECT_EQ(resolved->Str("queue"), "default");
  auto info = r.DryRun(app, "fake", *resolved);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(std::get<std::string>(info->cfg.at("queue")), "default");  // recorded for every back-end
  EXPECT_EQ(info->scheduler, "fake");
  // Options resolved for another scheduler are refused, not read (a getter would abort).
  auto local = r.ResolveCfg("local_cwd", {});
  ASSERT_THAT(local, IsOk());
  EXPECT_THAT(r.DryRun(app, "fake", *local),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("resolved against other options than fake's")));
}

TEST_F(RunnerTest, AnInvalidAppIsReportedBeforeItsOptions) {
  Runner r(registry_);
  specs::AppDef app = r.ComponentAppDef("utils.echo", {"--msg", "hi"}).value();
  app.roles[0].num_replicas = 0;
  specs::Cfg bad = {{"queue", std::int64_t{3}}};  // the wrong type, too
  EXPECT_THAT(r.DryRun(app, "fake", bad), StatusIs(StatusCode::kInvalidArgument, HasSubstr("num_replicas")));
}

TEST_F(RunnerTest, UnknownSchedulerListsEveryBackendInOrder) {
  Runner r(registry_);
  // TorchX #1448's order: the plugins (the test's `fake`), then the built-ins, the default first.
  ASSERT_GE(r.SchedulerBackends().size(), 2u);
  EXPECT_EQ(r.SchedulerBackends()[0], "fake");
  EXPECT_EQ(r.SchedulerBackends()[1], "local_cwd");
  EXPECT_EQ(r.DefaultScheduler(), "fake");
  EXPECT_THAT(r.SchedulerRunOpts("fakee"),
              StatusIs(StatusCode::kNotFound, AllOf(HasSubstr("local_cwd, local"), HasSubstr("Did you mean `fake`?"))));
  EXPECT_THAT(r.SchedulerRunOpts("fake"), IsOk());
  // The choices are listed once, whether or not a close name is suggested.
  auto far = r.SchedulerRunOpts("zzzzzzzz");
  ASSERT_FALSE(far.ok());
  const std::string& msg = far.error().message();
  EXPECT_EQ(msg.find("Valid choices"), msg.rfind("Valid choices")) << msg;
  EXPECT_THAT(msg, HasSubstr("unknown scheduler `zzzzzzzz`. Valid choices: fake, local_cwd"));
}

TEST_F(RunnerTest, ComponentsResolveThroughTheRegistryWithItsNamedResources) {
  Runner r(registry_);
  auto help = r.ComponentHelp("utils.sh");
  ASSERT_THAT(help, IsOk());
  EXPECT_THAT(*help, HasSubstr("usage"));
  EXPECT_THAT(r.ComponentHelp("utils.shh"), StatusIs(StatusCode::kNotFound, HasSubstr("utils.sh")));
  // -h with a name only the registry has: components see plugin named resources through it.
  auto app = r.ComponentAppDef("utils.sh", {"-h", "test.box", "true"});
  ASSERT_THAT(app, IsOk());
  EXPECT_EQ(app->roles[0].resource.cpu, 7);
  EXPECT_THAT(r.NamedResource("test.box"), IsOk());
  EXPECT_THAT(r.NamedResourceNames(), ::testing::Contains("test.box"));
  EXPECT_THAT(r.NamedResource("test.bx"), StatusIs(StatusCode::kNotFound, HasSubstr("test.box")));
}

TEST_F(RunnerTest, WaitPollsABackEndThatCannotNotifyOnTheClock) {
  auto clock = std::make_shared<testing::FakeClock>();
  Runner r(registry_, Options("torchx", clock));
  ASSERT_THAT(r.SchedulerRunOpts("fake"), IsOk());  // builds the fake
  EXPECT_EQ(last_->clock.get(), clock.get());       // the back-end waits on the same clock
  last_->running_polls = 3;
  auto status = r.Wait("fake://torchx/app-1", std::chrono::milliseconds(200));
  ASSERT_THAT(status, IsOk());
  ASSERT_TRUE(status->has_value());
  EXPECT_EQ((*status)->state, specs::AppState::kSucceeded);
  using std::chrono::milliseconds;
  EXPECT_THAT(clock->sleeps(), ElementsAre(milliseconds(200), milliseconds(200), milliseconds(200)));
  // An unknown app is not waited for.
  EXPECT_THAT(r.Wait("fake://torchx/app-2"), IsOkAndHolds(std::nullopt));
}

TEST_F(RunnerTest, WaitRidesOutAnEngineOutageAndGivesUpOnALongOne) {
  auto clock = std::make_shared<testing::FakeClock>();
  Runner r(registry_, Options("torchx", clock));
  ASSERT_THAT(r.SchedulerRunOpts("fake"), IsOk());
  last_->unreachable_polls = 3;  // e.g. slurmctld restarting
  auto status = r.Wait("fake://torchx/app-1", std::chrono::milliseconds(200));
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ((*status)->state, specs::AppState::kSucceeded);
  using std::chrono::milliseconds;
  EXPECT_THAT(clock->sleeps(), ElementsAre(milliseconds(5000), milliseconds(5000), milliseconds(5000)));
  // An engine gone for good: the outage is the answer, after 10 minutes of it.
  last_->unreachable_polls = 1000;
  EXPECT_THAT(r.Wait("fake://torchx/app-1"), StatusIs(StatusCode::kUnavailable, HasSubstr("cannot be reached")));
  EXPECT_EQ(clock->sleeps().size(), 3u + 120u);
}

TEST_F(RunnerTest, WaitTimesOutOnTheClockWithoutSleepingForReal) {
  auto clock = std::make_shared<testing::FakeClock>();
  Runner r(registry_, Options("torchx", clock));
  ASSERT_THAT(r.SchedulerRunOpts("fake"), IsOk());
  last_->forever_running = true;
  auto status = r.Wait("fake://torchx/app-1", std::chrono::milliseconds(300), std::chrono::milliseconds(1000));
  EXPECT_THAT(status, StatusIs(StatusCode::kDeadlineExceeded, HasSubstr("still RUNNING after the timeout")));
  using std::chrono::milliseconds;
  // 300 + 300 + 300, then the last 100 up to the deadline.
  EXPECT_THAT(clock->sleeps(), ElementsAre(milliseconds(300), milliseconds(300), milliseconds(300), milliseconds(100)));
}

// The Runner reads what a back-end declares: an operation it lacks is refused naming the
// scheduler and the capability, before the back-end is asked; the back-end's own handles go to
// DependencyCfg as app ids.
TEST_F(RunnerTest, CapabilitiesGateWhatTheRunnerAsks) {
  Runner r(registry_);
  ASSERT_THAT(r.SchedulerCapabilities("fake"), IsOkAndHolds(schedulers::Capabilities{}));
  const std::string h = "fake://torchx/app-1";
  schedulers::LogOptions o;
  EXPECT_THAT(r.LogLines(h, o),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("scheduler fake does not support logs")));
  EXPECT_THAT(r.List("fake"), StatusIs(StatusCode::kUnimplemented, HasSubstr("does not support listing apps")));
  EXPECT_THAT(r.Delete(h), StatusIs(StatusCode::kUnimplemented, HasSubstr("does not support deleting apps")));
  EXPECT_THAT(r.Attempts(h), IsOkAndHolds(::testing::IsEmpty()));
  EXPECT_THAT(r.ResourceUsage(h),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("scheduler fake does not support resource usage")));
  EXPECT_THAT(r.DependencyCfg("fake", {h}, {}),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("does not support native dependencies")));
  specs::Role role;
  role.name = "r";
  role.image = "img";
  role.entrypoint = "true";
  role.resource = specs::Resource{1, 0, 128, {}, {}, {}};
  EXPECT_THAT(r.DryRun(specs::AppDef{"a", {role}, {}}, "fake", specs::Cfg{}, "/tmp"),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("scheduler fake does not support workspaces")));

  last_->caps = {schedulers::Capability::kLogs, schedulers::Capability::kNativeDependencies};
  o.follow = true;
  EXPECT_THAT(r.LogLines(h, o), StatusIs(StatusCode::kUnimplemented, HasSubstr("does not support following logs")));
  auto cfg = r.DependencyCfg("fake", {"fake://torchx/a1", "fake://other/a2"}, {{"queue", std::string("q")}});
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(std::get<std::string>(cfg->at("after")), "a1,a2");
  EXPECT_EQ(std::get<std::string>(cfg->at("queue")), "q");
  EXPECT_THAT(r.DependencyCfg("fake", {"local_cwd://torchx/a1"}, {}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("on scheduler local_cwd, not fake")));
  EXPECT_THAT(r.DependencyCfg("fake", {"not a handle"}, {}), StatusIs(StatusCode::kInvalidArgument, ::testing::_));
}

std::vector<std::string> Drain(schedulers::LogIterator& it) {
  std::vector<std::string> out;
  while (auto line = it.Next().value()) out.push_back(*line);
  return out;
}

TEST_F(RunnerTest, TheRunnerFiltersLogLinesUnlessTheBackEndTakesThePattern) {
  Runner r(registry_);
  ASSERT_THAT(r.SchedulerCapabilities("fake"), IsOk());
  last_->caps = {schedulers::Capability::kLogs};
  schedulers::LogOptions o;
  o.regex = "QPS.*";
  auto filtered = r.LogLines("fake://torchx/app-1", o);
  ASSERT_THAT(filtered, IsOk());
  EXPECT_THAT(Drain(**filtered), ElementsAre("QPS 10\n"));
  EXPECT_EQ(last_->regex_seen, std::nullopt);  // the back-end never saw the pattern

  last_->own_filter = true;  // a Python scheduler object: its log_iter takes the pattern
  auto own = r.LogLines("fake://torchx/app-1", o);
  ASSERT_THAT(own, IsOk());
  EXPECT_THAT(Drain(**own), ElementsAre("QPS 10\n", "hello\n"));  // kept as the back-end gave them
  EXPECT_EQ(last_->regex_seen, "QPS.*");
}

TEST_F(RunnerTest, LastLinesKeepTheTailOfWhatTheFilterKept) {
  Runner r(registry_);
  ASSERT_THAT(r.SchedulerCapabilities("fake"), IsOk());
  last_->caps = {schedulers::Capability::kLogs};
  last_->failed = true;
  schedulers::LogOptions o;
  o.last_lines = 2;
  auto tail = r.LogLines("fake://torchx/app-1", o);
  ASSERT_THAT(tail, IsOk());
  EXPECT_THAT(Drain(**tail), ElementsAre("line 30\n", std::string(5000, 'x') + "\n"));
  o.regex = "^line 1";  // the last 2 of the matching lines
  auto matching = r.LogLines("fake://torchx/app-1", o);
  ASSERT_THAT(matching, IsOk());
  EXPECT_THAT(Drain(**matching), ElementsAre("line 18\n", "line 19\n"));
  o.last_lines = 0;
  auto none = r.LogLines("fake://torchx/app-1", o);
  ASSERT_THAT(none, IsOk());
  EXPECT_THAT(Drain(**none), ::testing::IsEmpty());
}

TEST_F(RunnerTest, FailureTailsAreTheFailedReplicasLastStderrLinesBounded) {
  Runner r(registry_);
  ASSERT_THAT(r.SchedulerCapabilities("fake"), IsOk());
  const std::string h = "fake://torchx/app-1";
  auto unknown = r.FailureTails("fake://torchx/nope");
  ASSERT_THAT(unknown, IsOk());
  EXPECT_FALSE(unknown->has_value());
  EXPECT_THAT(r.FailureTails(h), IsOkAndHolds(::testing::Optional(::testing::IsEmpty())));  // succeeded
  last_->failed = true;
  EXPECT_THAT(r.FailureTails(h), IsOkAndHolds(::testing::Optional(::testing::IsEmpty())));  // no logs
  last_->caps = {schedulers::Capability::kLogs};
  auto tails = r.FailureTails(h, 3);
  ASSERT_THAT(tails, IsOk());
  ASSERT_EQ((*tails)->size(), 1u);  // only the failed replica
  const ReplicaLogTail& t = (**tails)[0];
  EXPECT_EQ(t.role, "r");
  EXPECT_EQ(t.replica_id, 1);
  EXPECT_EQ(t.stream, "stderr");
  ASSERT_EQ(t.lines.size(), 3u);
  EXPECT_EQ(t.lines[0], "line 29");                                 // no newline
  EXPECT_EQ(t.lines[2].size(), ReplicaLogTail::kMaxTailLineBytes);  // a long line is cut
  EXPECT_THAT(last_->streams_asked, ElementsAre("r/1 1"));

  last_->no_stderr = true;  // one log per replica: its combined log instead
  tails = r.FailureTails(h, 3);
  ASSERT_THAT(tails, IsOk());
  ASSERT_EQ((*tails)->size(), 1u);
  EXPECT_EQ((**tails)[0].stream, "combined");
  EXPECT_EQ((**tails)[0].lines.size(), 3u);
}

TEST_F(RunnerTest, GivenSchedulersReplaceTheRegistrys) {
  RunnerOptions options;
  options.session_name = "given";
  options.schedulers.emplace();
  (*options.schedulers)["mine"] = [this](const schedulers::SchedulerContext& context) {
    auto s = std::make_unique<FakeScheduler>(context, "mine");
    last_ = s.get();
    return Result<std::unique_ptr<schedulers::Scheduler>>(std::move(s));
  };
  Runner r(registry_, options);
  EXPECT_THAT(r.SchedulerBackends(), ElementsAre("mine"));
  specs::AppDef app = r.ComponentAppDef("utils.echo", {"--msg", "hi"}).value();
  EXPECT_THAT(
      r.DryRun(app, "fake", specs::Cfg{}),
      StatusIs(StatusCode::kNotFound, AllOf(HasSubstr("unknown scheduler `fake`"), HasSubstr("choices: mine"))));
  auto handle = r.Run(app, "mine");
  ASSERT_THAT(handle, IsOkAndHolds("mine://given/app-1"));
  EXPECT_EQ(last_->session_name(), "given");
  EXPECT_EQ(last_->submitted->roles[0].env.at("TORCHX_JOB_ID"), "mine://given/${app_id}");

  options.schedulers->clear();  // TorchX: an empty mapping is no scheduler at all
  Runner none(registry_, options);
  EXPECT_THAT(none.SchedulerBackends(), ::testing::IsEmpty());
  EXPECT_THAT(none.Status("local_cwd://given/x"), StatusIs(StatusCode::kNotFound, ::testing::_));
}

// A composite's Describe revives a dead driver, which would start the next child: its cancel is
// recorded before anything reads it. Any other back-end is read first (an ended app is a no-op).
TEST_F(RunnerTest, ACompositesCancelIsRecordedBeforeItsStateIsRead) {
  Runner r(registry_, Options("s", nullptr));
  ASSERT_THAT(r.SchedulerCapabilities("fake").status(), IsOk());
  last_->forever_running = true;
  auto outcome = r.RequestCancel("fake://s/app-1");
  ASSERT_THAT(outcome, IsOk());
  EXPECT_EQ(outcome->kind, Runner::CancelOutcome::Kind::kRequested);
  EXPECT_THAT(last_->calls, ElementsAre("describe app-1", "describe app-1", "cancel app-1", "describe app-1"));

  last_->calls.clear();
  last_->caps = {schedulers::Capability::kComposite};
  outcome = r.RequestCancel("fake://s/app-1");
  ASSERT_THAT(outcome, IsOk());
  EXPECT_EQ(outcome->kind, Runner::CancelOutcome::Kind::kRequested);
  ASSERT_FALSE(last_->calls.empty());
  EXPECT_EQ(last_->calls.front(), "cancel app-1");
  last_->calls.clear();
  ASSERT_THAT(r.Cancel("fake://s/app-1"), IsOk());
  EXPECT_THAT(last_->calls, ElementsAre("cancel app-1"));

  // An unknown composite: nothing found, no error; an ended one says how it ended.
  outcome = r.RequestCancel("fake://s/gone");
  ASSERT_THAT(outcome, IsOk());
  EXPECT_EQ(outcome->kind, Runner::CancelOutcome::Kind::kNotFound);
  EXPECT_THAT(r.Cancel("fake://s/gone"), IsOk());
  last_->forever_running = false;
  last_->failed = true;
  outcome = r.RequestCancel("fake://s/app-1");
  ASSERT_THAT(outcome, IsOk());
  EXPECT_EQ(outcome->kind, Runner::CancelOutcome::Kind::kAlreadyEnded);
  EXPECT_EQ(outcome->state, specs::AppState::kFailed);
}

// A Runner shared by threads: a back-end that allows it gets an instance per thread. What a
// thread's instance made (a log a reader still follows) may outlive the thread, so its instance
// is kept, idle, for the Runner's life, and the next new thread takes it over.
TEST_F(RunnerTest, AThreadsInstanceOutlivesItsThreadAndServesTheNextOne) {
  per_thread_ = true;
  Runner r(registry_, Options("s", nullptr));
  ASSERT_THAT(r.SchedulerCapabilities("fake").status(), IsOk());  // this thread's
  FakeScheduler* mine = last_;
  FakeScheduler* theirs = nullptr;
  std::thread([&] {
    ASSERT_THAT(r.SchedulerCapabilities("fake").status(), IsOk());
    theirs = last_;
  }).join();
  EXPECT_EQ(made_, 2);
  EXPECT_NE(mine, theirs);
  theirs->calls.push_back("still in use after its thread exited");  // ASan: no use after free
  std::thread([&] { ASSERT_THAT(r.SchedulerCapabilities("fake").status(), IsOk()); }).join();
  EXPECT_EQ(made_, 2);  // the exited thread's instance was taken over
  ASSERT_THAT(r.SchedulerCapabilities("fake").status(), IsOk());
  EXPECT_EQ(made_, 2);  // this thread keeps its own
}

}  // namespace
}  // namespace torchx::runner
