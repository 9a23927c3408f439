// Managed jobs: the recovery policy tabled on a fake clock (Observe + Decide), the driver's turns
// over a fake AttemptBackend (recovery, failover, refusal, start timeout, cancel, a driver that
// died mid-submission), the record's round trip, and the edge's parsing (targets, causes,
// durations).
#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "managed/driver.h"
#include "managed/kind.h"
#include "managed/policy.h"
#include "managed/record.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "torchx/managed/managed.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"

namespace torchx::managed {
namespace {

using schedulers::FailureCause;
using schedulers::FailureReport;
using specs::AppState;
using ::testing::HasSubstr;

ManagedRecord Record(int targets = 1, int max_recoveries = 2) {
  ManagedRecord r;
  r.id = "train-x1";
  r.name = "train";
  r.session = "s";
  r.cwd = "/tmp";
  specs::AppDef app;
  app.name = "train";
  specs::Role role;
  role.name = "trainer";
  role.image = "img";
  role.entrypoint = "python";
  role.args = {"t.py"};
  app.roles.push_back(role);
  r.app_json = specs::AppDefToJson(app, -1);
  for (int i = 0; i < targets; ++i) {
    std::string name = i == 0 ? "slurm" : "local_cwd";
    r.targets.push_back({name, "{}", fmt::format("{}#{}", name, i)});
  }
  r.max_recoveries = max_recoveries;
  for (FailureCause c : DefaultRecoverOn()) r.recover_on.emplace_back(schedulers::FailureCauseName(c));
  r.checkpoint_dir = "/ckpt";
  return r;
}

AttemptRecord Ended(int index, int target, std::string cause, AppState state = AppState::kFailed) {
  AttemptRecord a;
  a.index = index;
  a.target = target;
  a.phase = ChildPhase::kDone;
  a.handle = fmt::format("slurm://s/{}", 100 + index);
  a.state = state;
  a.cause = std::move(cause);
  a.submitted = 10;
  a.ended = 20;
  return a;
}

AttemptRecord Live(int index, int target, AppState state, double submitted) {
  AttemptRecord a;
  a.index = index;
  a.target = target;
  a.phase = ChildPhase::kSubmitted;
  a.handle = fmt::format("slurm://s/{}", 100 + index);
  a.state = state;
  a.submitted = submitted;
  a.seen = submitted;
  return a;
}

TEST(Decide, FirstAttemptGoesToTheFirstTarget) {
  Action a = Decide(Record(2), 0);
  EXPECT_EQ(a.kind, ActionKind::kSubmit);
  EXPECT_EQ(a.target, 0);
}

TEST(Decide, RecoversInfrastructureCausesOnTheSameTargetUpToMaxRecoveries) {
  for (const char* cause : {"node_failure", "preemption", "eviction", "engine_lost", "supervisor_lost"}) {
    ManagedRecord r = Record(1, 2);
    r.attempts = {Ended(0, 0, cause)};
    Action a = Decide(r, 30);
    EXPECT_EQ(a.kind, ActionKind::kSubmit) << cause;
    EXPECT_EQ(a.target, 0);
    EXPECT_EQ(a.why, fmt::format("recovery 1 after {}", cause));
    r.attempts.push_back(Ended(1, 0, cause));
    EXPECT_EQ(Decide(r, 30).kind, ActionKind::kSubmit) << cause;
    r.attempts.push_back(Ended(2, 0, cause));  // a third failure: max_recoveries=2 spent, no next target
    a = Decide(r, 30);
    EXPECT_EQ(a.kind, ActionKind::kFinish) << cause;
    EXPECT_EQ(a.final_state, AppState::kFailed);
    EXPECT_THAT(a.msg, HasSubstr("3 failures on slurm#0 (max_recoveries=2)"));
  }
}

TEST(Decide, UserCausesEndTheRunUnlessAsked) {
  for (const char* cause : {"user_error", "out_of_memory", "time_limit", "unknown"}) {
    ManagedRecord r = Record();
    r.attempts = {Ended(0, 0, cause)};
    r.attempts.Mut(0).msg = "exit 1";
    Action a = Decide(r, 30);
    EXPECT_EQ(a.kind, ActionKind::kFinish) << cause;
    EXPECT_EQ(a.final_state, AppState::kFailed);
    EXPECT_THAT(a.msg, HasSubstr(fmt::format("--recover_on {} would", cause)));
    r.recover_on.emplace_back(cause);
    EXPECT_EQ(Decide(r, 30).kind, ActionKind::kSubmit) << cause;
  }
}

TEST(Decide, AnOutsideCancelEndsTheRunCancelled) {
  ManagedRecord r = Record(2);
  r.attempts = {Ended(0, 0, "cancelled", AppState::kCancelled)};
  Action a = Decide(r, 30);
  EXPECT_EQ(a.kind, ActionKind::kFinish);
  EXPECT_EQ(a.final_state, AppState::kCancelled);
  EXPECT_THAT(a.msg, HasSubstr("cancelled outside the launcher"));
}

TEST(Decide, SuccessEndsTheRunCountingRecoveries) {
  ManagedRecord r = Record();
  r.attempts = {Ended(0, 0, "node_failure"), Ended(1, 0, "", AppState::kSucceeded)};
  Action a = Decide(r, 30);
  EXPECT_EQ(a.final_state, AppState::kSucceeded);
  EXPECT_EQ(a.msg, "succeeded after 1 recovery");
  EXPECT_EQ(RecoveryCount(r), 1);
}

TEST(Decide, RefusalAndExhaustionFailOver) {
  ManagedRecord r = Record(2);
  AttemptRecord refused = Ended(0, 0, std::string(kRefused));
  refused.phase = ChildPhase::kRefused;
  refused.msg = "sbatch: Partition in drain";
  r.attempts = {refused};
  Action a = Decide(r, 30);
  EXPECT_EQ(a.kind, ActionKind::kSubmit);
  EXPECT_EQ(a.target, 1);
  EXPECT_THAT(a.why, HasSubstr("failover from slurm#0: attempt 0 refused"));
  // The last target refuses too: FAILED naming each target's outcome.
  AttemptRecord refused2 = refused;
  refused2.index = 1;
  refused2.target = 1;
  refused2.msg = "no such partition";
  r.attempts.push_back(refused2);
  a = Decide(r, 30);
  EXPECT_EQ(a.final_state, AppState::kFailed);
  EXPECT_THAT(a.msg, HasSubstr("attempt 0 on slurm#0: refused: sbatch: Partition in drain"));
  EXPECT_THAT(a.msg, HasSubstr("attempt 1 on local_cwd#1: refused: no such partition"));
  EXPECT_EQ(RecoveryCount(r), 0);  // a refusal is not a recovery
}

TEST(Decide, StartTimeoutCancelsAWaitingAttemptThenFailsOver) {
  ManagedRecord r = Record(2);
  r.start_timeout = 60;
  r.attempts = {Live(0, 0, AppState::kPending, 100)};
  EXPECT_EQ(Decide(r, 150).kind, ActionKind::kWait);
  Action a = Decide(r, 161);
  EXPECT_EQ(a.kind, ActionKind::kCancel);
  EXPECT_EQ(a.cause, kStartTimeout);
  r.attempts.Mut(0).started = 120;  // it started: no timeout
  r.attempts.Mut(0).state = AppState::kRunning;
  EXPECT_EQ(Decide(r, 500).kind, ActionKind::kWait);
  r.attempts = {Ended(0, 0, std::string(kStartTimeout), AppState::kCancelled)};
  a = Decide(r, 200);
  EXPECT_EQ(a.kind, ActionKind::kSubmit);
  EXPECT_EQ(a.target, 1);
}

TEST(Decide, CancelRequestedCancelsTheAttemptThenEnds) {
  ManagedRecord r = Record();
  r.cancel_requested = true;
  r.attempts = {Live(0, 0, AppState::kRunning, 1)};
  EXPECT_EQ(Decide(r, 2).kind, ActionKind::kCancel);
  EXPECT_EQ(Decide(r, 2).cause, "");
  r.attempts = {Ended(0, 0, "cancelled", AppState::kCancelled)};
  Action a = Decide(r, 3);
  EXPECT_EQ(a.final_state, AppState::kCancelled);
  EXPECT_EQ(a.msg, "cancelled");
}

TEST(Decide, NeverSubmittedIsSubmittedAgainWithoutCountingARecovery) {
  ManagedRecord r = Record();
  r.attempts = {Ended(0, 0, std::string(kNeverSubmitted))};
  Action a = Decide(r, 3);
  EXPECT_EQ(a.kind, ActionKind::kSubmit);
  EXPECT_EQ(a.target, 0);
  r.attempts.push_back(Live(1, 0, AppState::kRunning, 4));
  EXPECT_EQ(RecoveryCount(r), 0);
}

TEST(Observe, RecordsStartEndAndCauseKeepingTheDriversOwn) {
  ManagedRecord r = Record();
  r.attempts = {Live(0, 0, AppState::kSubmitted, 1)};
  Observe(r, {AppState::kRunning, std::nullopt, ""}, 5);
  EXPECT_EQ(r.attempts[0].started, 5);
  EXPECT_EQ(LiveState(r), AppState::kRunning);
  Observe(r, {AppState::kFailed, FailureReport{FailureCause::kNodeFailure, "node2 failed"}, ""}, 9);
  EXPECT_EQ(r.attempts[0].phase, ChildPhase::kDone);
  EXPECT_EQ(r.attempts[0].cause, "node_failure");
  EXPECT_EQ(r.attempts[0].msg, "node2 failed");
  EXPECT_EQ(r.attempts[0].ended, 9);
  EXPECT_EQ(LiveState(r), AppState::kPending);  // between attempts

  r.attempts = {Live(0, 0, AppState::kPending, 1)};
  r.attempts.Mut(0).cause = std::string(kStartTimeout);  // the driver cancelled it
  Observe(r, {AppState::kCancelled, FailureReport{FailureCause::kCancelled, "by 0"}, ""}, 9);
  EXPECT_EQ(r.attempts[0].cause, kStartTimeout);

  r.attempts = {Live(0, 0, AppState::kRunning, 1)};
  Observe(r, {std::nullopt, std::nullopt, "connection refused"}, 9);  // an outage changes nothing
  EXPECT_EQ(r.attempts[0].phase, ChildPhase::kSubmitted);
  EXPECT_THAT(r.msg, HasSubstr("cannot be reached: connection refused"));
  Observe(r, {std::nullopt, std::nullopt, ""}, 10);  // the engine no longer knows it
  EXPECT_EQ(r.attempts[0].cause, "engine_lost");
  EXPECT_EQ(r.msg, "");
}

// A note on an unreachable engine is cleared by its flag, not by what its words say: a message
// that merely reads like one stays, and the flag survives the record's round trip.
TEST(Observe, ClearsTheUnreachableNoteByItsFlag) {
  ManagedRecord r = Record();
  r.attempts = {Live(0, 0, AppState::kRunning, 1)};
  Observe(r, {std::nullopt, std::nullopt, "connection refused"}, 9);
  EXPECT_TRUE(r.msg_transient);
  auto back = ManagedCodec::FromJson(ManagedCodec::ToJson(r));
  ASSERT_THAT(back.status(), IsOk());
  EXPECT_TRUE(back->msg_transient);
  Observe(*back, {AppState::kRunning, std::nullopt, ""}, 10);
  EXPECT_EQ(back->msg, "");
  EXPECT_FALSE(back->msg_transient);
  back->msg = "attempt 0: its scheduler cannot be reached: said by someone else";
  Observe(*back, {AppState::kRunning, std::nullopt, ""}, 11);
  EXPECT_EQ(back->msg, "attempt 0: its scheduler cannot be reached: said by someone else");
}

TEST(Record, RoundTripsAndAttemptAppCarriesTheEnv) {
  ManagedRecord r = Record(2);
  r.start_timeout = 90;
  r.attempts = {Ended(0, 0, "node_failure"), Live(1, 1, AppState::kRunning, 30)};
  r.attempts.Mut(0).msg = "node2";
  r.attempts.Mut(0).why = "first attempt";
  auto back = ManagedCodec::FromJson(ManagedCodec::ToJson(r));
  ASSERT_THAT(back.status(), IsOk());
  EXPECT_EQ(ManagedCodec::ToJson(*back), ManagedCodec::ToJson(r));
  auto app = AttemptApp(r, 3);
  ASSERT_THAT(app.status(), IsOk());
  EXPECT_EQ(app->roles[0].env.at("TORCHX_CHECKPOINT_DIR"), "/ckpt");
  EXPECT_EQ(app->roles[0].env.at("TORCHX_RECOVERY_COUNT"), "3");
  EXPECT_EQ(app->roles[0].env.at("TORCHX_MANAGED_HANDLE"), "managed://s/train-x1");
  EXPECT_THAT(ManagedCodec::FromJson(R"({"id": 1})").status(), StatusIs(StatusCode::kInternal, HasSubstr("managed")));
}

// A record as the build before the shared child record wrote it: the attempt's message under
// `reason`, its claim as the planned app id, `claimed` always present.
TEST(Record, ReadsRecordsWrittenBeforeTheSharedChildRecord) {
  const char* old = R"({"id":"train-x1","name":"train","session":"s","cwd":"/w","created":1.0,
    "app":{"name":"train","roles":[]},"targets":[{"scheduler":"slurm","cfg":{},"label":"slurm#0"}],
    "max_recoveries":1,"recover_on":["node_failure"],"start_timeout":null,"checkpoint_dir":"/ckpt",
    "cancel_requested":false,"final_state":null,"msg":"","msg_transient":false,"submit_retry_since":null,
    "attempts":[{"index":0,"target":0,"phase":"done","planned_id":"app7","planned_final":true,
      "handle":"slurm://s/app7","state":"FAILED","why":"first attempt","cause":"node_failure",
      "reason":"node2 failed","submitted":10.0,"started":11.0,"ended":20.0,"seen":19.0,"claimed":9.0},
     {"index":1,"target":0,"phase":"submitting","planned_id":"app8","planned_final":false,"handle":"",
      "state":"UNSUBMITTED","why":"recovery 1","cause":"","reason":"","submitted":null,"started":null,
      "ended":null,"seen":null,"claimed":21.0}]})";
  auto r = ManagedCodec::FromJson(old);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_EQ(r->attempts.size(), 2u);
  EXPECT_EQ(r->attempts[0].msg, "node2 failed");
  EXPECT_EQ(r->attempts[0].planned.handle, "slurm://s/app7");
  EXPECT_EQ(r->attempts[1].phase, ChildPhase::kSubmitting);
  EXPECT_EQ(r->attempts[1].planned.handle, "slurm://s/app8");
  EXPECT_FALSE(r->attempts[1].planned.id_is_final);
  EXPECT_EQ(r->attempts[1].planned.claimed, 21.0);
  auto again = ManagedCodec::FromJson(ManagedCodec::ToJson(*r));
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(ManagedCodec::ToJson(*again), ManagedCodec::ToJson(*r));
}

TEST(Edge, TargetsCausesAndDurations) {
  auto t = ParseTarget("slurm:partition=gpu-b,qos=high");
  ASSERT_THAT(t.status(), IsOk());
  EXPECT_EQ(t->scheduler, "slurm");
  EXPECT_EQ(t->cfg, "partition=gpu-b,qos=high");
  EXPECT_EQ(ParseTarget("local_cwd")->cfg, "");
  EXPECT_THAT(ParseTarget(":a=b").status(), StatusIs(StatusCode::kInvalidArgument, HasSubstr("SCHEDULER[:k=v")));
  EXPECT_EQ(*ParseDuration("90", "x"), 90);
  EXPECT_EQ(*ParseDuration("15m", "x"), 900);
  EXPECT_EQ(*ParseDuration("2h", "x"), 7200);
  EXPECT_THAT(ParseDuration("soon", "--start_timeout").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("--start_timeout: `soon` is not a duration")));
  auto p = PolicyWith(1, {"user_error", "time_limit"}, "10m");
  ASSERT_THAT(p.status(), IsOk());
  EXPECT_TRUE(p->recover_on.contains(FailureCause::kUserError));
  EXPECT_TRUE(p->recover_on.contains(FailureCause::kNodeFailure));
  EXPECT_EQ(p->start_timeout, 600);
  EXPECT_THAT(PolicyWith(1, {"cancelled"}, std::nullopt).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("person's decision")));
  EXPECT_THAT(PolicyWith(1, {"gremlins"}, std::nullopt).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("valid choices: user_error, out_of_memory")));
  EXPECT_THAT(PolicyWith(-1, {}, std::nullopt).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("--max_recoveries: -1 is negative")));
  // Comma-separated entries are split here, whoever passes them (the CLI, a file, Python).
  auto split = PolicyWith(0, {"user_error,time_limit", ""}, std::nullopt);
  ASSERT_THAT(split.status(), IsOk());
  EXPECT_TRUE(split->recover_on.contains(FailureCause::kTimeLimit));
}

// A composite's child's `managed:` block: the keys of `run --managed`, every field checked by name,
// and its JSON read back as written.
TEST(ChildPolicy, ParsesTheBlockAndRoundTrips) {
  auto p = ParseChildPolicy(
      R"({"max_recoveries": 1, "recover_on": "user_error,time_limit", "start_timeout": "15m",
          "failover": ["slurm:partition=b", {"scheduler": "local", "cfg": {"image": "x"}}], "checkpoint_dir": "c"})",
      "steps.a.managed");
  ASSERT_THAT(p.status(), IsOk());
  EXPECT_EQ(p->policy.max_recoveries, 1);
  EXPECT_TRUE(p->policy.recover_on.contains(FailureCause::kUserError));
  EXPECT_TRUE(p->policy.recover_on.contains(FailureCause::kSupervisorLost));  // the defaults stay
  EXPECT_EQ(p->policy.start_timeout, 900);
  ASSERT_EQ(p->failover.size(), 2u);
  EXPECT_EQ(p->failover[0].scheduler, "slurm");
  EXPECT_EQ(p->failover[0].cfg, "partition=b");
  EXPECT_EQ(p->failover[1].cfg_json, R"({"image":"x"})");
  EXPECT_EQ(p->checkpoint_dir, "c");
  auto again = ParseChildPolicy(ChildPolicyToJson(*p), "x");
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(ChildPolicyToJson(*again), ChildPolicyToJson(*p));
  auto defaults = ParseChildPolicy("null", "managed");  // `managed:` alone
  ASSERT_THAT(defaults.status(), IsOk());
  EXPECT_EQ(defaults->policy.max_recoveries, 3);
  EXPECT_EQ(defaults->policy.recover_on, DefaultRecoverOn());

  EXPECT_THAT(ParseChildPolicy(R"({"max_recoverys": 2})", "steps.a.managed").status(),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("steps.a.managed: unknown field `max_recoverys`; valid fields: max_recoveries")));
  EXPECT_THAT(ParseChildPolicy(R"({"max_recoveries": "two"})", "managed").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("managed.max_recoveries: must be a whole number")));
  EXPECT_THAT(ParseChildPolicy(R"({"recover_on": ["gremlins"]})", "managed").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("managed.recover_on: unknown cause `gremlins`")));
  // A file's field is named as the file spells it, not as the flag.
  EXPECT_THAT(ParseChildPolicy(R"({"max_recoveries": -1})", "steps.a.managed").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("steps.a.managed.max_recoveries: -1 is negative")));
  EXPECT_THAT(ParseChildPolicy(R"({"start_timeout": "soon"})", "managed").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("managed.start_timeout: `soon` is not a duration")));
  EXPECT_THAT(ParseChildPolicy(R"({"failover": [{"cfg": {}}]})", "managed").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("managed.failover[0]: give `SCHEDULER[:k=v,...]`")));
  EXPECT_THAT(ParseChildPolicy(R"({"start_timeout": "soon"})", "managed").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("`soon` is not a duration")));
  EXPECT_THAT(ParseChildPolicy("[1]", "managed").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("managed: must be a mapping")));
}

// The attempts' schedulers: apps by handle, each submission numbered; what Schedule refuses.
class FakeBackend : public AttemptBackend {
 public:
  Result<std::optional<specs::AppStatus>> Status(const std::string& handle) override {
    auto it = apps.find(handle);
    if (it == apps.end()) return std::optional<specs::AppStatus>();
    specs::AppStatus st;
    st.state = it->second;
    return std::optional(st);
  }
  Result<std::optional<FailureReport>> Classify(const std::string& handle) override {
    if (classify_down) return UnavailableError("squeue: timed out");
    if (auto it = causes.find(handle); it != causes.end()) return std::optional(it->second);
    return std::optional(FailureReport{FailureCause::kUnknown, ""});
  }
  Result<schedulers::DryRunInfo> DryRun(specs::AppDef app, const std::string& scheduler, const std::string&) override {
    schedulers::DryRunInfo info;
    info.scheduler = scheduler;
    info.app = std::move(app);
    info.app_id = fmt::format("app{}", next_id);
    return info;
  }
  Result<std::string> Schedule(const schedulers::DryRunInfo& info) override {
    if (unreachable) return UnavailableError("sbatch: Socket timed out");
    if (refuse.contains(info.scheduler)) return InvalidArgumentError(refuse[info.scheduler]);
    std::string handle = specs::MakeAppHandle(info.scheduler, "s", fmt::format("app{}", next_id++));
    apps[handle] = AppState::kPending;
    submitted.push_back(info);
    return handle;
  }
  ::torchx::Status Cancel(const std::string& handle) override {
    cancelled.push_back(handle);
    if (apps.contains(handle)) apps[handle] = AppState::kCancelled;
    return OkStatus();
  }
  bool WaitForUpdate(const std::string&, std::chrono::milliseconds) override { return false; }

  std::map<std::string, AppState> apps;
  std::map<std::string, FailureReport> causes;
  std::map<std::string, std::string> refuse;
  std::vector<schedulers::DryRunInfo> submitted;
  std::vector<std::string> cancelled;
  int next_id = 0;
  bool classify_down = false;
  bool unreachable = false;
};

class DriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_THAT(store.EnsureDir(), IsOk());
    ManagedRecord r = Record(2, 1);
    ASSERT_THAT(store.Create(r), IsOk());
  }
  ManagedRecord TurnAt(double now) {
    auto r = Turn(store, "train-x1", backend, now);
    EXPECT_THAT(r.status(), IsOk());
    return r ? *r : ManagedRecord{};
  }
  // A first attempt a dead driver claimed under `planned_id` and never recorded; a new driver's turn.
  ManagedRecord ResumeClaimOf(const std::string& planned_id, bool planned_final) {
    EXPECT_THAT(store
                    .Update("train-x1",
                            [&](ManagedRecord& r) {
                              AttemptRecord a;
                              a.planned.handle = "slurm://s/" + planned_id;
                              a.planned.id_is_final = planned_final;
                              r.attempts.push_back(a);
                              return OkStatus();
                            })
                    .status(),
                IsOk());
    EXPECT_THAT(ResumeSubmitting(store, "train-x1", backend, 5), IsOk());
    return TurnAt(6);
  }
  torchx::testing::ScopedTempDir dir;
  ManagedStore store{dir.path() + "/managed"};
  FakeBackend backend;
};

TEST_F(DriverTest, RecoversAfterANodeFailureWithTheSameCheckpointDir) {
  ManagedRecord r = TurnAt(1);
  ASSERT_EQ(r.attempts.size(), 1u);
  EXPECT_EQ(r.attempts[0].handle, "slurm://s/app0");
  backend.apps["slurm://s/app0"] = AppState::kRunning;
  r = TurnAt(2);
  EXPECT_EQ(r.attempts[0].started, 2);
  backend.apps["slurm://s/app0"] = AppState::kFailed;
  backend.causes["slurm://s/app0"] = {FailureCause::kNodeFailure, "slurm job 0: a node it ran on failed"};
  r = TurnAt(3);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[0].cause, "node_failure");
  EXPECT_EQ(r.attempts[1].why, "recovery 1 after node_failure");
  ASSERT_EQ(backend.submitted.size(), 2u);
  EXPECT_EQ(backend.submitted[1].app.roles[0].env.at("TORCHX_RECOVERY_COUNT"), "1");
  EXPECT_EQ(backend.submitted[1].app.roles[0].env.at("TORCHX_CHECKPOINT_DIR"),
            backend.submitted[0].app.roles[0].env.at("TORCHX_CHECKPOINT_DIR"));
  backend.apps["slurm://s/app1"] = AppState::kSucceeded;
  r = TurnAt(4);
  EXPECT_EQ(r.final_state, AppState::kSucceeded);
  EXPECT_EQ(r.msg, "succeeded after 1 recovery");
}

// The turn that submitted an attempt asks for the next soon: the attempt may already run, and a
// scheduler's wait wakes for the next change, not one before it (a recovered job showed its new
// attempt SUBMITTED for the driver's whole 10 s notified wait). Once seen running, no hurry.
TEST_F(DriverTest, AJustSubmittedAttemptIsLookedAtSoonThenWaitedOn) {
  auto current = store.Get("train-x1");
  ASSERT_THAT(current, IsOk());
  ASSERT_TRUE(current->has_value());
  auto turns = ManagedKind::StartTurns(store, "train-x1", backend, **current);
  ASSERT_THAT(turns, IsOk());
  auto first = (*turns)->Turn();
  ASSERT_THAT(first, IsOk());
  ASSERT_EQ(first->wait_on, std::optional<std::string>("slurm://s/app0"));
  ASSERT_TRUE(first->turn_within.has_value());
  EXPECT_LE(*first->turn_within, std::chrono::milliseconds(50));
  backend.apps["slurm://s/app0"] = AppState::kRunning;
  auto second = (*turns)->Turn();
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->wait_on, std::optional<std::string>("slurm://s/app0"));
  EXPECT_FALSE(second->turn_within.has_value());
  EXPECT_TRUE(second->sole_child);
}

TEST_F(DriverTest, FailsOverWhenRefusedAndNamesEveryTargetWhenAllRefuse) {
  backend.refuse["slurm"] = "sbatch: error: Partition in drain";
  ManagedRecord r = TurnAt(1);
  ASSERT_EQ(r.attempts.size(), 1u);
  EXPECT_EQ(r.attempts[0].phase, ChildPhase::kRefused);
  r = TurnAt(2);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[1].handle, "local_cwd://s/app0");
  backend.refuse["local_cwd"] = "local: cannot start";
  backend.apps["local_cwd://s/app0"] = AppState::kFailed;
  backend.causes["local_cwd://s/app0"] = {FailureCause::kSupervisorLost, "supervisor died"};
  r = TurnAt(3);  // recovery 1 on local_cwd: refused this time
  r = TurnAt(4);
  EXPECT_EQ(r.final_state, AppState::kFailed);
  EXPECT_THAT(r.msg, HasSubstr("slurm#0: refused: sbatch: error: Partition in drain"));
  EXPECT_THAT(r.msg, HasSubstr("local_cwd#1: refused: local: cannot start"));
}

TEST_F(DriverTest, StartTimeoutCancelsAndMovesOn) {
  ASSERT_THAT(store
                  .Update("train-x1",
                          [](ManagedRecord& r) {
                            r.start_timeout = 10;
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  TurnAt(100);
  TurnAt(105);
  EXPECT_TRUE(backend.cancelled.empty());
  ManagedRecord r = TurnAt(111);
  EXPECT_EQ(backend.cancelled, std::vector<std::string>{"slurm://s/app0"});
  EXPECT_EQ(r.attempts[0].cause, kStartTimeout);
  r = TurnAt(112);  // its cancel seen; then the next target
  r = TurnAt(113);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[1].target, 1);
}

TEST_F(DriverTest, ADriverThatDiedMidSubmissionIsNotSubmittedTwice) {
  // Claimed with a planned id the scheduler has: adopted, not submitted again.
  ASSERT_THAT(store
                  .Update("train-x1",
                          [](ManagedRecord& r) {
                            AttemptRecord a;
                            a.planned.handle = "slurm://s/app7";
                            a.why = "first attempt";
                            r.attempts.push_back(a);
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  backend.apps["slurm://s/app7"] = AppState::kRunning;
  ASSERT_THAT(ResumeSubmitting(store, "train-x1", backend, 5), IsOk());
  ManagedRecord r = TurnAt(6);
  ASSERT_EQ(r.attempts.size(), 1u);
  EXPECT_EQ(r.attempts[0].handle, "slurm://s/app7");
  EXPECT_TRUE(backend.submitted.empty());
  // A planned id the scheduler does not have, on a scheduler an earlier attempt showed keeps its
  // planned ids (attempt 0 came back as app7): never submitted, so submitted again (no recovery).
  backend.apps["slurm://s/app7"] = AppState::kFailed;
  ASSERT_THAT(store
                  .Update("train-x1",
                          [](ManagedRecord& r) {
                            AttemptRecord a;
                            a.index = 1;
                            a.planned.handle = "slurm://s/app8";
                            a.why = "recovery 1 after node_failure";
                            r.attempts.Mut(0).phase = ChildPhase::kDone;
                            r.attempts.Mut(0).state = AppState::kFailed;
                            r.attempts.Mut(0).cause = "node_failure";
                            r.attempts.push_back(a);
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  ASSERT_THAT(ResumeSubmitting(store, "train-x1", backend, 7), IsOk());
  r = TurnAt(8);
  ASSERT_EQ(r.attempts.size(), 3u);
  EXPECT_EQ(r.attempts[1].cause, kNeverSubmitted);
  EXPECT_EQ(backend.submitted.size(), 1u);
  EXPECT_EQ(RecoveryCount(r), 1);  // the node failure's; the resubmission is none
}

TEST_F(DriverTest, APlannedIdItsSchedulerKeepsThatIsNotThereIsSubmittedAgain) {
  ManagedRecord r = ResumeClaimOf("app3", /*planned_final=*/true);  // local_cwd, kubernetes, local_docker
  EXPECT_FALSE(r.final_state);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[0].cause, kNeverSubmitted);
  EXPECT_EQ(backend.submitted.size(), 1u);
}

// A claim younger than a start still in flight could take (a warm supervisor may still be
// serving the dead driver's request): not there yet is not "never submitted" yet.
TEST_F(DriverTest, AFreshClaimWhoseAppIsNotThereYetWaitsThenIsSubmittedAgain) {
  ASSERT_THAT(store
                  .Update("train-x1",
                          [](ManagedRecord& r) {
                            AttemptRecord a;
                            a.planned.handle = "slurm://s/app3";
                            a.planned.id_is_final = true;
                            a.planned.claimed = 100;
                            r.attempts.push_back(a);
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  ASSERT_THAT(ResumeSubmitting(store, "train-x1", backend, 101), IsOk());
  ManagedRecord r = TurnAt(101);
  ASSERT_EQ(r.attempts.size(), 1u);
  EXPECT_EQ(r.attempts[0].phase, ChildPhase::kSubmitting);
  EXPECT_TRUE(backend.submitted.empty());
  backend.apps["slurm://s/app3"] = AppState::kRunning;  // the start in flight was recorded
  ASSERT_THAT(ResumeSubmitting(store, "train-x1", backend, 102), IsOk());
  r = TurnAt(102);
  EXPECT_EQ(r.attempts[0].phase, ChildPhase::kSubmitted);
  EXPECT_EQ(r.attempts[0].handle, "slurm://s/app3");
  EXPECT_TRUE(backend.submitted.empty());
}

TEST_F(DriverTest, AnUnconfirmedPlannedIdThatIsNotThereEndsTheRunRatherThanRiskTwoRuns) {
  ManagedRecord r = ResumeClaimOf("app3", /*planned_final=*/false);  // a plugin may have chosen its own id
  EXPECT_EQ(r.final_state, AppState::kFailed);
  EXPECT_THAT(r.msg, HasSubstr("not known to keep the id chosen before submitting"));
  EXPECT_TRUE(backend.submitted.empty());
}

TEST_F(DriverTest, NoPlannedIdEndsTheRunRatherThanRiskTwoRuns) {
  ASSERT_THAT(store
                  .Update("train-x1",
                          [](ManagedRecord& r) {
                            r.attempts.push_back(AttemptRecord{});
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  ASSERT_THAT(ResumeSubmitting(store, "train-x1", backend, 5), IsOk());
  ManagedRecord r = TurnAt(6);
  EXPECT_EQ(r.final_state, AppState::kFailed);
  EXPECT_THAT(r.msg, HasSubstr("not submitted again"));
  EXPECT_TRUE(backend.submitted.empty());
}

TEST_F(DriverTest, CancelStopsTheAttemptAndFurtherRecoveries) {
  TurnAt(1);
  backend.apps["slurm://s/app0"] = AppState::kRunning;
  ASSERT_THAT(store
                  .Update("train-x1",
                          [](ManagedRecord& r) {
                            r.cancel_requested = true;
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  TurnAt(2);
  EXPECT_EQ(backend.cancelled, std::vector<std::string>{"slurm://s/app0"});
  ManagedRecord r = TurnAt(3);
  EXPECT_EQ(r.final_state, AppState::kCancelled);
  EXPECT_EQ(backend.submitted.size(), 1u);
}

TEST_F(DriverTest, AClassificationThatFailsIsAskedAgainNotGuessed) {
  TurnAt(1);
  backend.apps["slurm://s/app0"] = AppState::kFailed;
  backend.causes["slurm://s/app0"] = {FailureCause::kNodeFailure, "node2"};
  backend.classify_down = true;
  ManagedRecord r = TurnAt(2);
  EXPECT_EQ(r.attempts[0].phase, ChildPhase::kSubmitted);
  EXPECT_THAT(r.msg, HasSubstr("classifying its end: squeue: timed out"));
  backend.classify_down = false;
  r = TurnAt(3);
  EXPECT_EQ(r.attempts[0].cause, "node_failure");
  ASSERT_EQ(r.attempts.size(), 2u);  // recovered
  // The recovery stopped what was left of the attempt before it first.
  EXPECT_EQ(backend.cancelled, std::vector<std::string>{"slurm://s/app0"});
}

TEST_F(DriverTest, AnUnreachableEngineIsTriedAgainThenCountsAsRefused) {
  backend.unreachable = true;
  ManagedRecord r = TurnAt(100);
  EXPECT_TRUE(r.attempts.empty());
  EXPECT_THAT(r.msg, HasSubstr("cannot be reached, trying again: sbatch: Socket timed out"));
  r = TurnAt(150);
  EXPECT_TRUE(r.attempts.empty());
  r = TurnAt(100 + kSubmitRetrySeconds + 1);  // the window has passed: refused, the next target
  ASSERT_EQ(r.attempts.size(), 1u);
  EXPECT_EQ(r.attempts[0].phase, ChildPhase::kRefused);
  backend.unreachable = false;
  r = TurnAt(300);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[1].handle, "local_cwd://s/app0");
  EXPECT_EQ(r.msg, "");
}

TEST(Observe, SeenIsRecordedOnceAMinuteNotOnEveryLook) {
  ManagedRecord r = Record();
  r.attempts = {Live(0, 0, AppState::kRunning, 1)};
  Observe(r, {AppState::kRunning, std::nullopt, ""}, 100);
  EXPECT_EQ(r.attempts[0].seen, 100);
  ManagedRecord before = r;
  for (double now = 101; now < 100 + kSeenRecordedEvery; now += 1) {
    Observe(r, {AppState::kRunning, std::nullopt, ""}, now);
  }
  EXPECT_EQ(r.attempts, before.attempts);  // nothing for the store to write while it runs on
  Observe(r, {AppState::kRunning, std::nullopt, ""}, 100 + kSeenRecordedEvery);
  EXPECT_EQ(r.attempts[0].seen, 100 + kSeenRecordedEvery);
  // Gone 10 minutes after a look that left `seen` a minute old: still lost by the engine.
  Observe(r, {std::nullopt, std::nullopt, ""}, 100 + kSeenRecordedEvery + kLostIfSeenWithin + 59);
  EXPECT_EQ(r.attempts[0].cause, "engine_lost");
}

TEST(Observe, AnAppForgottenLongAfterItWasSeenIsNotCalledLostAndAStartClearsTheTimeout) {
  ManagedRecord r = Record();
  r.attempts = {Live(0, 0, AppState::kRunning, 1)};
  r.attempts.Mut(0).seen = 10;
  Observe(r, {std::nullopt, std::nullopt, ""}, 10 + kLostIfSeenWithin + kSeenRecordedEvery + 1);
  EXPECT_EQ(r.attempts[0].cause, "unknown");  // it may have ended while nobody watched
  EXPECT_THAT(r.attempts[0].msg, HasSubstr("may have ended unwatched"));
  EXPECT_EQ(Decide(r, 2000).kind, ActionKind::kFinish);

  r.attempts = {Live(0, 0, AppState::kPending, 1)};
  r.attempts.Mut(0).cause = std::string(kStartTimeout);  // its cancel did not take, and it started
  Observe(r, {AppState::kRunning, std::nullopt, ""}, 5);
  EXPECT_EQ(r.attempts[0].cause, "");
  EXPECT_EQ(r.attempts[0].started, 5);
  EXPECT_EQ(r.attempts[0].seen, 1);  // seen at submission, 4 s before: not recorded again yet
}

}  // namespace
}  // namespace torchx::managed
