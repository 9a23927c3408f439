#include "schedulers/docker/workspace_image.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "torchx/specs/app_def.h"
#include "schedulers/kubernetes/kubernetes_scheduler.h"

namespace torchx::schedulers::docker {
namespace {

using Json = nlohmann::json;

TEST(RegistryHost, FirstPathPartWhenItNamesAHostElseDockerHub) {
  EXPECT_EQ(RegistryHostOf("registry.example.com/team/trainer"), "registry.example.com");
  EXPECT_EQ(RegistryHostOf("127.0.0.1:5000/torchx/ws"), "127.0.0.1:5000");
  EXPECT_EQ(RegistryHostOf("localhost/ws"), "localhost");
  EXPECT_EQ(RegistryHostOf("team/trainer"), "docker.io");
  EXPECT_EQ(RegistryHostOf("trainer"), "docker.io");
}

TEST(RegistryAuth, ReadsDockerLoginsAuthsEntryForTheRepositorysRegistry) {
  // base64("alice:s3:cret") - a password may hold colons.
  std::string config = R"({"auths": {
      "https://index.docker.io/v1/": {"auth": "Ym9iOmh1Yg=="},
      "registry.example.com": {"auth": "YWxpY2U6czM6Y3JldA=="},
      "https://tok.example.com/v2/": {"identitytoken": "tkn"},
      "plain.example.com": {"username": "u", "password": "p"}},
    "credsStore": "desktop"})";
  auto auth = [&](const char* repo) { return Json::parse(*RegistryAuthFor(repo, config)); };
  EXPECT_EQ(auth("registry.example.com/team/x"),
            Json({{"username", "alice"}, {"password", "s3:cret"}, {"serveraddress", "registry.example.com"}}));
  EXPECT_EQ(auth("team/x"),
            Json({{"username", "bob"}, {"password", "hub"}, {"serveraddress", "https://index.docker.io/v1/"}}));
  EXPECT_EQ(auth("tok.example.com/x"), Json({{"identitytoken", "tkn"}, {"serveraddress", "tok.example.com"}}));
  EXPECT_EQ(auth("plain.example.com/x"),
            Json({{"username", "u"}, {"password", "p"}, {"serveraddress", "plain.example.com"}}));
  EXPECT_EQ(auth("other.example.com/x"), Json::object());
  EXPECT_EQ(*RegistryAuthFor("x", "{}"), "{}");
}

TEST(RegistryAuth, MalformedConfigsAreErrorsNamingTheEntry) {
  EXPECT_FALSE(RegistryAuthFor("x", "not json").ok());
  EXPECT_FALSE(RegistryAuthFor("x", R"({"auths": []})").ok());
  auto bad = RegistryAuthFor("r.example.com/x", R"({"auths": {"r.example.com": {"auth": "bm9jb2xvbg=="}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message(), testing::HasSubstr("auths[\"r.example.com\"].auth"));
}

// The kubernetes back-end refuses a workspace it could not push before touching any engine.
TEST(KubernetesWorkspace, NeedsAValidImageRepoBeforeBuildingAnything) {
  auto sched = kubernetes::MakeKubernetesScheduler("test");
  specs::AppDef app;
  app.name = "ws";
  specs::Role role;
  role.name = "trainer";
  role.image = "busybox";
  role.entrypoint = "true";
  app.roles.push_back(role);
  auto missing = sched->BuildWorkspace("/nonexistent", app, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), testing::HasSubstr("image_repo"));
  for (const char* bad : {"Registry.example.com/Team", "r.example.com/x:tag", "r.example.com/x@sha256:00", "/x"}) {
    auto refused = sched->BuildWorkspace("/nonexistent", app, {{"image_repo", std::string(bad)}});
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.message(), testing::HasSubstr(bad));
  }
  EXPECT_EQ(app.roles[0].image, "busybox");  // nothing changed
}

}  // namespace
}  // namespace torchx::schedulers::docker
