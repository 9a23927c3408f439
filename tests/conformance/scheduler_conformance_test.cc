// The behaviour every scheduler back-end must have, run against each registered back-end that
// can run here. A new back-end adds an environment to Backends() and gets the whole suite.
#include <functional>
#include <memory>

#include <gtest/gtest.h>

#include "testing/local_env.h"
#include "testing/status_matchers.h"
#include "torchx/specs/app_handle.h"

namespace torchx {
namespace {

using ::testing::HasSubstr;
using specs::AppState;

struct Backend {
  std::string name;
  /// Sets up the engine for one test (e.g. a private state dir); destroyed after it.
  std::function<std::shared_ptr<void>()> environment;
};

std::vector<Backend> Backends() {
  auto local = [] { return std::shared_ptr<void>(std::make_shared<testing::LocalSchedulerEnv>()); };
  return {{"local_cwd", local}, {"local", local}};
}

class SchedulerConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { env_ = GetParam().environment(); }
  const std::string& sched() const { return GetParam().name; }
  specs::AppDef Sh(const std::string& script, int replicas = 1) {
    specs::Role r;
    r.name = "main";
    r.entrypoint = "sh";
    r.args = {"-c", script};
    r.num_replicas = replicas;
    r.resource = specs::Resource{1, 0, 128, {}, {}, {}};
    return specs::AppDef{"conf", {r}, {}};
  }
  std::shared_ptr<void> env_;
  runner::Runner runner_;
};

TEST_P(SchedulerConformance, DryRunBuildsAPrintableRequestWithoutSubmitting) {
  auto info = runner_.DryRun(Sh("true"), sched());
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->scheduler, sched());
  EXPECT_FALSE(info->request.empty());
  EXPECT_EQ(info->app.roles[0].env.at("TORCHX_JOB_ID"), sched() + "://torchx/${app_id}");
  if (!info->app_id.empty()) {
    EXPECT_THAT(runner_.Status(specs::MakeAppHandle(sched(), "torchx", info->app_id)), IsOkAndHolds(std::nullopt));
  }
}

TEST_P(SchedulerConformance, RejectsInvalidAppsAndOptionsBeforeSubmitting) {
  specs::AppDef bad = Sh("true");
  bad.roles[0].num_replicas = 0;
  EXPECT_THAT(runner_.DryRun(bad, sched()), StatusIs(StatusCode::kInvalidArgument, HasSubstr("num_replicas")));
  auto opts = runner_.SchedulerRunOpts(sched());
  ASSERT_THAT(opts, IsOk());
  for (const auto& [key, opt] : opts->options()) {
    if (opt.type == specs::CfgType::kStr) continue;
    EXPECT_THAT(runner_.DryRun(Sh("true"), sched(), {{key, std::string("not-a-") + std::string(specs::CfgTypeName(opt.type))}}),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("Run option: " + key)));
    break;
  }
}

TEST_P(SchedulerConformance, RunsToSucceededAndFailed) {
  auto ok = runner_.Run(Sh("exit 0", 2), sched());
  auto bad = runner_.Run(Sh("exit 1"), sched());
  ASSERT_THAT(ok, IsOk());
  ASSERT_THAT(bad, IsOk());
  EXPECT_EQ(specs::ParseAppHandle(*ok)->scheduler_backend, sched());
  auto s1 = testing::WaitTerminal(runner_, *ok);
  auto s2 = testing::WaitTerminal(runner_, *bad);
  ASSERT_TRUE(s1 && s2);
  EXPECT_EQ(s1->state, AppState::kSucceeded);
  EXPECT_EQ(s2->state, AppState::kFailed);
  EXPECT_EQ(s1->roles.at(0).replicas.size(), 2u);
}

TEST_P(SchedulerConformance, CancelIsIdempotentAndEndsCancelled) {
  auto h = runner_.Run(Sh("sleep 60"), sched());
  ASSERT_THAT(h, IsOk());
  ASSERT_THAT(runner_.Cancel(*h), IsOk());
  ASSERT_THAT(runner_.Cancel(*h), IsOk());
  auto s = testing::WaitTerminal(runner_, *h);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, AppState::kCancelled);
  EXPECT_THAT(runner_.Cancel(*h), IsOk());
}

TEST_P(SchedulerConformance, UnknownAppIsNotAnError) {
  std::string h = specs::MakeAppHandle(sched(), "torchx", "no-such-app-9");
  EXPECT_THAT(runner_.Status(h), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(runner_.Describe(h), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(runner_.Cancel(h), IsOk());
}

TEST_P(SchedulerConformance, DescribeReturnsTheSubmittedApp) {
  auto h = runner_.Run(Sh("true"), sched());
  ASSERT_THAT(h, IsOk());
  auto app = runner_.Describe(*h);
  ASSERT_THAT(app, IsOk());
  ASSERT_TRUE(app->has_value());
  EXPECT_EQ((*app)->roles.at(0).name, "main");
  testing::WaitTerminal(runner_, *h);
}

TEST_P(SchedulerConformance, ListAndLogsWhenDeclared) {
  auto h = runner_.Run(Sh("echo conformance-line"), sched());
  ASSERT_THAT(h, IsOk());
  testing::WaitTerminal(runner_, *h);
  auto listed = runner_.List(sched());
  ASSERT_THAT(listed, IsOk());
  bool found = false;
  for (const auto& a : *listed) found = found || a.app_handle == *h;
  EXPECT_TRUE(found);
  schedulers::LogOptions o;
  o.role = "main";
  auto it = runner_.LogLines(*h, o);
  ASSERT_THAT(it, IsOk());
  auto line = (*it)->Next();
  ASSERT_THAT(line, IsOk());
  EXPECT_EQ(line->value_or(""), "conformance-line\n");
}

INSTANTIATE_TEST_SUITE_P(Schedulers, SchedulerConformance, ::testing::ValuesIn(Backends()),
                         [](const ::testing::TestParamInfo<Backend>& p) { return p.param.name; });

}  // namespace
}  // namespace torchx
