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

TEST(AppPlan, AutoSetCudaVisibleDevicesWarnsAndAssignsNoneWhenTheHostHasTooFewGpus) {
  specs::AppDef app{"a", {GpuRole("t", 3, 2)}, {}};
  PlanInputs in = Inputs();
  in.auto_set_cuda_visible_devices = true;
  in.visible_gpus = 4;
  auto plan = BuildAppPlan(app, in);  // TorchX: a warning, and the app runs seeing every GPU
  ASSERT_THAT(plan, IsOk());
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_THAT(plan->warnings[0], HasSubstr("asks for 6 GPUs in all but this host has 4"));
  EXPECT_THAT(RenderAppPlan(*plan), HasSubstr("warning: auto_set_cuda_visible_devices"));
  for (const ReplicaPlan& r : plan->replicas) EXPECT_EQ(r.env.count("CUDA_VISIBLE_DEVICES"), 0u);
  in.auto_set_cuda_visible_devices = false;  // off: GPUs are not checked or assigned
  plan = BuildAppPlan(app, in);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->warnings.empty());
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

// The request's JSON as the equivalent nlohmann object dumps it (what the writer must give).
std::string ObjectDump(const AppPlan& plan) {
  nlohmann::json replicas = nlohmann::json::array();
  for (const ReplicaPlan& r : plan.replicas) {
    replicas.push_back({{"role", r.role},
                        {"replica_id", r.replica_id},
                        {"argv", r.argv},
                        {"env", r.env},
                        {"cwd", r.cwd},
                        {"log_dir", r.log_dir},
                        {"error_file", r.error_file}});
  }
  nlohmann::json roles = nlohmann::json::object();
  for (const auto& [name, p] : plan.roles) {
    roles[name] = {{"max_retries", p.max_retries}, {"retry_policy", specs::RetryPolicyName(p.retry_policy)}};
  }
  return nlohmann::json{{"app_id", plan.app_id},
                        {"app_dir", plan.app_dir},
                        {"kill_grace_seconds", plan.kill_grace_seconds},
                        {"resource_interval", plan.resource_interval},
                        {"replicas", replicas},
                        {"roles", roles}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Two roles, interleaved as a caller may edit them, with what a delta must carry: per-replica
// macros in argv and env, a GPU list per replica, a variable one replica lacks, a log directory
// off the standard layout, and strings JSON must escape (quotes, control bytes, non-ASCII, bytes
// that are not UTF-8).
AppPlan Irregular() {
  specs::AppDef app{"a", {GpuRole("trainer", 4, 1), GpuRole("ps", 3, 0)}, {}};
  app.roles[0].env["RANK_HINT"] = "r${replica_id}";
  app.roles[1].args.push_back("quote\" back\\slash\n tab\t \x01 caf\xc3\xa9 bad\xff");
  PlanInputs in = Inputs();
  in.auto_set_cuda_visible_devices = true;
  in.visible_gpus = 4;
  auto plan = BuildAppPlan(app, in);
  EXPECT_THAT(plan, IsOk());
  plan->replicas[2].env.erase("RANK_HINT");
  plan->replicas[5].log_dir = "/elsewhere/ps/1";
  plan->replicas[5].error_file = "/elsewhere/ps/1/err.json";
  std::swap(plan->replicas[3], plan->replicas[4]);  // trainer/3 after ps/0
  return *plan;
}

TEST(AppPlan, TheRequestIsTheObjectsJsonAndReadsBack) {
  AppPlan plan = Irregular();
  std::string text = AppPlanToJson(plan);
  EXPECT_EQ(text, ObjectDump(plan));
  auto back = AppPlanFromJson(text);
  ASSERT_THAT(back, IsOk());
  // Not UTF-8 is replaced in the text, so compare through the text.
  EXPECT_EQ(AppPlanToJson(*back), text);
}

TEST(AppPlan, TheStoredFormReadsBackAsThePlanAndIsSmall) {
  AppPlan plan = Irregular();
  for (ReplicaPlan& r : plan.replicas) r.argv.back() = "plain";  // exact equality below needs UTF-8
  auto back = AppPlanFromJson(AppPlanToStoredJson(plan));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->replicas, plan.replicas);
  EXPECT_EQ(back->app_dir, plan.app_dir);
  EXPECT_EQ(back->roles.at("ps").max_retries, plan.roles.at("ps").max_retries);

  specs::AppDef fan{"f", {GpuRole("w", 500, 0)}, {}};
  fan.roles[0].args = {"-c", "same for all"};
  auto big = BuildAppPlan(fan, Inputs());
  ASSERT_THAT(big, IsOk());
  std::string stored = AppPlanToStoredJson(*big);
  EXPECT_LT(stored.size() * 10, AppPlanToJson(*big).size());
  auto fan_back = AppPlanFromJson(stored);
  ASSERT_THAT(fan_back, IsOk());
  EXPECT_EQ(fan_back->replicas, big->replicas);
}

TEST(AppPlan, APlanFromANewerTorchxIsRefusedByVersion) {
  nlohmann::json j = nlohmann::json::parse(AppPlanToStoredJson(Irregular()));
  j["plan_version"] = 3;
  EXPECT_THAT(AppPlanFromJson(j.dump()), StatusIs(StatusCode::kInternal, HasSubstr("version 3")));
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
