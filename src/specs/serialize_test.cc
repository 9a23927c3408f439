#include "torchx/specs/serialize.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::specs {
namespace {

using ::testing::HasSubstr;

AppDef FullApp() {
  Role r;
  r.name = "trainer";
  r.image = "ghcr.io/pytorch/torchx:0.8";
  r.entrypoint = "torchrun";
  r.args = {"--nnodes", "2", "train.py", "--lr", "0.10", "true", "", "${app_id}"};
  r.env = {{"A", "1"}, {"LOGLEVEL", "INFO"}};
  r.num_replicas = 4;
  r.min_replicas = 2;
  r.max_retries = 3;
  r.retry_policy = RetryPolicy::kReplica;
  r.resource.cpu = 8;
  r.resource.gpu = 1;
  r.resource.memMB = 32768;
  r.resource.capabilities["node.kubernetes.io/instance-type"] = "p3.2xlarge";
  r.resource.capabilities["weird"] = Value::List{1, 2.5, true, nullptr, "x"};
  r.resource.devices["vpc.amazonaws.com/efa"] = 4;
  r.resource.tags["origin"] = Value::Map{{"fraction", 0.5}};
  r.port_map = {{"tb", 6006}};
  r.metadata["kubernetes.labels"] = Value::Map{{"team", "ml"}, {"n", 3}};
  r.mounts = {BindMount{"/a", "/b", true}, VolumeMount{"pvc", "/c", false},
              DeviceMount{"/dev/fuse", "/dev/fuse", "rw"}};
  Role second;
  second.name = "reader";
  second.entrypoint = "cat";
  second.resource = Resource{1, 0, 512, {}, {}, {}};
  return AppDef{"my-app", {r, second}, {{"owner", "me"}}};
}

TEST(AppDefJson, RoundTripsExactly) {
  AppDef app = FullApp();
  std::string json = AppDefToJson(app);
  auto back = AppDefFromJson(json);
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(*back, app);
  EXPECT_EQ(AppDefToJson(*back), json);
  EXPECT_EQ(AppDefToJson(*AppDefFromJson(AppDefToJson(app, -1))), json);
}

TEST(AppDefJson, MissingFieldsTakeDefaults) {
  auto app = AppDefFromJson(R"({"name": "a", "roles": [{"name": "r", "entrypoint": "echo"}]})");
  ASSERT_THAT(app, IsOk());
  const Role& r = app->roles[0];
  EXPECT_EQ(r.num_replicas, 1);
  EXPECT_EQ(r.retry_policy, RetryPolicy::kApplication);
  EXPECT_TRUE(IsNullResource(r.resource));
  EXPECT_EQ(r.image, "");
}

TEST(AppDefJson, NamedResourceString) {
  auto app = AppDefFromJson(R"({"name": "a", "roles": [{"name": "r", "resource": "gpu.small"}]})");
  ASSERT_THAT(app, IsOk());
  EXPECT_EQ(app->roles[0].resource.gpu, 1);
  EXPECT_THAT(
      AppDefFromJson(R"({"name": "a", "roles": [{"name": "r", "resource": "gpu.smal"}]})"),
      StatusIs(StatusCode::kInvalidArgument,
               HasSubstr("roles[0].resource: named resource: unknown name `gpu.smal`. Did you mean `gpu.small`?")));
}

TEST(AppDefJson, ErrorsNameThePath) {
  EXPECT_THAT(AppDefFromJson("{"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("AppDef JSON")));
  EXPECT_THAT(AppDefFromJson("[]"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("AppDef: expected an object")));
  EXPECT_THAT(AppDefFromJson(R"({"name": "a", "rolez": []})"),
              StatusIs(StatusCode::kInvalidArgument, "rolez: unknown field. Did you mean `roles`?"));
  EXPECT_THAT(AppDefFromJson(R"({"name": "a", "roles": [{"name": "r", "args": ["x", 1]}]})"),
              StatusIs(StatusCode::kInvalidArgument, "roles[0].args[1]: expected a string, got integer 1"));
  EXPECT_THAT(AppDefFromJson(R"({"roles": [{"num_replicas": "2"}]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("roles[0].num_replicas: expected an integer")));
  EXPECT_THAT(AppDefFromJson(R"({"roles": [{"num_replicas": 99999999999}]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("out of range")));
  EXPECT_THAT(AppDefFromJson(R"({"roles": [{"retry_policy": "ALL"}]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("roles[0]: retry_policy: invalid value 'ALL'")));
  EXPECT_THAT(AppDefFromJson(R"({"roles": [{"mounts": [{"type": "nfs"}]}]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("roles[0].mounts[0].type: invalid mount type 'nfs'")));
  EXPECT_THAT(AppDefFromJson(R"({"roles": [{"mounts": [{"type": "bind", "src": "/a"}]}]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("roles[0].mounts[0].src: unknown field")));
  EXPECT_THAT(
      AppDefFromJson(R"({"roles": [{"resource": {"cpu": 1, "mem": 2}}]})"),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("roles[0].resource.mem: unknown field. Did you mean `memMB`?")));
  // Given in part, a resource names what is missing (read alone, it would be -1: "must be >= 0").
  EXPECT_THAT(AppDefFromJson(R"({"roles": [{"resource": {"cpu": 2}}]})"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("roles[0].resource.gpu: missing; a resource gives all of cpu, gpu and memMB")));
  EXPECT_THAT(AppDefFromJson(R"({"roles": [{"resource": {"cpu": 2, "gpu": 0}}]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("roles[0].resource.memMB: missing")));
  EXPECT_THAT(AppDefFromJson(R"({"roles": [{"name": "a", "entrypoint": "x", "resource": {"tags": {}}}]})"), IsOk());
  EXPECT_THAT(AppDefFromYaml("roles:\n- name: a\n  entrypoint: x\n  resource: {cpu: 2, memMB: 64}\n"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("roles[0].resource.gpu: missing")));
  EXPECT_THAT(AppDefFromJson(R"({"roles": [{"env": {"A": 1}}]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("roles[0].env[A]: expected a string")));
}

TEST(AppDefYaml, RoundTripsExactly) {
  AppDef app = FullApp();
  std::string yaml = AppDefToYaml(app);
  auto back = AppDefFromYaml(yaml);
  ASSERT_THAT(back, IsOk()) << yaml;
  EXPECT_EQ(*back, app) << yaml;
  EXPECT_EQ(AppDefToYaml(*back), yaml);
}

TEST(AppDefYaml, ControlCharactersSurviveTheRoundTrip) {
  // Found by the appdef_yaml fuzzer: a plain scalar ending in "\r" lost it when read back.
  AppDef app = FullApp();
  app.name = "echo \r\r6 \r";
  app.roles[0].args = {"a\tb", "\x01", "line\nbreak\r\n", "trailing\r"};
  std::string yaml = AppDefToYaml(app);
  auto back = AppDefFromYaml(yaml);
  ASSERT_THAT(back, IsOk()) << yaml;
  EXPECT_EQ(*back, app) << yaml;
}

TEST(AppDefYaml, HandWrittenSpecWithPlainScalars) {
  auto app = AppDefFromYaml(R"(
name: train
roles:
  - name: trainer
    entrypoint: python
    args: [-m, train, --lr, 0.1, --epochs, 3, --flag, true]
    env: {SEED: 42}
    resource: cpu.small
    metadata: {count: 3, ratio: 0.5, on: true, none: ~, s: "3"}
)");
  ASSERT_THAT(app, IsOk());
  const Role& r = app->roles[0];
  EXPECT_EQ(r.args, (std::vector<std::string>{"-m", "train", "--lr", "0.1", "--epochs", "3", "--flag", "true"}));
  EXPECT_EQ(r.env.at("SEED"), "42");
  EXPECT_EQ(r.resource.memMB, 2048);
  EXPECT_EQ(r.metadata.at("count").as_int(), 3);
  EXPECT_EQ(r.metadata.at("ratio").as_double(), 0.5);
  EXPECT_TRUE(r.metadata.at("on").as_bool());
  EXPECT_TRUE(r.metadata.at("none").is_null());
  EXPECT_EQ(r.metadata.at("s").as_string(), "3");
}

TEST(AppDefYaml, Errors) {
  EXPECT_THAT(AppDefFromYaml("name: [unclosed"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("AppDef YAML")));
  EXPECT_THAT(AppDefFromYaml("- a\n- b\n"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("expected an object")));
  EXPECT_THAT(AppDefFromYaml("name: a\nroles:\n  - name: r\n    num_replicas: two\n"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("roles[0].num_replicas: expected an integer")));
}

TEST(AppDefFromFile, MissingFileIsNotFound) {
  EXPECT_THAT(AppDefFromFile("/nonexistent/app.json"),
              StatusIs(StatusCode::kNotFound, HasSubstr("/nonexistent/app.json")));
}

}  // namespace
}  // namespace torchx::specs

namespace torchx::specs {
namespace {

// Found by appdef_yaml_fuzz: a non-UTF-8 byte in a YAML string made JSON output throw.
TEST(AppDefYaml, RejectsInvalidUtf8NamingTheField) {
  EXPECT_THAT(AppDefFromYaml("name: a\nroles:\n  - name: r\n    args: [\"ok\", \"b\xff\"]\n"),
              StatusIs(StatusCode::kInvalidArgument, "roles[0].args[1]: not valid UTF-8 text"));
}

// Found by the long fuzzing run: a name holding U+FFFF read in, but the YAML emitter wrote it as
// U+FFFD, so the AppDef did not read back as written. Unicode's noncharacters are refused at the
// reader, raw or escaped, naming the field; the BOM and characters beyond the BMP are fine.
TEST(AppDefYaml, RefusesUnicodeNoncharactersAndRoundTripsTheRest) {
  for (const char* text : {"name: \"a\xEF\xBF\xBF\"\nroles: []\n", "name: \"a\\uFFFF\"\nroles: []\n",
                           "name: \"a\\uFDD0\"\nroles: []\n", "name: \"a\\U0001FFFE\"\nroles: []\n"}) {
    EXPECT_THAT(AppDefFromYaml(text),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("name: holds the Unicode noncharacter U+")))
        << text;
  }
  EXPECT_THAT(AppDefFromYaml("name: a\nroles:\n  - name: r\n    env: {\"k\\uFFFE\": v}\n"),
              StatusIs(StatusCode::kInvalidArgument,
                       "roles[0].env: key: holds the Unicode noncharacter U+FFFE, "
                       "which YAML text cannot carry"));
  auto app = AppDefFromYaml("name: \"a\\uFEFFb\\U0001F600c\\uFFFD\"\nroles: []\n");
  ASSERT_THAT(app, IsOk());
  EXPECT_EQ(app->name,
            "a\xEF\xBB\xBF"
            "b\xF0\x9F\x98\x80"
            "c\xEF\xBF\xBD");
  auto back = AppDefFromYaml(AppDefToYaml(*app));
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ(back->name, app->name);
}

TEST(AppDefJson, WritingNonUtf8FromCodeDoesNotThrow) {
  AppDef app{"a", {Role{}}, {}};
  app.roles[0].args = {"b\xff"};
  EXPECT_NE(AppDefToJson(app).find("b\xEF\xBF\xBD"), std::string::npos);
}

}  // namespace
}  // namespace torchx::specs

namespace torchx::specs {
namespace {

// Found by appdef_json_fuzz: a number too large for a double threw out_of_range, not parse_error.
TEST(AppDefJson, NumberOverflowIsAnError) {
  EXPECT_THAT(AppDefFromJson("5e99999"),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("number overflow")));
}

}  // namespace
}  // namespace torchx::specs

namespace torchx::specs {
namespace {

// The reader recurses into metadata values: nesting is bounded so input cannot overflow the stack.
TEST(AppDefJson, DeepNestingIsAnErrorNotACrash) {
  std::string deep = R"({"name": "a", "roles": [{"name": "r", "metadata": {"k": )" + std::string(100000, '[') +
                     std::string(100000, ']') + "}}]}";
  EXPECT_THAT(AppDefFromJson(deep),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("nested deeper than 128")));
  std::string ok = R"({"name": "a", "roles": [{"name": "r", "metadata": {"k": )" + std::string(50, '[') +
                   std::string(50, ']') + "}}]}";
  EXPECT_THAT(AppDefFromJson(ok), IsOk());
}

TEST(AppDefYaml, DeepNestingIsAnErrorNotACrash) {
  std::string deep =
      "name: a\nroles:\n  - name: r\n    metadata: {k: " + std::string(300, '[') + std::string(300, ']') + "}\n";
  auto r = AppDefFromYaml(deep);
  EXPECT_THAT(r, StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("AppDef YAML")));
}

}  // namespace
}  // namespace torchx::specs
