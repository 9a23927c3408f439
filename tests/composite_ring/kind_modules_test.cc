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

TEST(KindModulesTest, EveryModuleThatCannotServeIsRefusedWithItsReason) {
  // Read once per process: every case is in this one list (the ring's own module last).
  ::setenv(TORCHX_COMPOSITE_KINDS_ENV, "/nonexistent/torchx_kind_gone.so:" NOT_A_KIND_MODULE ":" RING_MODULE, 1);
  plugins::PluginRegistry registry;
  // A scheduler named as the ring was there first: the ring's handles would reach it.
  ASSERT_THAT(
      registry.AddScheduler("ring", "builtin",
                            [](const schedulers::SchedulerContext&) -> Result<std::unique_ptr<schedulers::Scheduler>> {
                              return UnavailableError("not built in this test");
                            }),
      IsOk());
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

}  // namespace
}  // namespace torchx
