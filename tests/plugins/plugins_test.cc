// Native plugins and device plugins against real shared libraries (built in-tree, and the example
// plugin built out-of-tree by the plugins.example_build fixture).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plugins/backend_modules.h"
#include "testing/registry.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "torchx/devices/device.h"
#include "torchx/plugins/registry.h"
#include "torchx/runner/runner.h"

namespace torchx::plugins {
namespace {

using devices::ProbePjrtLibrary;
using devices::SelectDevice;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

PluginRegistry::Options Path(std::vector<std::string> path) {
  PluginRegistry::Options o;
  o.native_path = std::move(path);
  return o;
}

const PluginError* FindError(const std::vector<PluginError>& errors, std::string_view source_part) {
  for (const PluginError& e : errors) {
    if (e.source.find(source_part) != std::string::npos) return &e;
  }
  return nullptr;
}

TEST(ExamplePlugin, RegistersNamedResourcesWithFractionalsAndAliases) {
  PluginRegistry reg(Path({EXAMPLE_PLUGIN}));
  auto whole = reg.NamedResource("example_gpu");
  ASSERT_TRUE(whole.has_value());
  ASSERT_THAT(*whole, IsOk());
  EXPECT_EQ((*whole)->gpu, 8);
  EXPECT_EQ((*whole)->cpu, 64);
  EXPECT_EQ((*whole)->memMB, 512 * 1024);
  EXPECT_EQ((*whole)->capabilities.at("node.kubernetes.io/instance-type").as_string(), "example.8x");
  auto quarter = reg.NamedResource("example_gpu_2");
  ASSERT_TRUE(quarter.has_value());
  EXPECT_EQ((**quarter).gpu, 2);
  EXPECT_EQ((**quarter).cpu, 16);
  EXPECT_EQ((**quarter).memMB, 128 * 1024);
  EXPECT_TRUE(reg.NamedResource("egpu").has_value());
  auto names = reg.Names(PluginType::kNamedResource);
  for (const char* n : {"example_gpu_8", "example_gpu_4", "example_gpu_1", "example_cpu_128", "example_cpu_64",
                        "example_cpu_32", "example_cpu_16"}) {
    EXPECT_THAT(names, Contains(n));
  }
  EXPECT_THAT(names, Not(Contains("example_cpu_8")));  // below minGiB
  EXPECT_THAT(reg.Errors(), IsEmpty());
  for (const PluginInfo& p : reg.Info(PluginType::kNamedResource)) {
    EXPECT_THAT(p.source, HasSubstr("torchx_example_plugin.so"));
  }
}

TEST(ExamplePlugin, ComponentAndSchedulerRunARealAppThroughTheRunner) {
  testing::ScopedTempDir tmp;
  testing::ScopedEnv path("TORCHX_PLUGIN_PATH", EXAMPLE_PLUGIN);
  std::string state_dir = tmp.path() + "/state";
  testing::ScopedEnv state("TORCHX_STATE_DIR", state_dir.c_str());
  std::string nohup_dir = tmp.path() + "/nohup-index";
  testing::ScopedEnv nohup("TORCHX_EXAMPLE_NOHUP_DIR", nohup_dir.c_str());
  auto registry = testing::BuiltinRegistry();
  runner::Runner r(*registry);
  EXPECT_THAT(r.SchedulerBackends(), Contains("example_nohup"));
  specs::Cfg cfg = {{"root", specs::CfgVal(tmp.path() + "/nohup")}};
  auto app = r.ComponentAppDef("example.hello", {"--who", "plugins", "--num_replicas", "2"});
  ASSERT_THAT(app, IsOk());
  auto handle = r.Run(*app, "example_nohup", cfg);
  ASSERT_THAT(handle, IsOk());
  EXPECT_THAT(*handle, HasSubstr("example_nohup://torchx/hello-"));
  auto status = r.Wait(*handle, std::chrono::milliseconds(50), std::chrono::seconds(30));
  ASSERT_THAT(status, IsOk());
  ASSERT_TRUE(status->has_value());
  EXPECT_EQ((*status)->state, specs::AppState::kSucceeded);
  schedulers::LogOptions lo;
  lo.role = "hello";
  lo.replica = 1;
  auto it = r.LogLines(*handle, lo);
  ASSERT_THAT(it, IsOk());
  auto line = (*it)->Next();
  ASSERT_THAT(line, IsOk());
  EXPECT_EQ(line->value_or(""), "hello plugins from replica 1\n");
  auto listed = r.List("example_nohup");
  ASSERT_THAT(listed, IsOk());
  bool found = false;
  for (const auto& a : *listed) found |= a.app_handle == *handle;
  EXPECT_TRUE(found);

  // A long app is cancelled through the plugin.
  specs::AppDef sleeper = *app;
  sleeper.roles[0].entrypoint = "sleep";
  sleeper.roles[0].args = {"60"};
  sleeper.roles[0].num_replicas = 1;
  auto h2 = r.Run(sleeper, "example_nohup", cfg);
  ASSERT_THAT(h2, IsOk());
  ASSERT_THAT(r.Cancel(*h2), IsOk());
  auto s2 = r.Wait(*h2, std::chrono::milliseconds(50), std::chrono::seconds(30));
  ASSERT_THAT(s2, IsOk());
  EXPECT_EQ((*s2)->state, specs::AppState::kCancelled);
}

TEST(BrokenPlugins, EachFailureIsReportedWithItsKindAndNothingElseBreaks) {
  PluginRegistry reg(Path({BROKEN_DIR, EXAMPLE_PLUGIN, "/nonexistent/dir"}));
  RegisterBuiltins(reg);
  EXPECT_TRUE(reg.Scheduler("local_cwd").has_value());
  EXPECT_TRUE(reg.NamedResource("example_gpu_4").has_value());  // the good plugin still loads
  auto errors = reg.Errors();
  struct Want {
    const char* lib;
    const char* kind;
    const char* text;
  };
  for (const Want& w :
       {Want{"no_entry.so", "missing_symbol", "torchx_plugin_v1"}, Want{"bad_abi.so", "abi_version", "version 99"},
        Want{"small_info.so", "struct_size", "struct_size 4"},
        Want{"init_fails.so", "init", "the license server is unreachable"},
        Want{"duplicate.so", "duplicate", "gpu.small"}, Want{"not_a_library.so", "dlopen", "not_a_library.so"}}) {
    const PluginError* e = FindError(errors, w.lib);
    ASSERT_NE(e, nullptr) << w.lib;
    EXPECT_EQ(e->kind, w.kind) << w.lib;
    EXPECT_THAT(e->message, HasSubstr(w.text)) << w.lib;
  }
  // The builtin gpu.small keeps its value.
  auto small = reg.NamedResource("gpu.small");
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ((**small).cpu, 8);

  std::string report = reg.Report();
  EXPECT_THAT(report, AllOf(HasSubstr("torchx.schedulers (scheduler)"), HasSubstr("example_nohup"),
                            HasSubstr("[abi_version]"), HasSubstr("[missing_symbol]"), HasSubstr("builtin")));
  auto j = nlohmann::json::parse(reg.ReportJson());
  EXPECT_GE(j["errors"].size(), 6u);
  EXPECT_TRUE(j["plugins"]["device"].is_array());
}

TEST(DevicePlugins, ChipCountComesFromThePjrtLibraryInAChildProcess) {
  testing::ScopedEnv devices("FAKE_PJRT_DEVICES", "4");
  std::string ok_lib = std::string(PJRT_DIR) + "/fake_pjrt_ok.so";
  testing::ScopedEnv lib("EXAMPLE_PJRT_LIBRARY", ok_lib.c_str());
  PluginRegistry reg(Path({EXAMPLE_PLUGIN}));
  auto dev = reg.Device("EXAMPLE");
  ASSERT_TRUE(dev.has_value());
  EXPECT_THAT(DeviceChipCount(*dev), IsOkAndHolds(4));
  auto env = DeviceEnv(*dev, 2, 4, 4);
  EXPECT_EQ(env["PJRT_DEVICE"], "EXAMPLE");
  EXPECT_EQ(env["PJRT_LOCAL_PROCESS_RANK"], "2");
  EXPECT_EQ(env["PJRT_LOCAL_PROCESS_COUNT"], "4");
  EXPECT_EQ(env["EXAMPLE_VISIBLE_CHIPS"], "2");
  auto probe = ProbePjrtLibrary(std::string(PJRT_DIR) + "/fake_pjrt_ok.so");
  ASSERT_THAT(probe, IsOk());
  EXPECT_EQ(probe->platform, "fake");
  EXPECT_EQ(probe->api_minor, 54);
}

TEST(DevicePlugins, BrokenPjrtLibrariesGiveDistinctErrors) {
  std::string dir = PJRT_DIR;
  struct Want {
    const char* lib;
    const char* text;
  };
  for (const Want& w : {Want{"fake_pjrt_no_symbol.so", "does not export GetPjrtApi"},
                        Want{"fake_pjrt_major_1.so", "unsupported PJRT API major version 1"},
                        Want{"fake_pjrt_small_struct.so", "PJRT_Api struct too small"},
                        Want{"fake_pjrt_create_error.so", "client create failed: no fake device is attached"},
                        Want{"fake_pjrt_crash.so", "crashed (signal"}, Want{"missing.so", "dlopen failed"}}) {
    auto probe = ProbePjrtLibrary(dir + "/" + w.lib);
    ASSERT_FALSE(probe.has_value()) << w.lib;
    EXPECT_EQ(probe.error().code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(probe.error().message(), HasSubstr(w.text)) << w.lib;
  }
}

TEST(DevicePlugins, SelectionFollowsPjrtDevice) {
  PluginRegistry reg(Path({EXAMPLE_PLUGIN}));
  RegisterBuiltins(reg);
  const devices::DeviceSource& found = reg.devices();
  auto names = reg.Names(PluginType::kDevice);
  EXPECT_THAT(names, AllOf(Contains("CUDA"), Contains("EXAMPLE")));
  auto none = SelectDevice("", "", found);
  ASSERT_THAT(none, IsOk());
  EXPECT_FALSE(none->has_value());
  auto example = SelectDevice("example", "", found);
  ASSERT_THAT(example, IsOk());
  EXPECT_EQ((*example)->name, "EXAMPLE");
  auto library = SelectDevice("LIBRARY", std::string(PJRT_DIR) + "/fake_pjrt_ok.so", found);
  ASSERT_THAT(library, IsOk());
  EXPECT_EQ(DeviceEnv(**library, 0, 1, 4).at("PJRT_LIBRARY_PATH"), std::string(PJRT_DIR) + "/fake_pjrt_ok.so");
  EXPECT_THAT(SelectDevice("LIBRARY", "", found).status().message(), HasSubstr("PJRT_LIBRARY_PATH"));
  auto unknown = SelectDevice("TPX", "", found);
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), AllOf(HasSubstr("TPX"), HasSubstr("EXAMPLE")));
}

TEST(DevicePlugins, LocalSchedulerGivesEachReplicaItsDeviceEnvAndDdpSizesFromChips) {
  testing::ScopedTempDir tmp;
  std::string state_dir = tmp.path() + "/state";
  std::string ok_lib = std::string(PJRT_DIR) + "/fake_pjrt_ok.so";
  testing::ScopedEnv state("TORCHX_STATE_DIR", state_dir.c_str());
  testing::ScopedEnv path("TORCHX_PLUGIN_PATH", EXAMPLE_PLUGIN);
  testing::ScopedEnv lib("EXAMPLE_PJRT_LIBRARY", ok_lib.c_str());
  testing::ScopedEnv devices("FAKE_PJRT_DEVICES", "2");
  testing::ScopedEnv pjrt("PJRT_DEVICE", "EXAMPLE");
  auto registry = testing::BuiltinRegistry();
  runner::Runner r(*registry);

  specs::AppDef app;
  app.name = "dev";
  specs::Role role;
  role.name = "w";
  role.entrypoint = "sh";
  role.args = {"-c", "echo $PJRT_DEVICE $PJRT_LOCAL_PROCESS_RANK $PJRT_LOCAL_PROCESS_COUNT $EXAMPLE_VISIBLE_CHIPS"};
  role.num_replicas = 2;
  role.resource = specs::Resource{1, 0, 64, {}, {}, {}};
  app.roles = {role};
  specs::Cfg cfg = {{"device", specs::CfgVal(std::string("example"))}};
  auto handle = r.Run(app, "local_cwd", cfg);
  ASSERT_THAT(handle, IsOk());
  auto status = r.Wait(*handle, std::chrono::milliseconds(50), std::chrono::seconds(30));
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ((*status)->state, specs::AppState::kSucceeded);
  for (int k : {0, 1}) {
    schedulers::LogOptions lo;
    lo.role = "w";
    lo.replica = k;
    auto it = r.LogLines(*handle, lo);
    ASSERT_THAT(it, IsOk());
    auto line = (*it)->Next();
    ASSERT_THAT(line, IsOk());
    EXPECT_EQ(line->value_or(""), fmt::format("EXAMPLE {} 2 {}\n", k, k));
  }
  // More processes than chips is refused, naming both numbers.
  app.roles[0].num_replicas = 3;
  auto too_many = r.DryRun(app, "local_cwd", cfg);
  EXPECT_THAT(too_many.status().message(), AllOf(HasSubstr("3 replicas"), HasSubstr("2 EXAMPLE chips")));
  auto unknown = r.DryRun(app, "local_cwd", {{"device", specs::CfgVal(std::string("TPX"))}});
  EXPECT_THAT(unknown.status().message(), HasSubstr("PJRT_DEVICE=TPX"));

  // dist.ddp -j 1xauto: one process per chip of the device PJRT_DEVICE selects.
  auto ddp = r.ComponentAppDef("dist.ddp", {"-j", "1xauto", "--script", "train.py"});
  ASSERT_THAT(ddp, IsOk());
  std::string cmd = ddp->roles[0].args.back();
  EXPECT_THAT(cmd, HasSubstr("--nproc_per_node 2"));
}

// The resource view's GPU columns come from NVML, opened at run time: here an NVML-shaped library
// whose GPU 0 runs the replica's own process (the pid it writes), so the figures are attributed to
// that replica, and the host's two GPUs are listed with their own figures.
TEST(GpuMetrics, LocalReplicasGetTheirGpuFiguresFromNvmlAndAHostWithoutOneSaysWhy) {
  testing::ScopedTempDir tmp;
  std::string state_dir = tmp.path() + "/state";
  std::string pid_dir = tmp.path() + "/pids";
  std::filesystem::create_directories(pid_dir);
  std::string nvml = std::string(PJRT_DIR) + "/fake_nvml.so";
  testing::ScopedEnv state("TORCHX_STATE_DIR", state_dir.c_str());
  testing::ScopedEnv lib("TORCHX_NVML_LIBRARY", nvml.c_str());
  testing::ScopedEnv pids("FAKE_NVML_PID_DIR", pid_dir.c_str());
  auto registry = testing::BuiltinRegistry();
  runner::Runner r(*registry);

  specs::AppDef app;
  app.name = "gpu";
  specs::Role role;
  role.name = "train";
  role.entrypoint = "sh";
  // `$$` is the macros' escape for `$` (TorchX substitutes with string.Template).
  role.args = {"-c", fmt::format("echo $$$$ > {}/${{replica_id}}; exec sleep 30", pid_dir)};
  role.num_replicas = 2;
  app.roles = {role};
  specs::Cfg cfg = {{"resource_interval", specs::CfgVal(0.2)}};
  auto handle = r.Run(app, "local_cwd", cfg);
  ASSERT_THAT(handle, IsOk());
  std::optional<schedulers::AppUsage> usage;
  for (int i = 0; i < 100; ++i) {  // a sample with both replicas' GPU figures, within 10 s
    auto got = r.ResourceUsage(*handle);
    ASSERT_THAT(got, IsOk());
    ASSERT_TRUE(got->has_value());
    bool both = (*got)->replicas.size() == 2;
    for (const auto& rep : (*got)->replicas) both = both && !rep.samples.empty() && !rep.samples.back().gpus.empty();
    if (both && !(*got)->hosts.empty()) {
      usage = std::move(*got);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_THAT(r.Cancel(*handle), IsOk());
  ASSERT_TRUE(usage.has_value()) << "no sample with GPU figures for both replicas";
  EXPECT_EQ(usage->gpu_note, "");
  for (const auto& rep : usage->replicas) {
    const schedulers::UsageSample& s = rep.samples.back();
    ASSERT_EQ(s.gpus.size(), 1u);
    EXPECT_EQ(s.gpus[0].index, 0);
    EXPECT_EQ(s.gpus[0].name, "Fake GPU 0");
    EXPECT_EQ(s.gpus[0].memory_used_bytes, int64_t{1} << 30);  // its own process's, not the device's 3 GiB
    EXPECT_EQ(s.gpus[0].utilization_percent, 42.0);            // its process's SM share
    EXPECT_GT(s.rss_bytes.value_or(0), 0);
    EXPECT_EQ(s.processes, 1);
  }
  const auto& host_gpus = usage->hosts[0].samples.back().gpus;
  ASSERT_EQ(host_gpus.size(), 2u);
  EXPECT_EQ(host_gpus[0].utilization_percent, 37.0);
  EXPECT_EQ(host_gpus[0].memory_used_bytes, int64_t{3} << 30);
  EXPECT_EQ(host_gpus[1].name, "Fake GPU 1");
  ASSERT_THAT(r.Wait(*handle, std::chrono::milliseconds(50), std::chrono::seconds(30)), IsOk());

  // No driver: the figures that do not need one, and the reason the GPU columns are empty.
  testing::ScopedEnv none("TORCHX_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  app.roles[0].args = {"-c", "exec sleep 30"};
  app.roles[0].num_replicas = 1;
  auto h2 = r.Run(app, "local_cwd", cfg);
  ASSERT_THAT(h2, IsOk());
  std::optional<schedulers::AppUsage> plain;
  for (int i = 0; i < 100 && !plain; ++i) {
    auto got = r.ResourceUsage(*h2);
    ASSERT_THAT(got, IsOk());
    if (got->has_value() && !(*got)->replicas[0].samples.empty()) plain = std::move(*got);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_THAT(r.Cancel(*h2), IsOk());
  ASSERT_TRUE(plain.has_value());
  EXPECT_THAT(plain->gpu_note, HasSubstr("/nonexistent/libnvidia-ml.so.1 not found"));
  EXPECT_TRUE(plain->hosts.empty());
  EXPECT_TRUE(plain->replicas[0].samples.back().gpus.empty());
  EXPECT_GT(plain->replicas[0].samples.back().rss_bytes.value_or(0), 0);
  ASSERT_THAT(r.Wait(*h2, std::chrono::milliseconds(50), std::chrono::seconds(30)), IsOk());
  // (A scheduler without the capability is refused by name: RunnerTest.CapabilitiesGateWhatTheRunnerAsks.)
}

// local_docker and kubernetes are loadable modules: registered by name, loaded when first built.
TEST(BackendModules, LoadableSchedulersAreBuiltFromTheirModule) {
  auto registry = testing::BuiltinRegistry(Path({}));
  for (const char* name : {"local_docker", "kubernetes"}) {
    auto factory = registry->Scheduler(name);
    ASSERT_TRUE(factory.has_value()) << name;
    schedulers::SchedulerContext context;
    context.session_name = "modsession";
    auto sched = (*factory)(context);
    ASSERT_THAT(sched, IsOk());
    EXPECT_EQ((*sched)->backend(), name);
    EXPECT_EQ((*sched)->session_name(), "modsession");
    EXPECT_FALSE((*sched)->run_opts().Render().empty());
  }
}

TEST(BackendModules, MissingForeignAndNonModulesAreRefusedWithTheReason) {
  testing::ScopedEnv path("TORCHX_BACKEND_PATH", STALE_DIR);
  PluginRegistry reg(Path({}));
  AddLoadableBackend(reg, {nullptr, "torchx_backend_missing.so", {"missing"}});
  AddLoadableBackend(reg, {nullptr, "torchx_backend_stale.so", {"stale"}});
  AddLoadableBackend(reg, {nullptr, "torchx_backend_notone.so", {"notone"}});
  auto build = [&](const char* name) { return (*reg.Scheduler(name))(schedulers::SchedulerContext{}).status(); };
  EXPECT_THAT(build("missing"),
              StatusIs(StatusCode::kFailedPrecondition, AllOf(HasSubstr("torchx_backend_missing.so was not found"),
                                                              HasSubstr(STALE_DIR), HasSubstr("TORCHX_BACKEND_PATH"))));
  EXPECT_THAT(build("stale"), StatusIs(StatusCode::kFailedPrecondition,
                                       AllOf(HasSubstr("another build"), HasSubstr("0.0.0+another-build"))));
  EXPECT_THAT(build("notone"), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("not a torchx back-end module")));
  // The failure is kept: asking again does not load again, and says the same.
  EXPECT_THAT(build("stale"), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("another build")));
}

// Another install's module met first (an older build in an earlier directory of the path) is
// passed over, and this build's own module is loaded. No directory relative to the working
// directory is searched (the CLI's dladdr name is only argv[0]).
TEST(BackendModules, AnotherBuildsModuleIsPassedOverForThisBuildsOwn) {
  const std::string other = std::string(STALE_DIR) + "/other-install/lib/torchx/backends";
  {
    testing::ScopedEnv path("TORCHX_BACKEND_PATH", other.c_str());
    PluginRegistry reg(Path({}));
    AddLoadableBackend(reg, {nullptr, "torchx_backend_docker.so", {"local_docker"}});
    auto sched = (*reg.Scheduler("local_docker"))(schedulers::SchedulerContext{});
    ASSERT_THAT(sched, IsOk());
    EXPECT_EQ((*sched)->backend(), "local_docker");
  }
  EXPECT_THAT(BackendModulePath(), ::testing::Not(::testing::Contains(::testing::StartsWith("backends"))));
}

}  // namespace
}  // namespace torchx::plugins
