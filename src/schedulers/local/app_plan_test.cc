#include "schedulers/local/app_plan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "schedulers/local/helpers.h"
#include "torchx/specs/serialize.h"

#include "testing/status_matchers.h"

namespace torchx::schedulers::local {
namespace {

using ::testing::HasSubstr;

specs::Role GpuRole(std::string name, int replicas, int gpus) {
  specs::Role r;
  r.name = std::move(name);
  r.entrypoint = "python";
  r.args = {"-c", "r=${replica_id} a=${app_id} i=${img_root}"};
  r.num_replicas = replicas;
  r.resource = specs::Resource{1, gpus, 128, {}, {}, {}};
  return r;
}

PlanInputs Inputs() {
  PlanInputs in;
  in.app_id = "app-1";
  in.session = "torchx";
  in.cwd = "/work";
  in.log_dir = "/logs";
  return in;
}

TEST(AppPlan, AutoSetCudaVisibleDevicesGivesDisjointGpusAcrossRoles) {
  specs::AppDef app{"a", {GpuRole("t", 2, 2), GpuRole("e", 1, 1), GpuRole("c", 1, 0)}, {}};
  PlanInputs in = Inputs();
  in.auto_set_cuda_visible_devices = true;
  in.visible_gpus = 8;
  auto plan = BuildAppPlan(app, in);
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->replicas.size(), 4u);
  EXPECT_EQ(plan->replicas[0].env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(plan->replicas[1].env.at("CUDA_VISIBLE_DEVICES"), "2,3");
  EXPECT_EQ(plan->replicas[2].env.at("CUDA_VISIBLE_DEVICES"), "4");
  EXPECT_EQ(plan->replicas[3].env.count("CUDA_VISIBLE_DEVICES"), 0u);  // a CPU-only role
}

TEST(AppPlan, AutoSetCudaVisibleDevicesRefusesMoreGpusThanTheHostHas) {
  specs::AppDef app{"a", {GpuRole("t", 3, 2)}, {}};
  PlanInputs in = Inputs();
  in.auto_set_cuda_visible_devices = true;
  in.visible_gpus = 4;
  EXPECT_THAT(BuildAppPlan(app, in),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("asks for 6 GPUs in all but this host has 4")));
  in.auto_set_cuda_visible_devices = false;  // off: GPUs are not checked or assigned
  auto plan = BuildAppPlan(app, in);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->replicas[0].env.count("CUDA_VISIBLE_DEVICES"), 0u);
}

TEST(AppPlan, RefusesMoreReplicasThanTheSchedulerCanHold) {
  specs::AppDef app{"a", {GpuRole("t", 2000000000, 0), GpuRole("u", 2000000000, 0)}, {}};
  PlanInputs in = Inputs();
  in.max_replicas = 1000;
  EXPECT_THAT(BuildAppPlan(app, in),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("the app has 4000000000 replicas in all; the local "
                                                               "scheduler can run at most 1000")));
}

TEST(AppPlan, MacrosPathsAndLayout) {
  specs::AppDef app{"a", {GpuRole("t", 2, 0)}, {}};
  app.roles[0].env["PATH"] = "/opt/bin";
  PlanInputs in = Inputs();
  auto plan = BuildAppPlan(app, in);
  ASSERT_THAT(plan, IsOk());
  const ReplicaPlan& r1 = plan->replicas[1];
  EXPECT_EQ(r1.argv, (std::vector<std::string>{"python", "-c", "r=1 a=app-1 i=/work"}));
  EXPECT_EQ(r1.log_dir, "/logs/torchx/app-1/t/1");
  EXPECT_EQ(r1.env.at("TORCHELASTIC_ERROR_FILE"), "/logs/torchx/app-1/t/1/error.json");
  // TorchX HEAD: the role's PATH then the working directory (the launcher appends the
  // environment's PATH when the replica starts); prepend_cwd puts the directory first.
  EXPECT_EQ(r1.env.at("PATH"), "/opt/bin:/work");
  EXPECT_EQ(r1.env.count("PYTHONUNBUFFERED"), 0u);
  in.prepend_cwd = true;
  EXPECT_EQ(BuildAppPlan(app, in)->replicas[0].env.at("PATH"), "/work:/opt/bin");
  // A role whose image lives elsewhere (TorchX's image providers): its own ${img_root} and cwd.
  in.role_dirs["t"] = {"/images/t", "/run/t"};
  auto moved = BuildAppPlan(app, in);
  ASSERT_THAT(moved, IsOk());
  EXPECT_EQ(moved->replicas[0].argv.back(), "r=0 a=app-1 i=/images/t");
  EXPECT_EQ(moved->replicas[0].cwd, "/run/t");
  EXPECT_EQ(moved->replicas[0].env.at("PATH"), "/run/t:/opt/bin");
  in.role_dirs.clear();
  auto back = AppPlanFromJson(AppPlanToJson(*plan));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->replicas[1].argv, r1.argv);
  EXPECT_EQ(back->replicas[1].env, r1.env);
  EXPECT_THAT(AppPlanFromJson("{}"), StatusIs(StatusCode::kInternal, HasSubstr("corrupt app plan")));
}

// What Python's LocalScheduler asks through Scheduler::Helper: the plan (its PopenRequest), JSON
// in and out, the same plan BuildAppPlan makes; bad inputs named.
TEST(LocalHelpers, PlanAsJson) {
  specs::AppDef app{"a", {GpuRole("trainer", 2, 0)}, {}};
  nlohmann::json inputs = {{"app_id", "app-1"},
                           {"session", "torchx"},
                           {"cwd", "/work"},
                           {"log_dir", "/logs"},
                           {"role_dirs", {{"trainer", {{"img_root", "/img"}, {"cwd", "/img/w"}}}}}};
  nlohmann::json args = {{"app", nlohmann::json::parse(specs::AppDefToJson(app, -1))}, {"inputs", inputs}};
  auto out = LocalHelper("plan", args.dump());
  ASSERT_THAT(out, IsOk());
  auto j = nlohmann::json::parse(*out);
  PlanInputs in = Inputs();
  in.role_dirs["trainer"] = {"/img", "/img/w"};
  auto plan = BuildAppPlan(app, in);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(j["plan"], nlohmann::json::parse(AppPlanToJson(*plan)));
  EXPECT_EQ(j["printable"], RenderAppPlan(*plan));
  args["inputs"]["cwd"] = 3;
  EXPECT_THAT(LocalHelper("plan", args.dump()), StatusIs(StatusCode::kInvalidArgument, HasSubstr("inputs.cwd")));
  args["inputs"] = inputs;
  args["inputs"]["role_dirs"] = {{"trainer", "x"}};
  EXPECT_THAT(LocalHelper("plan", args.dump()),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("inputs.role_dirs.trainer")));
  EXPECT_THAT(LocalHelper("plans", "{}"), StatusIs(StatusCode::kNotFound, HasSubstr("helpers: plan")));
}

}  // namespace
}  // namespace torchx::schedulers::local
