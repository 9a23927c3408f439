// The composite kind loader ($TORCHX_COMPOSITE_KINDS) as users meet it: a path that is not there,
// a library that is no kind's module, and a kind whose name a scheduler already has are refused,
// each with its reason, which is said where an unknown kind is; the kinds linked in still plan.
#include <cstdlib>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"
#include "torchx/composite/kind_module.h"
#include "torchx/composite_kinds.h"

namespace torchx {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Modules are read once per process: every case is in this one list (the ring's own module last),
// set before any test reads it.
void UseTheModules() {
  ::setenv(TORCHX_COMPOSITE_KINDS_ENV, "/nonexistent/torchx_kind_gone.so:" NOT_A_KIND_MODULE ":" RING_MODULE, 1);
}

Result<std::unique_ptr<schedulers::Scheduler>> NotBuilt(const schedulers::SchedulerContext&) {
  return UnavailableError("not built in this test");
}

TEST(KindModulesTest, EveryModuleThatCannotServeIsRefusedWithItsReason) {
  UseTheModules();
  plugins::PluginRegistry registry;
  // A scheduler named as the ring was there first: the ring's handles would reach it.
  ASSERT_THAT(registry.AddScheduler("ring", "builtin", NotBuilt), IsOk());
  RegisterCompositeKinds(registry);

  EXPECT_THAT(CompositeKindNames(), AllOf(Contains("pipeline"), Contains("sweep"), Contains("managed")));
  EXPECT_THAT(CompositeKindNames(), Not(Contains("ring")));
  EXPECT_THAT(registry.CompositeSchedulers(), Not(Contains("ring")));
  std::vector<std::string> kinds_of_errors;
  for (const plugins::PluginError& e : registry.Errors()) kinds_of_errors.push_back(e.kind);
  EXPECT_THAT(kinds_of_errors, AllOf(Contains("dlopen"), Contains("missing_symbol"), Contains("duplicate")));

  runner::Runner runner(registry);
  composite::LaunchRequest request;
  request.kind = "ring";
  request.document = "links: 1";
  request.origin = "ring.yaml";
  EXPECT_THAT(
      PlanComposite(runner, config::TorchxConfig(), request),
      StatusIs(StatusCode::kInvalidArgument,
               AllOf(HasSubstr("composite kind `ring`: unknown"), HasSubstr("the kinds are: pipeline"),
                     HasSubstr("torchx_kind_gone.so not loaded"), HasSubstr("no torchx_composite_kind_v1 in it"),
                     HasSubstr("a module's kind `ring` is not used: a scheduler of that name was there first"))));
  // The driver of such a kind is not started either: it says why and exits 2.
  EXPECT_EQ(RunCompositeDriver(registry, "ring", "/nonexistent", "ring-1", -1), 2);
}

TEST(KindModulesTest, AKindWhoseNameAPluginTakesLaterIsNeitherPlannedNorDriven) {
  UseTheModules();
  plugins::PluginRegistry registry;
  // A plugin scheduler found on first lookup (as Python entry points are), named as a kind: a
  // plugin wins a built-in's name (TorchX #1448), so `sweep` handles would reach it.
  registry.AddProvider(
      "test-plugins",
      [](plugins::PluginType type, plugins::PluginRegistry& r) {
        if (type == plugins::PluginType::kScheduler) (void)r.AddScheduler("sweep", "python:test_plugin", NotBuilt);
      },
      [](plugins::PluginType type, std::string_view name) {
        return type == plugins::PluginType::kScheduler && (name.empty() || name == "sweep");
      });
  RegisterCompositeKinds(registry);

  runner::Runner runner(registry);
  composite::LaunchRequest request;
  request.kind = "sweep";
  request.document = "component: utils.echo";
  request.origin = "sweep.yaml";
  EXPECT_THAT(PlanComposite(runner, config::TorchxConfig(), request),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("composite kind `sweep`: its name is another scheduler's now (a plugin's)")));
  EXPECT_EQ(RunCompositeDriver(registry, "sweep", "/nonexistent", "sweep-1", -1), 2);
  // The kinds nobody took still plan (this one fails on its document, past the check).
  request.kind = "pipeline";
  request.document = "steps: 1";
  EXPECT_THAT(PlanComposite(runner, config::TorchxConfig(), request),
              StatusIs(StatusCode::kInvalidArgument, Not(HasSubstr("another scheduler's"))));
}

}  // namespace
}  // namespace torchx
