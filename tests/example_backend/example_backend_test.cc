// The test-only example back-end (example_scheduler.cc) through the same layers every back-end
// goes through, registered with one line and otherwise unknown to the Runner, pipelines, the
// CLI, the UI and the Python binding: apps run, logs are filtered by the Runner, capabilities
// gate what it lacks, and a pipeline on it is sequenced by its native dependencies.
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugins/backend_modules.h"
#include "testing/local_env.h"
#include "testing/log_lines.h"
#include "testing/registry.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "torchx/pipelines/pipeline.h"
#include "torchx/runner/runner.h"

namespace torchx {
namespace {

using specs::AppState;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ExampleBackendTest : public ::testing::Test {
 protected:
  ExampleBackendTest() {
    // The one registration line (what the build's table does for a built-in back-end).
    plugins::AddLoadableBackend(*registry_, {nullptr, "torchx_backend_example.so", {"example"}});
    pipelines::RegisterPipelineScheduler(*registry_);
  }
  ~ExampleBackendTest() override {
    // Every job this test started ends with it.
    for (const auto& h : handles_) (void)runner_.Cancel(h);
  }

  specs::AppDef Sh(const std::string& name, const std::string& script, int replicas = 1) {
    specs::Role r;
    r.name = "main";
    r.entrypoint = "sh";
    r.args = {"-c", script};
    r.num_replicas = replicas;
    return specs::AppDef{name, {r}, {}};
  }
  std::string Run(const specs::AppDef& app) {
    auto h = runner_.Run(app, "example");
    EXPECT_THAT(h, IsOk());
    if (h.ok()) handles_.push_back(*h);
    return h.ok() ? *h : "";
  }

  testing::ScopedTempDir engine_;
  testing::ScopedEnv engine_env_{"TORCHX_EXAMPLE_ENGINE_DIR", engine_.path().c_str()};
  testing::ScopedEnv module_path_{"TORCHX_BACKEND_PATH", EXAMPLE_BACKEND_DIR};
  testing::LocalSchedulerEnv state_;
  std::unique_ptr<plugins::PluginRegistry> registry_ = testing::BuiltinRegistry();
  runner::Runner runner_{*registry_};
  std::vector<std::string> handles_;
};

TEST_F(ExampleBackendTest, RunsAppsAndTheRunnerFiltersTheirLogs) {
  std::string ok = Run(Sh("ok", "head -c 1048576 /dev/zero | tr '\\0' a; echo; echo bac; echo done", 2));
  std::string bad = Run(Sh("bad", "exit 3"));
  auto s1 = testing::WaitTerminal(runner_, ok);
  auto s2 = testing::WaitTerminal(runner_, bad);
  ASSERT_TRUE(s1 && s2);
  EXPECT_EQ(s1->state, AppState::kSucceeded);
  EXPECT_EQ(s1->roles.at(0).replicas.size(), 2u);
  EXPECT_EQ(s2->state, AppState::kFailed);
  schedulers::LogOptions o;
  o.role = "main";
  o.replica = 1;
  o.regex = "(a|b)*c";
  auto it = runner_.LogLines(ok, o);
  ASSERT_THAT(it, IsOk());
  EXPECT_THAT(testing::ReadAllLines(**it), IsOkAndHolds(ElementsAre("bac\n")));
  o.follow = true;  // not declared: refused naming it, never attempted
  EXPECT_THAT(runner_.LogLines(ok, o),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("scheduler example does not support following logs")));
  EXPECT_THAT(runner_.Delete(ok), StatusIs(StatusCode::kUnimplemented, HasSubstr("does not support deleting apps")));
  auto listed = runner_.List("example");
  ASSERT_THAT(listed, IsOk());
  EXPECT_EQ(listed->size(), 2u);
}

TEST_F(ExampleBackendTest, CancelEndsARunningApp) {
  std::string h = Run(Sh("long", "sleep 60"));
  ASSERT_THAT(runner_.Cancel(h), IsOk());
  auto s = testing::WaitTerminal(runner_, h);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, AppState::kCancelled);
}

// All steps on the example engine, which declares native_dependencies: the whole DAG is
// submitted at once and the engine sequences it; a failed step's dependents never run.
TEST_F(ExampleBackendTest, APipelineOnItIsSequencedByTheEngine) {
  testing::ScopedTempDir work;
  std::string out = work.path() + "/out.txt";
  auto spec = pipelines::ParsePipeline(R"(
scheduler: example
steps:
  prepare: {component: utils.sh, args: [sh, -c, "sleep 0.3; echo prepared > )" +
                                       out + R"("]}
  train: {component: utils.sh, args: [sh, -c, "cat )" +
                                       out + R"( && echo trained >> )" + out + R"("], depends_on: [prepare]}
  fail: {component: utils.sh, args: [sh, -c, "exit 1"], depends_on: [prepare]}
  never: {component: utils.sh, args: [sh, -c, "echo never >> )" +
                                       out + R"("], depends_on: [fail]}
)");
  ASSERT_THAT(spec, IsOk());
  config::TorchxConfig config;
  auto plan = pipelines::PlanPipeline(runner_, config, pipelines::RunRequest{*spec, "", "", ""});
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->sequenced_by, pipelines::Sequencer::kScheduler);
  EXPECT_THAT(pipelines::RenderPlan(*plan), HasSubstr("submitted at once to example"));
  auto handle = pipelines::LaunchPipeline(runner_, *plan);
  ASSERT_THAT(handle, IsOk());
  handles_.push_back(*handle);
  auto status = testing::WaitTerminal(runner_, *handle, std::chrono::seconds(60));
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, AppState::kFailed);
  EXPECT_THAT(status->msg, HasSubstr("never not run: step `fail` FAILED"));
  std::ifstream f(out);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "prepared\ntrained\n");  // train ran after prepare; never never ran
}

}  // namespace
}  // namespace torchx
