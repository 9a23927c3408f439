// Pipeline files (fields, graph), the record store, and the rules that move a pipeline forward,
// over a fake StepBackend (no scheduler, no sleeps). Real runs: tests/integration/pipelines.
#include <sys/stat.h>

#include <map>

#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "composite/fake_children.h"
#include "pipelines/engine.h"
#include "pipelines/pipeline_store.h"
#include "testing/registry.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "torchx/pipelines/pipeline.h"

namespace torchx::pipelines {
namespace {

using specs::AppState;
using ::testing::AllOf, ::testing::ElementsAre, ::testing::HasSubstr, ::testing::Not;

// ---- pipeline files ----

TEST(ParsePipelineTest, StepsComeAfterTheirDependencies) {
  auto p = ParsePipeline(R"(
name: flow
scheduler: slurm
cfg: {partition: debug}
steps:
  evaluate: {component: utils.sh, args: [cat, model.txt], depends_on: train}
  train: {component: dist.ddp, args: [-j, 2x1, --script, train.py], depends_on: [prepare], cfg: {time: 10}}
  prepare: {component: utils.sh, args: [echo, 1, true]}
)");
  ASSERT_THAT(p, IsOk());
  EXPECT_EQ(p->name, "flow");
  EXPECT_EQ(p->scheduler, "slurm");
  EXPECT_EQ(p->cfg_json, R"({"partition":"debug"})");
  ASSERT_EQ(p->steps.size(), 3u);
  EXPECT_EQ(p->steps[0].name, "prepare");
  EXPECT_THAT(p->steps[0].args, ElementsAre("echo", "1", "true"));  // as the command line spells them
  EXPECT_EQ(p->steps[1].name, "train");
  EXPECT_EQ(p->steps[1].cfg_json, R"({"time":10})");
  EXPECT_EQ(p->steps[2].name, "evaluate");
  EXPECT_THAT(p->steps[2].depends_on, ElementsAre("train"));
}

TEST(ParsePipelineTest, AnInlineAppDef) {
  auto p = ParsePipeline(R"({"steps": {"a": {"app": {"name": "x", "roles": [{"name": "r", "image": "/tmp",
      "entrypoint": "echo", "args": ["hi"]}]}}}})");
  ASSERT_THAT(p, IsOk());
  ASSERT_TRUE(p->steps[0].app.has_value());
  EXPECT_EQ(p->steps[0].app->roles[0].entrypoint, "echo");
}

TEST(ParsePipelineTest, ErrorsNameTheStepAndField) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"steps:\n  a: {component: x, depends_on: [c]}\n  c: {component: x, depends_on: a}\n",
       "steps: dependency cycle a -> c -> a"},
      {"steps:\n  a: {component: x, depends_on: [trian]}\n  train: {component: x}\n",
       "steps.a.depends_on[0]: unknown step `trian`; steps: a, train. Did you mean `train`?"},
      {"steps:\n  a: {component: x, depends_on: a}\n", "steps.a.depends_on[0]: step `a` depends on itself"},
      {"steps:\n  a: {component: x}\n  b: {component: x, depends_on: [a, a]}\n",
       "steps.b.depends_on[1]: `a` is listed twice"},
      {"steps:\n  a: {componen: x}\n", "steps.a: unknown field `componen`; valid fields: component, args, app"},
      {"steps:\n  a: {args: [x]}\n", "steps.a: give exactly one of `component` (with `args`) and `app`"},
      {"steps:\n  a: {component: x, args: echo}\n", "steps.a.args: must be a list"},
      {"steps:\n  a: {component: x, args: [[1]]}\n", "steps.a.args[0]: must be a string, number or boolean"},
      {"steps:\n  a: {component: x, cfg: [1]}\n", "steps.a.cfg: must be a mapping"},
      {"steps:\n  a: {component: x, depends_on: {b: 1}}\n", "steps.a.depends_on: must be a step name or a list"},
      {"steps:\n  'a b': {component: x}\n", "steps.a b: step name `a b` must start with a letter or digit"},
      {"steps: {}\n", "steps: must be a mapping of step names to steps, with at least one step"},
      {"stepz: {}\n", "pipeline: unknown field `stepz`"},
      {"- 1\n", "must be a mapping with `steps`"},
      {"steps:\n  a: {app: {roles: 3}}\n", "steps.a.app"},
  };
  for (const Case& c : cases) {
    auto p = ParsePipeline(c.text, "f.yaml");
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.error().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(p.error().message(), HasSubstr(c.error)) << c.text;
    EXPECT_THAT(p.error().message(), ::testing::StartsWith("f.yaml")) << c.text;
  }
}

TEST(ParsePipelineTest, AMissingFileIsNotFound) {
  EXPECT_THAT(LoadPipelineFile("/nonexistent/p.yaml"),
              StatusIs(StatusCode::kNotFound, HasSubstr("/nonexistent/p.yaml")));
}

// ---- planning ----

// Steps all on one scheduler that sequences natively (slurm, by its capability): the plan says so,
// its dry run shows the dependency the scheduler will be asked for, and a dependency it cannot
// join is refused before anything is submitted, naming the step.
TEST(PlanPipelineTest, AllOnANativeSchedulerIsSequencedByItAndItsDependenciesAreCheckedUpFront) {
  testing::ScopedTempDir tmp;
  testing::ScopedEnv env("TORCHX_STATE_DIR", tmp.path().c_str());
  auto registry = testing::BuiltinRegistry();
  runner::Runner runner(*registry);
  config::TorchxConfig config;
  auto spec = ParsePipeline(R"(
scheduler: slurm
steps:
  prepare: {component: utils.sh, args: [echo, hi]}
  train: {component: utils.sh, args: [echo, train], depends_on: [prepare]}
)");
  ASSERT_THAT(spec, IsOk());
  auto plan = PlanPipeline(runner, config, RunRequest{*spec, "", "", ""});
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->sequenced_by, Sequencer::kScheduler);
  EXPECT_THAT(plan->steps[1].dryrun.request, HasSubstr("--dependency=afterok:<prepare>"));
  EXPECT_EQ(plan->steps[1].cfg.count("dependency"), 0u);  // the launch asks again with the job ids
  EXPECT_THAT(RenderPlan(*plan), HasSubstr("submitted at once to slurm"));

  spec->steps[1].cfg_json = R"({"dependency": "after:1?afterany:2"})";
  EXPECT_THAT(PlanPipeline(runner, config, RunRequest{*spec, "", "", ""}),
              StatusIs(StatusCode::kInvalidArgument, AllOf(HasSubstr("steps.train.cfg"), HasSubstr("'?'"))));

  // A step elsewhere: the driver sequences every step.
  spec->steps[1].cfg_json = "{}";
  spec->steps[1].scheduler = "local_cwd";
  auto mixed = PlanPipeline(runner, config, RunRequest{*spec, "", "", ""});
  ASSERT_THAT(mixed, IsOk());
  EXPECT_EQ(mixed->sequenced_by, Sequencer::kDriver);
  EXPECT_THAT(mixed->steps[1].dryrun.request, Not(HasSubstr("dependency")));
}

// ---- the record store ----

PipelineRecord ThreeSteps(Sequencer by = Sequencer::kDriver) {
  PipelineRecord r;
  r.id = "flow-1";
  r.name = "flow";
  r.session = "torchx";
  r.cwd = "/tmp";
  r.sequenced_by = by;
  const char* app = R"({"name":"s","roles":[{"name":"r","image":"/tmp","entrypoint":"true","num_replicas":2}]})";
  for (auto [name, deps] : {std::pair<const char*, std::vector<std::string>>{"prepare", {}},
                            {"train", {"prepare"}},
                            {"evaluate", {"train"}}}) {
    StepRecord s;
    s.name = name;
    s.depends_on = deps;
    s.scheduler = by == Sequencer::kScheduler ? "slurm" : "local_cwd";
    s.app_json = app;
    s.cfg_json = "{}";
    r.steps.push_back(std::move(s));
  }
  return r;
}

// Records written before `sequenced_by` said `slurm_native`; they still read, and are written
// back in the new form. A record with neither, or with an unknown sequencer, is refused.
TEST(PipelineStoreTest, ReadsRecordsWrittenBeforeSequencedBy) {
  for (Sequencer by : {Sequencer::kDriver, Sequencer::kScheduler}) {
    std::string now = PipelineCodec::ToJson(ThreeSteps(by));
    ASSERT_NE(now.find(std::string("\"sequenced_by\":\"") + std::string(SequencerName(by)) + "\""), std::string::npos);
    nlohmann::ordered_json old = nlohmann::ordered_json::parse(now);
    old.erase("sequenced_by");
    old["slurm_native"] = by == Sequencer::kScheduler;
    auto back = PipelineCodec::FromJson(old.dump());
    ASSERT_THAT(back, IsOk());
    EXPECT_EQ(back->sequenced_by, by);
    EXPECT_EQ(PipelineCodec::ToJson(*back), now);
  }
  nlohmann::json bad = nlohmann::json::parse(PipelineCodec::ToJson(ThreeSteps()));
  bad["sequenced_by"] = "slurm";
  EXPECT_THAT(PipelineCodec::FromJson(bad.dump()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("must be one of [driver, scheduler]")));
  bad.erase("sequenced_by");
  EXPECT_THAT(PipelineCodec::FromJson(bad.dump()), ::testing::Not(IsOk()));
}

TEST(PipelineStoreTest, RoundTripsAndKeepsItPrivate) {
  testing::ScopedTempDir tmp;
  PipelineStore store(tmp.path() + "/pipelines");
  PipelineRecord r = ThreeSteps();
  r.steps.Mut(1).phase = ChildPhase::kSubmitted;
  r.steps.Mut(1).handle = "local_cwd://torchx/x";
  r.steps.Mut(1).state = AppState::kRunning;
  r.final_state = AppState::kFailed;
  ASSERT_THAT(store.Create(r), IsOk());
  EXPECT_THAT(store.Create(r), StatusIs(StatusCode::kAlreadyExists, ::testing::_));
  auto back = store.Get("flow-1");
  ASSERT_THAT(back, IsOk());
  ASSERT_TRUE(back->has_value());
  EXPECT_EQ(PipelineCodec::ToJson(**back), PipelineCodec::ToJson(r));
  struct stat st {};
  ASSERT_EQ(::stat((tmp.path() + "/pipelines").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((tmp.path() + "/pipelines/flow-1.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THAT(store.Get("nope"), IsOkAndHolds(::testing::Eq(std::nullopt)));
  EXPECT_THAT(store.Update("nope", [](PipelineRecord&) { return OkStatus(); }),
              StatusIs(StatusCode::kNotFound, ::testing::_));
  // A failed edit writes nothing.
  EXPECT_THAT(store.Update("flow-1",
                           [](PipelineRecord& cur) {
                             cur.name = "changed";
                             return InvalidArgumentError("no");
                           }),
              StatusIs(StatusCode::kInvalidArgument, ::testing::_));
  EXPECT_EQ((*store.Get("flow-1"))->name, "flow");
  ASSERT_THAT(store.Remove("flow-1"), IsOk());
  EXPECT_THAT(store.List(), IsOkAndHolds(::testing::IsEmpty()));
}

TEST(PipelineStoreTest, ADamagedRecordIsAnErrorNotACrash) {
  testing::ScopedTempDir tmp;
  tmp.Write("pipelines/bad.json", "{\"id\": 3");
  PipelineStore store(tmp.path() + "/pipelines");
  EXPECT_THAT(store.Get("bad"), StatusIs(StatusCode::kInternal, HasSubstr("bad.json")));
  EXPECT_THAT(store.List(), IsOkAndHolds(::testing::IsEmpty()));
}

// ---- the rules, over a fake backend ----

class FakeSteps : public composite::FakeChildren<StepBackend> {
 public:
  FakeSteps() : FakeChildren("torchx") { failed_msg = "r/0 exited with code 3"; }
  Result<StepDryRun> Plan(const StepRecord& step, const std::vector<std::string>& after) override {
    StepDryRun p;
    p.info.scheduler = "fake";
    p.info.app_id = step.name;
    p.info.app_id_is_final = true;
    p.planned = {HandleOf(step.name), true};
    afters[step.name] = after;
    return p;
  }
  std::map<std::string, std::vector<std::string>> afters;
};

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_THAT(store_.Create(ThreeSteps()), IsOk()); }
  PipelineRecord Advanced() {
    auto r = Advance(store_, "flow-1", steps_);
    EXPECT_THAT(r, IsOk());
    return r ? *r : PipelineRecord{};
  }
  testing::ScopedTempDir tmp_;
  PipelineStore store_{tmp_.path() + "/pipelines"};
  FakeSteps steps_;
};

TEST_F(EngineTest, EachStepStartsWhenItsDependenciesSucceed) {
  PipelineRecord r = Advanced();
  EXPECT_THAT(steps_.submitted, ElementsAre("prepare"));
  EXPECT_EQ(LiveState(r), AppState::kPending);  // submitted, not yet seen running
  r = Advanced();                               // nothing ended: nothing more submitted
  EXPECT_THAT(steps_.submitted, ElementsAre("prepare"));
  EXPECT_EQ(LiveState(r), AppState::kRunning);
  steps_.states["fake://torchx/prepare"] = AppState::kSucceeded;
  Advanced();
  EXPECT_THAT(steps_.submitted, ElementsAre("prepare", "train"));
  EXPECT_TRUE(steps_.afters["train"].empty());  // the driver waits, not the scheduler
  steps_.states["fake://torchx/train"] = AppState::kSucceeded;
  Advanced();
  steps_.states["fake://torchx/evaluate"] = AppState::kSucceeded;
  r = Advanced();
  EXPECT_THAT(steps_.submitted, ElementsAre("prepare", "train", "evaluate"));
  EXPECT_EQ(r.final_state, AppState::kSucceeded);
  auto d = DescribePipeline(r, steps_);
  EXPECT_EQ(d.state, AppState::kSucceeded);
  ASSERT_EQ(d.roles_statuses.size(), 3u);
  EXPECT_EQ(d.roles_statuses[1].role, "train");
  EXPECT_EQ(d.roles_statuses[1].replicas.size(), 2u);  // from the AppDef: the fake reports no roles
  EXPECT_THAT(d.msg, HasSubstr("train SUCCEEDED fake://torchx/train"));
}

TEST_F(EngineTest, AFailedStepLeavesItsDependentsNotRunAndThePipelineFailed) {
  Advanced();
  steps_.states["fake://torchx/prepare"] = AppState::kSucceeded;
  Advanced();
  steps_.states["fake://torchx/train"] = AppState::kFailed;
  PipelineRecord r = Advanced();
  EXPECT_THAT(steps_.submitted, ElementsAre("prepare", "train"));
  EXPECT_EQ(r.final_state, AppState::kFailed);
  EXPECT_EQ(r.Step("evaluate")->phase, ChildPhase::kSkipped);
  EXPECT_EQ(r.Step("evaluate")->msg, "not run: step `train` FAILED");
  EXPECT_EQ(r.Step("train")->msg, "r/0 exited with code 3");
  EXPECT_EQ(r.msg, "step train did not succeed");
}

TEST_F(EngineTest, StepsAreTimedAndDescribedAsMembersWithTheirDependencies) {
  Advanced();
  steps_.states["fake://torchx/prepare"] = AppState::kSucceeded;
  Advanced();
  steps_.states["fake://torchx/train"] = AppState::kFailed;
  PipelineRecord r = Advanced();
  const StepRecord& prepare = *r.Step("prepare");
  ASSERT_TRUE(prepare.submitted && prepare.ended);
  EXPECT_LE(*prepare.submitted, *prepare.ended);
  EXPECT_LE(*prepare.ended, *r.Step("train")->submitted);
  EXPECT_FALSE(r.Step("evaluate")->submitted || r.Step("evaluate")->ended);  // never ran
  // The times survive the record's round trip (and a record without them reads as untimed).
  auto back = PipelineCodec::FromJson(PipelineCodec::ToJson(r));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->Step("prepare")->ended, prepare.ended);
  schedulers::DescribeAppResponse d = DescribePipeline(r, steps_);
  ASSERT_EQ(d.members.size(), 3u);
  EXPECT_EQ(d.members[1].name, "train");
  EXPECT_EQ(d.members[1].app_handle, "fake://torchx/train");
  EXPECT_EQ(d.members[1].state, AppState::kFailed);
  EXPECT_THAT(d.members[1].depends_on, ElementsAre("prepare"));
  ASSERT_TRUE(d.members[1].app.has_value());
  EXPECT_EQ(d.members[2].msg, "not run: step `train` FAILED");
  EXPECT_EQ(d.members[2].app_handle, "");
}

TEST_F(EngineTest, CancelCascadesAndIsIdempotent) {
  Advanced();
  steps_.states["fake://torchx/prepare"] = AppState::kSucceeded;
  Advanced();  // train runs
  ASSERT_THAT(CancelPipeline(store_, "flow-1", steps_), IsOk());
  EXPECT_THAT(steps_.cancelled, ElementsAre("fake://torchx/train"));
  PipelineRecord r = Advanced();
  EXPECT_THAT(steps_.submitted, ElementsAre("prepare", "train"));  // nothing submitted after cancel
  EXPECT_EQ(r.final_state, AppState::kCancelled);
  EXPECT_EQ(r.Step("evaluate")->msg, "not run: the pipeline was cancelled");
  ASSERT_THAT(CancelPipeline(store_, "flow-1", steps_), IsOk());
  EXPECT_EQ(steps_.cancelled.size(), 1u);
}

TEST_F(EngineTest, ASubmissionThatFailsFailsTheStep) {
  steps_.refuse = {"prepare"};
  PipelineRecord r = Advanced();
  EXPECT_EQ(r.final_state, AppState::kFailed);
  EXPECT_THAT(r.Step("prepare")->msg, HasSubstr("submission failed: engine down"));
  EXPECT_EQ(r.Step("train")->phase, ChildPhase::kSkipped);
  EXPECT_EQ(r.Step("evaluate")->msg, "not run: step `train` did not run");
}

TEST_F(EngineTest, AStepItsSchedulerForgotFails) {
  Advanced();
  steps_.states.clear();
  PipelineRecord r = Advanced();
  EXPECT_EQ(r.Step("prepare")->state, AppState::kFailed);
  EXPECT_THAT(r.Step("prepare")->msg, HasSubstr("no longer exists"));
}

TEST_F(EngineTest, LogsOfAStepByItsRoleName) {
  PipelineRecord r = Advanced();
  auto found = FindStepRole(r, "train");
  ASSERT_THAT(found, IsOk());
  EXPECT_EQ(found->step->name, "train");
  EXPECT_EQ(found->role, "r");
  EXPECT_THAT(FindStepRole(r, "trian"), StatusIs(StatusCode::kNotFound, HasSubstr("roles: prepare, train, evaluate")));
}

TEST(SequencedBySchedulerTest, StepsItCancelledForAFailedDependencyAreNotRun) {
  testing::ScopedTempDir tmp;
  PipelineStore store(tmp.path() + "/pipelines");
  PipelineRecord rec = ThreeSteps(Sequencer::kScheduler);
  for (size_t i = 0; i < rec.steps.size(); ++i) {
    StepRecord& s = rec.steps.Mut(i);
    s.phase = ChildPhase::kSubmitted;
    s.handle = "fake://torchx/" + s.name;
  }
  ASSERT_THAT(store.Create(rec), IsOk());
  FakeSteps steps;
  steps.states = {{"fake://torchx/prepare", AppState::kSucceeded},
                  {"fake://torchx/train", AppState::kFailed},
                  {"fake://torchx/evaluate", AppState::kCancelled}};
  auto r = Refresh(store, "flow-1", steps);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->final_state, AppState::kFailed);
  EXPECT_EQ(r->Step("evaluate")->phase, ChildPhase::kSkipped);
  EXPECT_EQ(r->Step("evaluate")->msg, "not run: step `train` FAILED");
  EXPECT_TRUE(steps.submitted.empty());  // Refresh never submits
}

// A driver killed between claiming steps and recording their handles: the next one adopts the
// step its scheduler has, claims again the one it never had, and fails the one it cannot tell.
TEST_F(EngineTest, StepsClaimedByADeadDriverAreAdoptedClaimedAgainOrFailed) {
  ASSERT_THAT(store_
                  .Update("flow-1",
                          [](PipelineRecord& r) {
                            for (size_t i = 0; i < r.steps.size(); ++i) r.steps.Mut(i).phase = ChildPhase::kSubmitting;
                            r.steps.Mut(0).planned = {"fake://torchx/prepare", true};    // it was submitted
                            r.steps.Mut(1).planned = {"fake://torchx/train", true};      // it was not
                            r.steps.Mut(2).planned = {"fake://torchx/evaluate", false};  // the id is a proposal
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  steps_.states["fake://torchx/prepare"] = AppState::kRunning;
  ASSERT_THAT(ResolveClaims(store_, "flow-1", steps_, [](const StepRecord& s) { return "cannot tell: " + s.name; }),
              IsOk());
  auto r = store_.Get("flow-1");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ((*r)->Step("prepare")->phase, ChildPhase::kSubmitted);
  EXPECT_EQ((*r)->Step("prepare")->handle, "fake://torchx/prepare");
  EXPECT_EQ((*r)->Step("train")->phase, ChildPhase::kWaiting);
  EXPECT_EQ((*r)->Step("evaluate")->state, AppState::kFailed);
  EXPECT_EQ((*r)->Step("evaluate")->msg, "cannot tell: evaluate");
  EXPECT_TRUE(steps_.submitted.empty());  // nothing submitted twice
}

// Through the scheduler a composition root registers: what status says of a pipeline its
// scheduler sequences whose launcher died mid-launch (no process holds its lock).
TEST(PipelineSchedulerTest, ANativeLaunchThatDiedLeavesNothingWaitingForever) {
  testing::ScopedTempDir tmp;
  testing::ScopedEnv env("TORCHX_STATE_DIR", tmp.path().c_str());
  PipelineStore store(tmp.path() + "/pipelines");
  PipelineRecord rec = ThreeSteps(Sequencer::kScheduler);
  rec.steps.Mut(0).phase = ChildPhase::kSubmitting;  // claimed; the launcher died before recording it
  ASSERT_THAT(store.Create(rec), IsOk());
  auto registry = testing::BuiltinRegistry();
  RegisterPipelineScheduler(*registry);
  runner::Runner runner(*registry);
  auto status = runner.Status("pipeline://torchx/flow-1");
  ASSERT_THAT(status, IsOk());
  ASSERT_TRUE(status->has_value());
  EXPECT_EQ((*status)->state, AppState::kFailed);
  EXPECT_THAT((*status)->msg, HasSubstr("prepare FAILED: the launch stopped while submitting this step; check "
                                        "`torchx list -s slurm`"));
  EXPECT_THAT((*status)->msg, HasSubstr("train not run: step `prepare` FAILED"));
  // A step scheduler's own verbs are refused with the way to run a pipeline.
  EXPECT_THAT(runner.RunComponent("utils.echo", {}, "pipeline"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("torchx pipeline run")));
}

}  // namespace
}  // namespace torchx::pipelines
