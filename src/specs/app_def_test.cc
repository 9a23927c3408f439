#include "torchx/specs/app_def.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::specs {
namespace {

using ::testing::HasSubstr;

Role ValidRole(std::string name = "trainer") {
  Role r;
  r.name = std::move(name);
  r.image = "img";
  r.entrypoint = "python";
  r.resource.cpu = 1;
  r.resource.gpu = 0;
  r.resource.memMB = 1024;
  return r;
}

AppDef ValidApp() { return AppDef{"app", {ValidRole()}, {}}; }

TEST(Role, DefaultsMatchTorchX) {
  Role r;
  EXPECT_EQ(r.entrypoint, "<MISSING>");
  EXPECT_EQ(r.num_replicas, 1);
  EXPECT_EQ(r.min_replicas, std::nullopt);
  EXPECT_EQ(r.max_retries, 0);
  EXPECT_EQ(r.retry_policy, RetryPolicy::kApplication);
  EXPECT_TRUE(IsNullResource(r.resource));
  EXPECT_TRUE(r.args.empty());
  EXPECT_TRUE(r.env.empty());
  EXPECT_TRUE(r.port_map.empty());
  EXPECT_TRUE(r.metadata.empty());
  EXPECT_TRUE(r.mounts.empty());
}

TEST(RetryPolicy, ParsesNamesAndListsChoicesOnError) {
  EXPECT_THAT(ParseRetryPolicy("REPLICA"), IsOkAndHolds(RetryPolicy::kReplica));
  EXPECT_THAT(ParseRetryPolicy("ROLE"), IsOkAndHolds(RetryPolicy::kRole));
  EXPECT_THAT(ParseRetryPolicy("APPLICATION"), IsOkAndHolds(RetryPolicy::kApplication));
  EXPECT_THAT(ParseRetryPolicy("replica"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("retry_policy: invalid value 'replica', must be one of [REPLICA, "
                                 "ROLE, APPLICATION]")));
}

TEST(ValidateAppDef, AcceptsValidApp) { EXPECT_THAT(ValidateAppDef(ValidApp()), IsOk()); }

TEST(ValidateAppDef, RejectsNoRoles) {
  AppDef app{"app", {}, {}};
  EXPECT_THAT(ValidateAppDef(app), StatusIs(StatusCode::kInvalidArgument, HasSubstr("no roles")));
}

TEST(ValidateAppDef, RejectsBadNames) {
  AppDef app = ValidApp();
  app.name = "";
  EXPECT_THAT(ValidateAppDef(app), StatusIs(StatusCode::kInvalidArgument, "app name: must not be empty"));
  app.name = "a/b";
  EXPECT_THAT(ValidateAppDef(app), StatusIs(StatusCode::kInvalidArgument, HasSubstr("must not contain '/'")));
  app.name = "ok";
  app.roles[0].name = "has space";
  EXPECT_THAT(ValidateAppDef(app), StatusIs(StatusCode::kInvalidArgument, HasSubstr("role name")));
  app.roles[0].name = "..";
  EXPECT_THAT(ValidateAppDef(app), StatusIs(StatusCode::kInvalidArgument, HasSubstr("not a valid name")));
}

TEST(ValidateAppDef, RejectsDuplicateRoleNames) {
  AppDef app{"app", {ValidRole("a"), ValidRole("a")}, {}};
  EXPECT_THAT(ValidateAppDef(app), StatusIs(StatusCode::kInvalidArgument, "role 'a': name: duplicate role name"));
}

TEST(ValidateAppDef, RejectsMissingEntrypoint) {
  AppDef app = ValidApp();
  app.roles[0].entrypoint = std::string(kMissing);
  EXPECT_THAT(ValidateAppDef(app),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("role 'trainer': entrypoint: missing")));
}

TEST(ValidateAppDef, RejectsReplicaCounts) {
  AppDef app = ValidApp();
  app.roles[0].num_replicas = 0;
  EXPECT_THAT(ValidateAppDef(app),
              StatusIs(StatusCode::kInvalidArgument, "role 'trainer': num_replicas: must be >= 1, got 0"));
  app.roles[0].num_replicas = 2;
  app.roles[0].min_replicas = 3;
  EXPECT_THAT(ValidateAppDef(app), StatusIs(StatusCode::kInvalidArgument,
                                            HasSubstr("min_replicas: must be between 0 and num_replicas (2), got 3")));
  app.roles[0].min_replicas = 1;
  EXPECT_THAT(ValidateAppDef(app), IsOk());
  app.roles[0].max_retries = -1;
  EXPECT_THAT(ValidateAppDef(app), StatusIs(StatusCode::kInvalidArgument, HasSubstr("max_retries")));
}

TEST(ValidateAppDef, LeavesNullResourcesToTheBackEndAndRejectsNegativeOnes) {
  AppDef app = ValidApp();
  app.roles[0].resource = NullResource();
  EXPECT_THAT(ValidateAppDef(app), IsOk());
  EXPECT_THAT(ValidateResources(app), StatusIs(StatusCode::kInvalidArgument,
                                               "role 'trainer': resource: no resource for role (set "
                                               "cpu/gpu/memMB or a named resource)"));
  app.roles[0].resource = Resource{2, -1, 10, {}, {}, {}};
  EXPECT_THAT(ValidateAppDef(app),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("role 'trainer': resource.gpu: missing (-1, not set)")));
  app.roles[0].resource = Resource{2, -2, 10, {}, {}, {}};
  EXPECT_THAT(ValidateAppDef(app),
              StatusIs(StatusCode::kInvalidArgument, "role 'trainer': resource.gpu: must be >= 0, got -2"));
  app.roles[0].resource = Resource{2, 0, 10, {}, {{"efa", -2}}, {}};
  EXPECT_THAT(ValidateAppDef(app), StatusIs(StatusCode::kInvalidArgument, HasSubstr("resource.devices[efa]")));
}

TEST(ValidateAppDef, RejectsBadPorts) {
  AppDef app = ValidApp();
  app.roles[0].port_map["http"] = 70000;
  EXPECT_THAT(ValidateAppDef(app),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("port_map[http]: must be in 0..65535")));
}

}  // namespace
}  // namespace torchx::specs
