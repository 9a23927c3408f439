#include "container_engine/workspace_image.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "container_engine/build_context.h"
#include "torchx/specs/app_def.h"

namespace torchx::container_engine {
namespace {

using Json = nlohmann::json;

TEST(BuildContext, TheWorkspacesDockerfileIsSentWhateverDockerignoreSays) {
  char tmpl[] = "/tmp/torchx-ctx-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::filesystem::path ws(tmpl);
  std::ofstream(ws / "Dockerfile.torchx") << "ARG IMAGE\nFROM $IMAGE\n";
  std::ofstream(ws / "data.log") << "left out\n";
  std::ofstream(ws / ".dockerignore") << "*\n!.dockerignore\n";
  auto ctx = MakeBuildContext(ws.string(), "busybox");
  std::filesystem::remove_all(ws);
  ASSERT_TRUE(ctx.has_value()) << ctx.error().message();
  EXPECT_EQ(ctx->dockerfile, "Dockerfile.torchx");
  EXPECT_NE(ctx->tar.find("Dockerfile.torchx"), std::string::npos);
  EXPECT_NE(ctx->tar.find("FROM $IMAGE"), std::string::npos);  // the workspace's own, not the default
  EXPECT_EQ(ctx->tar.find("data.log"), std::string::npos);
}

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

}  // namespace
}  // namespace torchx::container_engine
