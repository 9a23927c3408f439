// Sweeps without a scheduler: the space (grid order, seeded draws), placeholders, sweep files and
// their errors, the reports trials leave, the record, and the rules that move a sweep (over a fake
// TrialBackend: max_parallel, max_failures, cancel, a driver that died mid-submit). Real runs:
// tests/integration/sweeps.
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "composite/fake_children.h"
#include "sweeps/engine.h"
#include "sweeps/metrics.h"
#include "sweeps/sweep_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "torchx/sweeps/sweep.h"

namespace torchx::sweeps {
namespace {

using specs::AppState;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Texts(const Assignment& a) {
  std::vector<std::string> out;
  for (const auto& [k, v] : a) out.push_back(k + "=" + ValueText(v));
  return out;
}

// ---- the space ----

TEST(SpaceTest, GridIsTheProductWithTheFirstParameterSlowest) {
  auto spec = ParseSweep(R"(
component: utils.sh
args: [echo, "@{lr}", "@{bs}"]
space:
  parameters:
    lr: [0.1, 0.01]
    bs: {range: [16, 64, 16]}
)");
  ASSERT_THAT(spec, IsOk());
  EXPECT_EQ(TrialCount(spec->space), 6u);
  auto trials = Trials(spec->space);
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_THAT(Texts(trials[0]), ElementsAre("lr=0.1", "bs=16"));
  EXPECT_THAT(Texts(trials[1]), ElementsAre("lr=0.1", "bs=32"));
  EXPECT_THAT(Texts(trials[2]), ElementsAre("lr=0.1", "bs=48"));
  EXPECT_THAT(Texts(trials[3]), ElementsAre("lr=0.01", "bs=16"));
  EXPECT_THAT(Texts(trials[5]), ElementsAre("lr=0.01", "bs=48"));
}

TEST(SpaceTest, LinspaceAndLogspaceIncludeBothEnds) {
  auto spec = ParseSweep(R"(
app: {name: x, roles: [{name: r, image: /tmp, entrypoint: echo, args: ["@{a}", "@{b}"]}]}
space: {parameters: {a: {linspace: [0, 1, 5]}, b: {logspace: [0.001, 1, 4]}}}
)");
  ASSERT_THAT(spec, IsOk());
  ASSERT_EQ(spec->space.params[0].values.size(), 5u);
  EXPECT_EQ(spec->space.params[0].values[2].as_double(), 0.5);
  EXPECT_EQ(spec->space.params[0].values[4].as_double(), 1.0);
  EXPECT_NEAR(spec->space.params[1].values[1].as_double(), 0.01, 1e-12);
  EXPECT_NEAR(spec->space.params[1].values[3].as_double(), 1.0, 1e-12);
}

Space RandomSpace(std::uint64_t seed) {
  Space s;
  s.type = SpaceType::kRandom;
  s.seed = seed;
  s.trials = 50;
  s.params = {{"lr", ParamSpec::Kind::kLogUniform, {}, 1e-4, 1e-1},
              {"layers", ParamSpec::Kind::kRandInt, {}, 1, 4},
              {"drop", ParamSpec::Kind::kUniform, {}, 0.0, 0.5},
              {"opt", ParamSpec::Kind::kValues, {Value("sgd"), Value("adam")}, 0, 0}};
  return s;
}

TEST(SpaceTest, RandomDrawsAreTheSeedsAndStayInTheirBounds) {
  auto a = Trials(RandomSpace(7));
  auto b = Trials(RandomSpace(7));
  auto c = Trials(RandomSpace(8));
  ASSERT_EQ(a.size(), 50u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<std::int64_t> layers;
  std::set<std::string> opts;
  for (const Assignment& t : a) {
    EXPECT_GE(t[0].second.as_double(), 1e-4);
    EXPECT_LT(t[0].second.as_double(), 1e-1);
    layers.insert(t[1].second.as_int());
    EXPECT_GE(t[2].second.as_double(), 0.0);
    EXPECT_LT(t[2].second.as_double(), 0.5);
    opts.insert(t[3].second.as_string());
  }
  EXPECT_EQ(layers, (std::set<std::int64_t>{1, 2, 3, 4}));  // both bounds included
  EXPECT_EQ(opts.size(), 2u);
}

TEST(SpaceTest, TheGeneratorIsSplitMix64AsDocumented) {
  // SplitMix64 seeded with 0 first gives 0xE220A8397B1DCDAF; a uniform draw is its top 53 bits
  // over 2^53 (docs/sweeps.md), so anyone can reproduce a sweep's trials from its seed.
  Space s;
  s.type = SpaceType::kRandom;
  s.seed = 0;
  s.trials = 1;
  s.params = {{"u", ParamSpec::Kind::kUniform, {}, 0.0, 1.0}};
  double expected = static_cast<double>(0xE220A8397B1DCDAFULL >> 11) * 0x1.0p-53;
  EXPECT_EQ(Trials(s)[0][0].second.as_double(), expected);
}

TEST(SpaceTest, ValuesAsACommandLineSpellsThem) {
  EXPECT_EQ(ValueText(Value(0.1)), "0.1");
  EXPECT_EQ(ValueText(Value(1e-05)), "1e-05");
  EXPECT_EQ(ValueText(Value(std::int64_t{32})), "32");
  EXPECT_EQ(ValueText(Value(true)), "true");
  EXPECT_EQ(ValueText(Value("adam")), "adam");
}

TEST(PlaceholderTest, NamesEscapesAndErrors) {
  EXPECT_THAT(Placeholders("--lr=@{lr} --x @{bs}", "args[0]"), IsOkAndHolds(ElementsAre("lr", "bs")));
  EXPECT_THAT(Placeholders("@@{lr} ${macro}", "args[0]"), IsOkAndHolds(ElementsAre()));
  EXPECT_THAT(Placeholders("@{lr", "args[2]"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("args[2]")));
  EXPECT_THAT(Placeholders("@{a-b}", "args[0]"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("@@{")));
  Assignment values = {{"lr", Value(0.1)}, {"bs", Value(std::int64_t{16})}};
  EXPECT_EQ(Substitute("--lr=@{lr} bs@{bs} @@{lr} ${img_root}", values), "--lr=0.1 bs16 @{lr} ${img_root}");
}

// ---- sweep files ----

TEST(ParseSweepTest, EveryField) {
  auto s = ParseSweep(R"(
name: lr-sweep
component: dist.ddp
args: [-j, 1x2, --script, train.py, --, --lr, "@{lr}"]
scheduler: slurm
cfg: {partition: debug}
max_parallel: 3
max_failures: 2
objective: {metric: loss, direction: minimize, reduce: best}
space:
  type: random
  seed: 4
  trials: 12
  parameters:
    lr: {distribution: loguniform, low: 1.0e-4, high: 0.1}
    opt: [sgd, adam]
)");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->name, "lr-sweep");
  EXPECT_EQ(s->cfg_json, R"({"partition":"debug"})");
  EXPECT_EQ(s->max_parallel, 3);
  EXPECT_EQ(s->max_failures, 2);
  ASSERT_TRUE(s->objective);
  EXPECT_TRUE(s->objective->minimize);
  EXPECT_TRUE(s->objective->best);
  EXPECT_EQ(s->space.type, SpaceType::kRandom);
  EXPECT_EQ(s->space.seed, 4u);
  EXPECT_EQ(s->space.params[0].kind, ParamSpec::Kind::kLogUniform);
  EXPECT_EQ(s->space.params[1].values.size(), 2u);
}

TEST(ParseSweepTest, ErrorsNameTheFieldAndTheChoices) {
  struct Case {
    const char* text;
    const char* want;
  };
  const Case cases[] = {
      {"component: x\nspace: {parameters: {a: [1]}}\nmax_paralel: 2", "unknown field `max_paralel`"},
      {"component: x\nspace: {parameters: {a: [1]}}\nmax_paralel: 2", "Did you mean `max_parallel`?"},
      {"component: x\nspace: {type: bayes, parameters: {a: [1]}}",
       "space.type: invalid value `bayes`, must be one of [grid, random, ax]"},
      {"component: x\nspace: {type: random, parameters: {a: [1]}}", "space.trials: required"},
      {"component: x\nspace: {parameters: {a: []}}", "space.parameters.a: must be a non-empty list"},
      {"component: x\nspace: {parameters: {a: [[1]]}}", "space.parameters.a[0]: a value must be a string"},
      {"component: x\nspace: {type: random, trials: 2, parameters: {a: {distribution: normal, low: 0, high: 1}}}",
       "space.parameters.a.distribution: invalid value `normal`, must be one of [uniform, loguniform, randint, "
       "choice]"},
      {"component: x\nspace: {type: random, trials: 2, parameters: {a: {distribution: loguniform, low: 0, high: 1}}}",
       "needs low > 0"},
      {"component: x\nspace: {type: random, trials: 2, parameters: {a: {distribution: uniform, low: 2, high: 1}}}",
       "low (2) must be below high (1)"},
      {"component: x\nspace: {parameters: {a: {range: [5, 1]}}}", "space.parameters.a.range: the range is empty"},
      {"component: x\nspace: {parameters: {1a: [1]}}", "parameter name `1a`"},
      {"component: x\nspace: {parameters: {a: [1]}}\nobjective: {metric: loss, direction: up}",
       "objective.direction: invalid value `up`, must be one of [minimize, maximize]"},
      {"component: x\nspace: {parameters: {a: [1]}}\nmax_parallel: 0", "max_parallel: must be an integer from 1"},
      {"space: {parameters: {a: [1]}}", "give exactly one of `component`"},
      {"component: x", "space: required"},
      {"component: x\nspace: {type: ax, trials: 5, parameters: {a: {low: 0, high: 1}}}",
       "objective: required for an ax search"},
      {"component: x\nobjective: y\nspace: {type: ax, trials: 5, parameters: {a: {low: 0, high: 1, type: bool}}}",
       "space.parameters.a.type: invalid value `bool`, must be one of [float, int]"},
      {"component: x\nobjective: y\nspace: {type: ax, parameters: {a: {low: 0, high: 1}}}",
       "space.trials: required for an ax search"},
      {"component: x\nspace: {parameters: {a: {range: [0, 1000]}, b: {range: [0, 1000]}}}",
       "1000000 trials; a sweep runs at most"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(ParseSweep(c.text, "s.yaml"), StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.want))) << c.text;
  }
}

TEST(ParseSweepTest, AxRangesAndChoices) {
  auto s = ParseSweep(R"(
component: utils.sh
objective: {metric: booth, direction: minimize}
space:
  type: ax
  seed: 3
  trials: 15
  parameters:
    x1: {low: -10.0, high: 10.0}
    n: {low: 1, high: 8}
    lr: {low: 1.0e-4, high: 0.1, log_scale: true}
    opt: [sgd, adam]
)");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(s->space.type, SpaceType::kAx);
  EXPECT_EQ(TrialCount(s->space), 15u);
  EXPECT_TRUE(Trials(s->space).empty());  // Ax proposes them as the sweep runs
  EXPECT_EQ(s->space.params[0].kind, ParamSpec::Kind::kUniform);
  EXPECT_EQ(s->space.params[1].kind, ParamSpec::Kind::kRandInt);  // integer bounds: an integer range
  EXPECT_EQ(s->space.params[2].kind, ParamSpec::Kind::kLogUniform);
  EXPECT_EQ(s->space.params[3].kind, ParamSpec::Kind::kValues);
}

TEST(ParseSweepTest, InlineParameters) {
  auto grid = ParseInlineParam("lr=0.1,0.01, 1e-3");
  ASSERT_THAT(grid, IsOk());
  EXPECT_EQ(grid->kind, ParamSpec::Kind::kValues);
  ASSERT_EQ(grid->values.size(), 3u);
  EXPECT_EQ(grid->values[2].as_double(), 1e-3);
  auto word = ParseInlineParam("opt=sgd,adam");
  ASSERT_THAT(word, IsOk());
  EXPECT_EQ(word->values[1].as_string(), "adam");
  auto dist = ParseInlineParam("lr=loguniform(1e-4,1e-1)");
  ASSERT_THAT(dist, IsOk());
  EXPECT_EQ(dist->kind, ParamSpec::Kind::kLogUniform);
  EXPECT_EQ(dist->high, 0.1);
  auto choice = ParseInlineParam("opt=choice(sgd,adam)");
  ASSERT_THAT(choice, IsOk());
  EXPECT_EQ(choice->values.size(), 2u);
  EXPECT_THAT(ParseInlineParam("lr"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("name=v1,v2")));
  EXPECT_THAT(ParseInlineParam("lr=gauss(0,1)"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("must be one of")));
  EXPECT_THAT(ParseInlineParam("lr=uniform(1)"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("two bounds")));
}

// Values no trial could draw exactly, or at all, are refused naming the parameter: a randint wider
// than 2^53 (or past int64: every draw was INT64_MIN), a uniform whose width overflows to inf,
// NaN and infinite bounds.
TEST(ParseSweepTest, ImpossibleDistributionsAreRefused) {
  auto refused = [](const char* text, const char* says) {
    EXPECT_THAT(ParseInlineParam(text),
                StatusIs(StatusCode::kInvalidArgument, AllOf(HasSubstr("-p "), HasSubstr(says))))
        << text;
  };
  refused("x=randint(0,9223372036854775806)", "wider than 2^53");
  refused("x=randint(-9007199254740993,0)", "wider than 2^53");
  refused("x=randint(0,9007199254740992)", "wider than 2^53");  // 2^53 + 1 values
  refused("x=uniform(-1.79e308,1.79e308)", "not a finite number");
  refused("x=loguniform(1e-300,inf)", "must be a number");
  refused("x=uniform(.nan,1)", "must be a number");
  EXPECT_THAT(ParseInlineParam("x=randint(0,9007199254740991)"), IsOk());  // exactly 2^53 values
  EXPECT_THAT(ParseInlineParam("x=uniform(-1e300,1e300)"), IsOk());
  // NaN and infinities written out (YAML's .nan, .inf; 1e999) are not numbers here: refused too.
  refused("x=uniform(0,1e999)", "must be a number");
  for (const char* bounds : {"low: .nan, high: 1", "low: 0, high: .inf", "low: -.inf, high: 0"}) {
    auto s = ParseSweep(fmt::format(R"(
component: utils.echo
space:
  type: random
  trials: 2
  parameters:
    x: {{distribution: uniform, {}}}
)",
                                    bounds));
    EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument,
                            AllOf(HasSubstr("space.parameters.x"), HasSubstr("must be a number"))))
        << bounds;
  }
}

// ---- reports ----

TEST(MetricsTest, Base32IsPythons) {
  EXPECT_EQ(Base32("local_cwd://torchx/demo-0-x"), "NRXWGYLML5RXOZB2F4XXI33SMNUHQL3EMVWW6LJQFV4A====");
  EXPECT_EQ(Base32(""), "");
  EXPECT_EQ(Base32("f"), "MY======");
}

TEST(MetricsTest, ReportsFromEitherTracker) {
  EXPECT_THAT(ParseReport(R"({"metadata": {"loss": 0.5, "step": 3, "tag": "x", "ok": true}})"),
              ::testing::Optional(
                  ElementsAre(std::pair<std::string, double>("loss", 0.5), std::pair<std::string, double>("step", 3))));
  EXPECT_THAT(ParseReport(R"({"loss": 0.25})"),
              ::testing::Optional(ElementsAre(std::pair<std::string, double>("loss", 0.25))));
  EXPECT_EQ(ParseReport("{\"loss\": 0."), std::nullopt);  // a write in progress
  EXPECT_EQ(ParseReport("[1, 2]"), std::nullopt);
}

TEST(MetricsTest, LastOrBest) {
  std::vector<Report> reports = {{{"loss", 0.9}, {"acc", 0.1}}, {{"loss", 0.2}}, {{"loss", 0.4}, {"acc", 0.7}}};
  Summary last = Summarize(reports, Objective{"loss", true, false});
  EXPECT_EQ(last.objective, 0.4);
  EXPECT_THAT(last.metrics,
              ElementsAre(std::pair<std::string, double>("loss", 0.4), std::pair<std::string, double>("acc", 0.7)));
  EXPECT_EQ(Summarize(reports, Objective{"loss", true, true}).objective, 0.2);
  EXPECT_EQ(Summarize(reports, Objective{"acc", false, true}).objective, 0.7);
  EXPECT_EQ(Summarize(reports, Objective{"f1", true, false}).objective, std::nullopt);
}

TEST(MetricsTest, ADivergedReportIsNotRanked) {
  auto nan = ParseReport(R"({"metadata": {"loss": NaN, "step": 2, "tag": "Infinity"}})");
  ASSERT_TRUE(nan.has_value());
  ASSERT_EQ(nan->size(), 2u);  // the other keys still read; a string is not a metric
  EXPECT_TRUE(std::isnan((*nan)[0].second));
  std::vector<Report> reports = {{{"loss", 0.5}}, *nan};
  Summary last = Summarize(reports, Objective{"loss", true, false});
  EXPECT_EQ(last.objective, std::nullopt);
  EXPECT_THAT(last.metrics, ElementsAre(std::pair<std::string, double>("step", 2)));
  EXPECT_EQ(Summarize(reports, Objective{"loss", true, true}).objective, 0.5);
  EXPECT_EQ(ParseReport(R"({"loss": -Infinity})")->size(), 1u);
}

TEST(MetricsTest, ReadsTheTrackersFilesInOrder) {
  testing::ScopedTempDir dir;
  std::string run = Base32("local_cwd://torchx/t-0");
  dir.Write(run + "/metadata/999", R"({"metadata": {"loss": 3}})");
  dir.Write(run + "/metadata/1000", R"({"metadata": {"loss": 2}})");
  dir.Write("0", R"({"loss": 1})");
  auto reports = ReadReports(dir.path(), "local_cwd://torchx/t-0", "0");
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0][0].second, 3);
  EXPECT_EQ(reports[1][0].second, 2);
  EXPECT_EQ(reports[2][0].second, 1);
  EXPECT_TRUE(ReadReports(dir.path(), "other", "1").empty());
}

// ---- the engine ----

class FakeTrials : public composite::FakeChildren<TrialBackend> {
 public:
  FakeTrials() : FakeChildren("s") {}
  Result<TrialDryRun> Plan(const SweepRecord&, const TrialRecord& t) override {
    TrialDryRun p;
    p.info.scheduler = "fake";
    p.info.app_id = "t" + std::to_string(t.index);
    p.info.app_id_is_final = true;
    p.planned = {HandleOf(p.info.app_id), true};
    return p;
  }
  /// The trials submitted, by index, in order.
  std::vector<int> Indexes() const {
    std::vector<int> out;
    for (const std::string& id : submitted) out.push_back(std::stoi(id.substr(1)));
    return out;
  }
  std::vector<Report> Reports(const SweepRecord&, const TrialRecord& t) override {
    auto it = reports.find(t.index);
    return it == reports.end() ? std::vector<Report>{} : it->second;
  }
  Result<std::vector<Proposal>> Propose(const SweepRecord& r, int count) override {
    ++proposals_asked;
    if (!propose_error.empty()) return FailedPreconditionError(propose_error);
    std::vector<Proposal> out;
    for (const TrialRecord& t : r.trials) {
      if (static_cast<int>(out.size()) >= std::min(count, propose_at_most) || !t.values.empty()) continue;
      out.push_back({t.index, {{"x", Value(0.5 * t.index)}}, t.index < 2 ? "Sobol" : "MBM"});
    }
    return out;
  }
  int Running() const {
    int n = 0;
    for (const auto& [_, s] : states) n += s == AppState::kRunning;
    return n;
  }

  std::map<int, std::vector<Report>> reports;
  int propose_at_most = 100;
  int proposals_asked = 0;
  std::string propose_error;
};

class EngineTest : public ::testing::Test {
 protected:
  void Make(int trials, int max_parallel, int max_failures = 0, bool ax = false) {
    SweepRecord r;
    if (ax) r.space.type = SpaceType::kAx;
    r.id = "sw";
    r.name = "sw";
    r.session = "s";
    r.scheduler = "fake";
    r.max_parallel = max_parallel;
    r.max_failures = max_failures;
    r.objective = Objective{objective_, true, false};
    for (int i = 0; i < trials; ++i) {
      TrialRecord t;
      t.index = i;
      if (!ax) t.values = {{"x", Value(std::int64_t{i})}};
      r.trials.push_back(t);
    }
    ASSERT_THAT(store_.Create(r), IsOk());
  }
  SweepRecord Get() { return *store_.Get("sw").value(); }
  void End(int index, AppState s, double loss) {
    fake_.states["fake://s/t" + std::to_string(index)] = s;
    fake_.reports[index] = {{{"loss", loss}}};
  }

  testing::ScopedTempDir dir_;
  SweepStore store_{dir_.path() + "/sweeps"};
  FakeTrials fake_;
  std::string objective_ = "loss";
};

TEST_F(EngineTest, AtMostMaxParallelRunAndTheBestIsFound) {
  Make(5, 2);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  EXPECT_THAT(fake_.Indexes(), ElementsAre(0, 1));
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  EXPECT_EQ(fake_.submitted.size(), 2u);  // both slots taken
  End(0, AppState::kSucceeded, 0.5);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  EXPECT_THAT(fake_.Indexes(), ElementsAre(0, 1, 2));
  EXPECT_EQ(fake_.Running(), 2);
  End(1, AppState::kSucceeded, 0.1);
  End(2, AppState::kSucceeded, 0.3);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  End(3, AppState::kSucceeded, 0.7);
  End(4, AppState::kSucceeded, 0.2);
  auto r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->final_state, AppState::kSucceeded);
  EXPECT_EQ(r->trials[1].objective, 0.1);
  EXPECT_EQ(BestTrial(*r)->index, 1);
  EXPECT_THAT(r->msg, HasSubstr("best trial 1 (x=1): loss=0.1"));
  for (const TrialRecord& t : r->trials) {
    EXPECT_TRUE(t.submitted && t.ended) << t.index;
  }
}

TEST_F(EngineTest, MaxFailuresStopsSubmittingAndTheRunningOnesFinish) {
  Make(6, 2, 2);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  End(0, AppState::kFailed, 1);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());  // trial 2 replaces 0
  End(2, AppState::kFailed, 1);
  auto r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(fake_.Indexes(), ElementsAre(0, 1, 2));
  EXPECT_FALSE(r->final_state);  // trial 1 still runs
  EXPECT_EQ(r->trials[3].phase, ChildPhase::kSkipped);
  EXPECT_THAT(r->trials[5].msg, HasSubstr("stopped after 2 failed trials (max_failures 2)"));
  End(1, AppState::kSucceeded, 0.3);
  r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->final_state, AppState::kFailed);
  EXPECT_THAT(r->msg, HasSubstr("2 of 6 trials failed (0, 2); stopped early (max_failures 2)"));
  EXPECT_THAT(r->msg, HasSubstr("best trial 1"));
}

TEST_F(EngineTest, StoppingEarlyCancelsTrialsStillQueuedOnTheScheduler) {
  Make(4, 0, 1);  // an array: every trial submitted at once, the scheduler runs them in turn
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  fake_.states["fake://s/t2"] = AppState::kPending;
  fake_.states["fake://s/t3"] = AppState::kPending;
  End(0, AppState::kFailed, 1);
  auto r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(fake_.cancelled, ElementsAre("fake://s/t2", "fake://s/t3"));
  EXPECT_EQ(r->trials[1].phase, ChildPhase::kSubmitted);  // running: it finishes
  EXPECT_EQ(r->trials[2].phase, ChildPhase::kSkipped);
  EXPECT_THAT(r->trials[3].msg, HasSubstr("not run: the sweep stopped after 1 failed trials (max_failures 1)"));
  End(1, AppState::kSucceeded, 0.5);
  r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->final_state, AppState::kFailed);
}

TEST_F(EngineTest, OnlyTheFirstQueuedTrialsAreAskedAboutEachTurn) {
  Make(40, 0);  // an array of 40: all submitted, the scheduler runs them in order
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  for (int i = 0; i < 40; ++i) fake_.states["fake://s/t" + std::to_string(i)] = AppState::kPending;
  ASSERT_THAT(Refresh(store_, "sw", fake_), IsOk());  // records them PENDING (the first 16)
  for (int i = 0; i < 40; ++i) End(i, AppState::kSucceeded, 1.0 * i);
  auto r = Refresh(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->trials[15].state, AppState::kSucceeded);
  EXPECT_EQ(r->trials[39].state, AppState::kSubmitted);  // not asked yet: SUBMITTED counts as queued
  for (int turn = 0; turn < 3 && !r->final_state; ++turn) r = Refresh(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->final_state, AppState::kSucceeded);
}

// A typo'd objective is said from the first report on, with the metric meant; a sweep that ends
// without any trial reporting it has no result, so it fails, saying why.
TEST_F(EngineTest, AnObjectiveNoTrialReportsIsNamedWithTheMetricMeantAndFailsTheSweep) {
  objective_ = "los";
  Make(2, 0);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  EXPECT_EQ(UnreportedObjective(Get(), false), std::nullopt);  // nothing reported yet
  fake_.reports[0] = {{{"loss", 0.5}, {"step", 1.0}}};
  ASSERT_THAT(Refresh(store_, "sw", fake_), IsOk());
  EXPECT_EQ(UnreportedObjective(Get(), false), "objective `los` not reported; did you mean `loss`?");
  End(0, AppState::kSucceeded, 0.4);
  End(1, AppState::kSucceeded, 0.3);
  auto r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->final_state, AppState::kFailed);
  EXPECT_EQ(r->msg, "objective `los` not reported; did you mean `loss`?");
}

TEST(UnreportedObjectiveTest, NamesWhatTheTrialsReportOrThatTheyReportedNothing) {
  SweepRecord r;
  r.trials.push_back(TrialRecord{});
  r.trials.push_back(TrialRecord{});
  EXPECT_EQ(UnreportedObjective(r, true), std::nullopt);  // no objective: nothing to report
  r.objective = Objective{"accuracy", false, false};
  EXPECT_EQ(UnreportedObjective(r, false), std::nullopt);
  EXPECT_EQ(UnreportedObjective(r, true), "objective `accuracy` not reported: no trial reported any metric");
  r.trials.Mut(0).metrics = {{"loss", 0.1}, {"step", 3}};
  r.trials.Mut(1).metrics = {{"epoch", 1}};
  EXPECT_EQ(UnreportedObjective(r, false),
            "objective `accuracy` not reported yet; the trials report loss, step, epoch");
  EXPECT_EQ(UnreportedObjective(r, true), "objective `accuracy` not reported; the trials report loss, step, epoch");
  r.trials.Mut(1).objective = 0.9;  // one trial reported it: the others may yet
  EXPECT_EQ(UnreportedObjective(r, true), std::nullopt);
}

TEST_F(EngineTest, ARefusedSubmissionFailsThatTrialOnly) {
  Make(3, 0);
  fake_.refuse = {"t1"};
  auto r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(fake_.Indexes(), ElementsAre(0, 2));  // no limit: all at once
  EXPECT_EQ(r->trials[1].state, AppState::kFailed);
  EXPECT_THAT(r->trials[1].msg, HasSubstr("submission failed: engine down"));
}

// A refresh asks the trials' scheduler once for all of them (one squeue, not one per trial).
TEST_F(EngineTest, ARefreshAsksForEveryRunningTrialInOneCall) {
  Make(4, 0);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  ASSERT_EQ(fake_.Running(), 4);
  fake_.batches = 0;
  ASSERT_THAT(Refresh(store_, "sw", fake_), IsOk());
  EXPECT_EQ(fake_.batches, 1);
}

TEST_F(EngineTest, CancelSkipsTheWaitingAndCancelsTheRunning) {
  Make(4, 2);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  ASSERT_THAT(CancelSweep(store_, "sw", fake_), IsOk());
  EXPECT_THAT(fake_.cancelled, ElementsAre("fake://s/t0", "fake://s/t1"));
  auto r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(fake_.submitted.size(), 2u);
  EXPECT_EQ(r->final_state, AppState::kCancelled);
  EXPECT_THAT(r->trials[3].msg, HasSubstr("not run: the sweep was cancelled"));
}

// A driver killed between claiming trials and recording their handles: the next driver asks the
// scheduler for each planned handle. Submitted: adopted (watched, never submitted again); never
// submitted on a scheduler that keeps its dry runs' ids: claimed again; no way to tell: failed.
TEST_F(EngineTest, TrialsClaimedByADeadDriverAreAdoptedClaimedAgainOrFailed) {
  Make(4, 4);
  ASSERT_THAT(store_.Update("sw",
                            [](SweepRecord& r) {
                              for (int i = 0; i < 3; ++i) r.trials.Mut(i).phase = ChildPhase::kSubmitting;
                              r.trials.Mut(0).planned = {"fake://s/t0", true};   // it had been submitted
                              r.trials.Mut(1).planned = {"fake://s/t1", true};   // it had not
                              r.trials.Mut(2).planned = {"fake://s/t2", false};  // the id is a proposal
                              return OkStatus();
                            }),
              IsOk());
  fake_.states["fake://s/t0"] = AppState::kRunning;  // what the dead driver submitted
  ASSERT_THAT(ResolveClaims(store_, "sw", fake_, "cannot tell"), IsOk());
  SweepRecord r = Get();
  EXPECT_EQ(r.trials[0].phase, ChildPhase::kSubmitted);
  EXPECT_EQ(r.trials[0].handle, "fake://s/t0");
  EXPECT_EQ(r.trials[1].phase, ChildPhase::kWaiting);
  EXPECT_EQ(r.trials[2].phase, ChildPhase::kDone);
  EXPECT_EQ(r.trials[2].state, AppState::kFailed);
  EXPECT_EQ(r.trials[2].msg, "cannot tell");
  for (const TrialRecord& t : r.trials) EXPECT_TRUE(t.planned.handle.empty()) << t.index;
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  EXPECT_THAT(fake_.Indexes(), ElementsAre(1, 3));  // t0 was adopted, not submitted again
  r = Get();
  EXPECT_EQ(r.trials[0].state, AppState::kRunning);
  // The claim's planned handles go into the record with the claim, and out with the handles.
  auto back = SweepCodec::FromJson(SweepCodec::ToJson(r));
  ASSERT_THAT(back, IsOk());
  EXPECT_TRUE(back->trials[1].planned.handle.empty());
}

TEST_F(EngineTest, AClaimCarriesItsPlannedHandleUntilItsHandleIsRecorded) {
  Make(1, 1);
  SweepRecord seen;
  ASSERT_THAT(store_.Update("sw",
                            [](SweepRecord& r) {
                              r.trials.Mut(0).phase = ChildPhase::kSubmitting;
                              r.trials.Mut(0).planned = {"fake://s/t0", true};
                              return OkStatus();
                            }),
              IsOk());
  auto back = SweepCodec::FromJson(SweepCodec::ToJson(Get()));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->trials[0].planned.handle, "fake://s/t0");
  EXPECT_TRUE(back->trials[0].planned.id_is_final);
}

TEST_F(EngineTest, ARunningTrialsReportsAreRecordedAsTheyCome) {
  Make(1, 1);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  fake_.reports[0] = {{{"loss", 0.8}, {"step", 10}}};
  auto r = Refresh(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->trials[0].objective, 0.8);
  EXPECT_EQ(r->trials[0].metrics.size(), 2u);
  EXPECT_EQ(LiveState(*r), AppState::kRunning);
}

TEST_F(EngineTest, AnAxSweepsTrialsGetTheirValuesFromAxAsSlotsFree) {
  Make(4, 2, 0, /*ax=*/true);
  fake_.propose_at_most = 1;  // Ax waits for data after one
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  EXPECT_THAT(fake_.Indexes(), ElementsAre(0));
  EXPECT_EQ(fake_.proposals_asked, 1);
  ASSERT_THAT(Advance(store_, "sw", fake_), IsOk());
  EXPECT_EQ(fake_.proposals_asked, 1);  // nothing ended since Ax answered short: not asked again
  fake_.propose_at_most = 100;
  End(0, AppState::kSucceeded, 0.4);
  auto r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_THAT(fake_.Indexes(), ElementsAre(0, 1, 2));
  EXPECT_EQ(r->trials[1].generator, "Sobol");
  EXPECT_EQ(r->trials[2].generator, "MBM");
  EXPECT_THAT(Texts(r->trials[2].values), ElementsAre("x=1"));
  EXPECT_TRUE(r->trials[3].values.empty());  // no slot: not proposed yet
}

TEST_F(EngineTest, AxNotAnsweringLeavesTheRestNotRunWithItsReason) {
  Make(3, 1, 0, /*ax=*/true);
  fake_.propose_error = "ModuleNotFoundError: No module named 'ax'";
  auto r = Advance(store_, "sw", fake_);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->final_state, AppState::kFailed);
  EXPECT_THAT(r->trials[0].msg, HasSubstr("not run: Ax cannot propose trials: ModuleNotFoundError"));
  EXPECT_THAT(r->msg, HasSubstr("3 trials did not run (not run: Ax cannot propose trials"));
  EXPECT_TRUE(fake_.submitted.empty());
}

TEST(SweepRecordTest, RoundTrips) {
  SweepRecord r;
  r.id = "a";
  r.name = "a";
  r.session = "s";
  r.scheduler = "local_cwd";
  r.component = "utils.sh";
  r.args = {"echo", "@{x}"};
  r.component_defaults = {{"image", "/tmp"}};
  r.trackers = {{"mlflow", std::nullopt}, {"fsspec", "/tmp/c"}};
  r.space = RandomSpace(3);
  r.objective = Objective{"acc", false, true};
  r.ax_short_at = 3;
  TrialRecord t;
  t.generator = "MBM";
  t.index = 0;
  t.values = {{"lr", Value(0.1)}, {"opt", Value("sgd")}};
  t.metrics = {{"acc", 0.9}};
  t.objective = 0.9;
  t.submitted = 5;
  r.trials.push_back(t);
  auto back = SweepCodec::FromJson(SweepCodec::ToJson(r));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(SweepCodec::ToJson(*back), SweepCodec::ToJson(r));
  EXPECT_EQ(Trials(back->space), Trials(r.space));
  EXPECT_THAT(SweepCodec::FromJson("{}"), StatusIs(StatusCode::kInternal, HasSubstr("sweep record")));
}

}  // namespace
}  // namespace torchx::sweeps
