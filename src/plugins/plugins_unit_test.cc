#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "plugins/python_plugin_hints.h"
#include "testing/status_matchers.h"
#include "torchx/plugins/fractionals.h"
#include "torchx/plugins/registry.h"
#include "torchx/specs/named_resources.h"

namespace torchx::plugins {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

specs::Resource Res(int cpu, int gpu, int mem) {
  specs::Resource r;
  r.cpu = cpu;
  r.gpu = gpu;
  r.memMB = mem;
  return r;
}

PluginRegistry::Options NoNatives() {
  PluginRegistry::Options o;
  o.native_path = std::vector<std::string>{};
  return o;
}

TEST(Fractionals, PowersOfTwoGpus) {
  EXPECT_THAT(PowersOfTwoGpus(Res(96, 8, 1024)),
              IsOkAndHolds(ElementsAre(Fractional{1.0, "8"}, Fractional{0.5, "4"}, Fractional{0.25, "2"},
                                       Fractional{0.125, "1"})));
  EXPECT_THAT(PowersOfTwoGpus(Res(1, 1, 1)), IsOkAndHolds(ElementsAre(Fractional{1.0, "1"})));
  for (int gpu : {0, 3, 6, -1}) {
    auto r = PowersOfTwoGpus(Res(1, gpu, 1));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.error().message(), HasSubstr("power of two"));
  }
}

TEST(Fractionals, HalveMemDownTo) {
  EXPECT_THAT(HalveMemDownTo(Res(1, 0, 64 * 1024), 8),
              IsOkAndHolds(ElementsAre(Fractional{1.0, "64"}, Fractional{0.5, "32"}, Fractional{0.25, "16"},
                                       Fractional{0.125, "8"})));
  // 96 GiB: odd part 3, so the series may go down to 3 GiB.
  EXPECT_THAT(HalveMemDownTo(Res(1, 0, 96 * 1024), 3),
              IsOkAndHolds(ElementsAre(Fractional{1.0, "96"}, Fractional{0.5, "48"}, Fractional{0.25, "24"},
                                       Fractional{0.125, "12"}, Fractional{0.0625, "6"}, Fractional{0.03125, "3"})));
  EXPECT_THAT(HalveMemDownTo(Res(1, 0, 96 * 1024), 2).status().message(), HasSubstr("odd part"));
  EXPECT_THAT(HalveMemDownTo(Res(1, 0, 0), 1).status().message(), HasSubstr("memMB"));
  EXPECT_THAT(HalveMemDownTo(Res(1, 0, 1000), 1).status().message(), HasSubstr("whole number of GiB"));
}

TEST(Fractionals, RequestFromJsonNamesFieldsAndChoices) {
  auto list = FractionalsRequestFromJson(R"({"policy": "list", "list": [{"fraction": 0.5, "suffix": "half"}]})");
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->policy, FractionalsRequest::Policy::kList);
  EXPECT_THAT(list->list, ElementsAre(Fractional{0.5, "half"}));
  auto halve = FractionalsRequestFromJson(R"({"policy": "halve_mem_down_to", "min_gib": 16})");
  ASSERT_TRUE(halve.has_value());
  EXPECT_EQ(halve->min_gib, 16);
  EXPECT_THAT(FractionalsRequestFromJson(R"({"policy": "thirds"})").status().message(),
              HasSubstr("[none, list, powers_of_two_gpus, halve_mem_down_to]"));
  EXPECT_THAT(FractionalsRequestFromJson(R"({"policy": "halve_mem_down_to"})").status().message(),
              HasSubstr("fractionals.min_gib"));
  EXPECT_THAT(FractionalsRequestFromJson(R"({"policy": "list", "list": [{"fraction": "x"}]})").status().message(),
              HasSubstr("fractionals.list[0]"));
}

TEST(Fractionals, ExpandNamesTheResourceItsAliasesAndItsFractions) {
  int made = 0;
  auto whole = [&] {
    ++made;
    return Result<specs::Resource>(Res(32, 4, 256 * 1024));
  };
  FractionalsRequest gpus;
  gpus.policy = FractionalsRequest::Policy::kPowersOfTwoGpus;
  auto v = ExpandNamedResource("demo_gpu", {"dgpu"}, gpus, whole);
  EXPECT_TRUE(v.fractionals_error.ok());
  EXPECT_THAT(v.names,
              ElementsAre(NamedFraction{"demo_gpu", 1.0}, NamedFraction{"dgpu", 1.0}, NamedFraction{"demo_gpu_4", 1.0},
                          NamedFraction{"demo_gpu_2", 0.5}, NamedFraction{"demo_gpu_1", 0.25}));
  EXPECT_EQ(made, 1);
  // No rule, no whole resource made.
  EXPECT_THAT(ExpandNamedResource("plain", {}, {}, whole).names, ElementsAre(NamedFraction{"plain", 1.0}));
  EXPECT_EQ(made, 1);
  // A rule that cannot apply keeps the name and aliases, and says why.
  FractionalsRequest halve;
  halve.policy = FractionalsRequest::Policy::kHalveMemDownTo;
  halve.min_gib = 1;
  auto bad = ExpandNamedResource("odd", {"o"}, halve, [] { return Result<specs::Resource>(Res(1, 0, 1000)); });
  EXPECT_THAT(bad.names, ElementsAre(NamedFraction{"odd", 1.0}, NamedFraction{"o", 1.0}));
  EXPECT_THAT(bad.fractionals_error.message(), HasSubstr("named resource odd: halve_mem_down_to"));
}

TEST(PluginTypeTest, NamesAndGroups) {
  EXPECT_THAT(ParsePluginType("scheduler"), IsOkAndHolds(PluginType::kScheduler));
  EXPECT_THAT(ParsePluginType("torchx.named_resources"), IsOkAndHolds(PluginType::kNamedResource));
  EXPECT_EQ(PluginTypeGroup(PluginType::kTracker), "torchx.tracker");
  EXPECT_THAT(ParsePluginType("widget").status().message(),
              HasSubstr("[scheduler, tracker, named_resource, component, device]"));
}

TEST(PluginRegistryTest, ProvidersRunOncePerTypeOnFirstAccess) {
  PluginRegistry reg(NoNatives());
  std::vector<PluginType> asked;
  reg.AddProvider("test", [&](PluginType t, PluginRegistry& r) {
    asked.push_back(t);
    if (t == PluginType::kNamedResource) {
      (void)r.AddNamedResource("tiny", "python:test", [] { return Result<specs::Resource>(Res(1, 0, 10)); });
    }
  });
  EXPECT_THAT(asked, IsEmpty());  // nothing is discovered before it is needed
  EXPECT_TRUE(reg.NamedResource("tiny").has_value());
  EXPECT_TRUE(reg.NamedResource("tiny").has_value());
  EXPECT_THAT(asked, ElementsAre(PluginType::kNamedResource));
  EXPECT_FALSE(reg.Scheduler("nope").has_value());
  EXPECT_THAT(asked, ElementsAre(PluginType::kNamedResource, PluginType::kScheduler));
  EXPECT_THAT(reg.Names(PluginType::kComponent), IsEmpty());  // empty, never an error
  auto info = reg.Info(PluginType::kNamedResource);
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].source, "python:test");
}

// Python's registry().clear(): what the provider gave is dropped and it is asked again, so a
// plugin installed since (or one gone) shows; others' entries and providers stay as they were.
TEST(PluginRegistryTest, AForgottenProviderIsAskedAgainAndItsEntriesAndErrorsGo) {
  PluginRegistry reg(NoNatives());
  std::string offered = "old";
  int python_asked = 0, other_asked = 0;
  reg.AddProvider("python", [&](PluginType t, PluginRegistry& r) {
    if (t != PluginType::kNamedResource) return;
    ++python_asked;
    (void)r.AddNamedResource(offered, "python:mod", [] { return Result<specs::Resource>(Res(1, 0, 1)); });
    r.AddError({"python:broken_" + offered, "python", "ImportError"});
  });
  reg.AddProvider("other", [&](PluginType t, PluginRegistry& r) {
    if (t != PluginType::kNamedResource) return;
    ++other_asked;
    (void)r.AddNamedResource("native_one", "/lib/x.so", [] { return Result<specs::Resource>(Res(2, 0, 1)); });
  });
  EXPECT_TRUE(reg.NamedResource("old").has_value());
  ASSERT_EQ(reg.Errors().size(), 1u);
  offered = "new";
  reg.ForgetProvider("python", {"python"});
  EXPECT_TRUE(reg.NamedResource("new").has_value());
  EXPECT_FALSE(reg.NamedResource("old").has_value());
  EXPECT_TRUE(reg.NamedResource("native_one").has_value());
  ASSERT_EQ(reg.Errors().size(), 1u);
  EXPECT_EQ(reg.Errors()[0].source, "python:broken_new");
  EXPECT_EQ(python_asked, 2);
  EXPECT_EQ(other_asked, 1);
}

TEST(PluginRegistryTest, AProviderAddedLaterIsAskedWithoutReaskingEarlierOnes) {
  PluginRegistry reg(NoNatives());
  int first = 0, second = 0;
  reg.AddProvider("first", [&](PluginType t, PluginRegistry& r) {
    if (t == PluginType::kNamedResource) {
      ++first;
      (void)r.AddNamedResource("a", "python:first", [] { return Result<specs::Resource>(Res(1, 0, 1)); });
    }
  });
  EXPECT_TRUE(reg.NamedResource("a").has_value());
  reg.AddProvider("second", [&](PluginType t, PluginRegistry& r) {
    if (t == PluginType::kNamedResource) {
      ++second;
      (void)r.AddNamedResource("b", "python:second", [] { return Result<specs::Resource>(Res(2, 0, 1)); });
    }
  });
  EXPECT_TRUE(reg.NamedResource("b").has_value());
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 1);
  EXPECT_THAT(reg.Errors(), IsEmpty());  // no duplicate from asking "first" again
}

TEST(PluginRegistryTest, DuplicatesKeepTheFirstAndAreReported) {
  PluginRegistry reg(NoNatives());
  ASSERT_THAT(reg.AddNamedResource("x", "builtin", [] { return Result<specs::Resource>(Res(1, 0, 1)); }), IsOk());
  auto again = reg.AddNamedResource("x", "native:/p.so", [] { return Result<specs::Resource>(Res(2, 0, 1)); });
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ((**reg.NamedResource("x")).cpu, 1);
  ASSERT_EQ(reg.Errors().size(), 1u);
  EXPECT_EQ(reg.Errors()[0].kind, "duplicate");
  EXPECT_THAT(reg.Report(), HasSubstr("[duplicate] native:/p.so"));
}

// Which schedulers run composite jobs is known from the registration, so that listing what an
// AppDef can be submitted to builds none of them (a plugin may not be buildable here).
TEST(PluginRegistryTest, CompositeSchedulersAreMarkedWithoutBeingBuilt) {
  PluginRegistry reg(NoNatives());
  int built = 0;
  auto factory = [&built](const schedulers::SchedulerContext&) -> Result<std::unique_ptr<schedulers::Scheduler>> {
    ++built;
    return UnavailableError("not buildable here");
  };
  ASSERT_THAT(reg.AddScheduler("plain", "entrypoint:x", factory), IsOk());
  ASSERT_THAT(reg.AddCompositeScheduler("many", "builtin", factory), IsOk());
  EXPECT_EQ(reg.AddCompositeScheduler("plain", "builtin", factory).code(), StatusCode::kAlreadyExists);
  auto info = reg.Info(PluginType::kScheduler);
  ASSERT_EQ(info.size(), 2u);
  EXPECT_EQ(info[0].name, "plain");
  EXPECT_FALSE(info[0].composite);
  EXPECT_EQ(info[1].name, "many");
  EXPECT_TRUE(info[1].composite);
  EXPECT_EQ(built, 0);
}

TEST(PluginRegistryTest, BuiltinsAreRegistered) {
  PluginRegistry reg(NoNatives());
  RegisterBuiltins(reg);
  EXPECT_TRUE(reg.Scheduler("local_cwd").has_value());
  EXPECT_TRUE(reg.Component("dist.ddp") != nullptr);
  EXPECT_EQ((**reg.NamedResource("gpu.small")).gpu, 1);
  EXPECT_TRUE(reg.Device("CUDA").has_value());
  EXPECT_THAT(reg.Errors(), IsEmpty());
}

TEST(DeviceEnvTest, TemplateFillsRankCountAndChips) {
  DevicePlugin d;
  d.name = "TPU";
  d.env_template = {{"TPU_VISIBLE_CHIPS", "{rank}"}, {"TPU_PROCESS_BOUNDS", "1,1,{count}"}, {"CHIPS", "{chips}"}};
  auto env = DeviceEnv(d, 1, 4, 8);
  EXPECT_EQ(env["PJRT_DEVICE"], "TPU");
  EXPECT_EQ(env["PJRT_LOCAL_PROCESS_RANK"], "1");
  EXPECT_EQ(env["PJRT_LOCAL_PROCESS_COUNT"], "4");
  EXPECT_EQ(env["TPU_VISIBLE_CHIPS"], "1");
  EXPECT_EQ(env["TPU_PROCESS_BOUNDS"], "1,1,4");
  EXPECT_EQ(env["CHIPS"], "8");
}

TEST(PluginRegistryTest, ABuiltinNameIsFoundWithoutDiscoveringPlugins) {
  PluginRegistry reg(NoNatives());
  RegisterBuiltins(reg);
  int asked = 0;
  reg.AddProvider("counting", [&](PluginType, PluginRegistry&) { ++asked; });
  EXPECT_TRUE(reg.Scheduler("local_cwd").has_value());
  EXPECT_NE(reg.Component("utils.echo"), nullptr);
  EXPECT_TRUE(reg.NamedResource("gpu.small").has_value());
  EXPECT_TRUE(reg.Device("CUDA").has_value());
  EXPECT_EQ(asked, 0);
  EXPECT_FALSE(reg.Scheduler("nope").has_value());  // an unknown name asks the providers once
  EXPECT_FALSE(reg.Scheduler("nope2").has_value());
  EXPECT_EQ(asked, 1);
}

TEST(PluginRegistryTest, SchedulersKeepRegistrationOrderPluginsFirstThenBuiltinsWithTheDefaultFirst) {
  PluginRegistry reg(NoNatives());
  RegisterBuiltins(reg);
  ASSERT_THAT(reg.AddScheduler("aaa_plugin", "test",
                               [](const schedulers::SchedulerContext&) {
                                 return Result<std::unique_ptr<schedulers::Scheduler>>(UnimplementedError("test"));
                               }),
              IsOk());
  std::vector<std::string> names = reg.Names(PluginType::kScheduler);
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[0], "aaa_plugin");  // TorchX #1448: plugins first
  EXPECT_EQ(names[1], "local_cwd");   // then the built-ins, the built-in default first
  // The named resources stay sorted.
  std::vector<std::string> resources = reg.Names(PluginType::kNamedResource);
  EXPECT_TRUE(std::is_sorted(resources.begin(), resources.end()));
}

TEST(PluginRegistryTest, ViewsAnswerForTheLowerLayers) {
  PluginRegistry reg(NoNatives());
  RegisterBuiltins(reg);
  ASSERT_THAT(reg.AddNamedResource("custom.box", "test", [] { return Result<specs::Resource>(Res(3, 0, 300)); }),
              IsOk());
  auto custom = reg.named_resources().Find("custom.box");
  ASSERT_TRUE(custom.has_value());
  EXPECT_EQ((**custom).cpu, 3);
  EXPECT_FALSE(reg.named_resources().Find("no.such").has_value());
  EXPECT_THAT(reg.named_resources().Names(), ::testing::Contains("custom.box"));
  EXPECT_NE(reg.components().Find("dist.ddp"), nullptr);
  EXPECT_EQ(reg.components().Find("dist.dpp"), nullptr);
  EXPECT_TRUE(reg.devices().Find("CUDA").has_value());
  // specs resolves plugin names only through the view it is handed.
  EXPECT_THAT(specs::GetNamedResource("custom.box"), StatusIs(StatusCode::kNotFound, HasSubstr("custom.box")));
  EXPECT_THAT(specs::GetNamedResource("custom.box", &reg.named_resources()), IsOk());
}

}  // namespace
}  // namespace torchx::plugins

namespace torchx::plugins {
namespace {

schedulers::SchedulerFactory NoScheduler() {
  return [](const schedulers::SchedulerContext&) -> Result<std::unique_ptr<schedulers::Scheduler>> {
    return InternalError("not made in this test");
  };
}

// TorchX #1448: plugins first, a plugin wins a name clash with a built-in; a provider that says
// it may have a built-in's name is asked before that name is answered, one that says it has no
// scheduler is never started for a built-in name or the default.
TEST(PluginRegistryTest, ASchedulerPluginShadowsABuiltinAndPluginsComeFirst) {
  PluginRegistry reg(NoNatives());
  (void)reg.AddScheduler("local_cwd", "builtin", NoScheduler());
  (void)reg.AddScheduler("slurm", "builtin", NoScheduler());
  int asked = 0;
  bool may = false, offer = true;
  reg.AddProvider(
      "python",
      [&](PluginType t, PluginRegistry& r) {
        if (t != PluginType::kScheduler) return;
        ++asked;
        if (!offer) return;
        (void)r.AddScheduler("mine", "entrypoint:dist", NoScheduler());
        (void)r.AddScheduler("slurm", "entrypoint:dist", NoScheduler());
      },
      [&](PluginType t, std::string_view name) { return may && t == PluginType::kScheduler && name != "local_cwd"; });
  EXPECT_TRUE(reg.Scheduler("slurm").has_value());
  EXPECT_EQ(reg.DefaultScheduler(), DefaultSchedulerName());
  EXPECT_EQ(asked, 0);  // nothing may shadow: the built-in answers, no discovery
  may = true;
  EXPECT_TRUE(reg.Scheduler("local_cwd").has_value());
  EXPECT_EQ(asked, 0);  // the provider has no `local_cwd`
  EXPECT_TRUE(reg.Scheduler("slurm").has_value());
  EXPECT_EQ(asked, 1);
  std::vector<std::string> sources;
  for (const PluginInfo& p : reg.Info(PluginType::kScheduler)) sources.push_back(p.name + "=" + p.source);
  // Each plugin in its registration order, the one named as a built-in included.
  EXPECT_THAT(sources, ElementsAre("mine=entrypoint:dist", "slurm=entrypoint:dist", "local_cwd=builtin"));
  EXPECT_EQ(reg.DefaultScheduler(), "mine");  // the first plugin
  EXPECT_THAT(reg.Errors(), IsEmpty());       // a plugin replacing a built-in is no error
  EXPECT_EQ(asked, 1);
  // The plugins gone (Python's registry().clear() after an uninstall): the built-in is back, in
  // its place among the built-ins.
  offer = false;
  reg.ForgetProvider("python", {"entrypoint:"});
  sources.clear();
  for (const PluginInfo& p : reg.Info(PluginType::kScheduler)) sources.push_back(p.name + "=" + p.source);
  EXPECT_THAT(sources, ElementsAre("local_cwd=builtin", "slurm=builtin"));
  EXPECT_EQ(reg.DefaultScheduler(), "local_cwd");
}

TEST(PythonPluginHintsTest, EntryPointNamesReadOneGroup) {
  EXPECT_THAT(EntryPointNames("[console_scripts]\nx = a:b\n\n[torchx.schedulers]\n# a comment\nsky = m:f\n"
                              " lepton=m:g \n[torchx.schedulers.extra]\nno = m:h\n",
                              "torchx.schedulers"),
              ElementsAre("sky", "lepton"));
  EXPECT_THAT(EntryPointNames("", "torchx.schedulers"), IsEmpty());
}

TEST(PythonPluginHintsTest, ScanReadsDistributionsAndPluginPackages) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("torchx-hints-" + std::to_string(::getpid()));
  fs::create_directories(dir / "sky-1.0.dist-info");
  fs::create_directories(dir / "old.egg-info");
  std::ofstream(dir / "sky-1.0.dist-info" / "entry_points.txt") << "[torchx.schedulers]\nsky = m:f\n";
  std::ofstream(dir / "old.egg-info" / "entry_points.txt") << "[torchx.schedulers]\nold = m:f\n";
  PythonPluginHints hints = ScanPythonPluginHints({dir.string(), (dir / "missing").string()}, true);
  EXPECT_THAT(hints.scheduler_entry_points, ElementsAre("old", "sky"));
  EXPECT_FALSE(hints.plugin_packages);
  EXPECT_TRUE(hints.MayHaveScheduler("sky"));
  EXPECT_FALSE(hints.MayHaveScheduler("local_cwd"));
  EXPECT_TRUE(hints.MayHaveScheduler(""));
  EXPECT_THAT(ScanPythonPluginHints({dir.string()}, false).scheduler_entry_points, IsEmpty());
  fs::create_directories(dir / "torchx_plugins" / "schedulers");
  hints = ScanPythonPluginHints({dir.string()}, false);
  EXPECT_TRUE(hints.plugin_packages && hints.MayHaveScheduler("local_cwd"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace torchx::plugins
