#include "torchx/components/declarative.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::components {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kTrain = R"(
description: |
  Trains a model.
  Longer description here.
params:
  script: {help: the training script}
  lr: {type: float, default: 0.1, help: learning rate}
  replicas: {type: int, default: 2}
  debug: {type: bool, default: false}
  tags: {type: list, optional: true}
  env: {type: dict, default: {A: "1"}}
  image: {default: "0.10"}
varargs: {name: args, help: passed to the script}
app:
  name: train
  roles:
    - name: trainer
      image: "{{ image }}"
      entrypoint: python
      args: ["{{ script }}", "--lr={{ lr }}", "--debug={{debug}}", "{{ tags }}", "{{ args }}"]
      env: "{{ env }}"
      num_replicas: "{{ replicas }}"
      resource: cpu.small
)";

Result<specs::AppDef> Materialize(const Component& c, const std::vector<std::string>& argv,
                                  const ConfigDefaults& cfg = {}) {
  TORCHX_ASSIGN_OR_RETURN(auto args, ParseComponentArgs(c.spec(), argv, cfg));
  return BuildAppDef(c, args);
}

TEST(DeclarativeComponent, DeclaresParametersFromTheFile) {
  auto c = ParseDeclarativeComponent(kTrain, "train.yaml");
  ASSERT_THAT(c, IsOk());
  const ComponentSpec& spec = (*c)->spec();
  EXPECT_EQ(spec.name, "train.yaml");
  EXPECT_EQ(spec.summary, "Trains a model.");
  EXPECT_EQ(spec.description, "Longer description here.");
  ASSERT_EQ(spec.params.size(), 7u);
  EXPECT_EQ(spec.params[0].name, "script");
  EXPECT_FALSE(spec.params[0].default_value.has_value());
  EXPECT_EQ(spec.params[1].type, ParamType::kFloat);
  EXPECT_TRUE(spec.params[4].optional);
  EXPECT_EQ(spec.varargs->name, "args");
  EXPECT_THAT(ComponentHelp(spec), HasSubstr("--lr float\n        learning rate (default: 0.1)"));
}

TEST(DeclarativeComponent, TemplatesTypedValuesAndSplicesLists) {
  auto c = ParseDeclarativeComponent(kTrain, "train.yaml");
  ASSERT_THAT(c, IsOk());
  auto app =
      Materialize(**c, {"--script", "t.py", "--lr", "0.5", "--replicas", "3", "--tags", "a,b", "--", "x", "y z"});
  ASSERT_THAT(app, IsOk());
  const specs::Role& r = app->roles[0];
  EXPECT_EQ(r.num_replicas, 3);
  EXPECT_EQ(r.image, "0.10");  // a string stays the text it was
  EXPECT_THAT(r.args, ElementsAre("t.py", "--lr=0.5", "--debug=false", "a", "b", "x", "y z"));
  EXPECT_EQ(r.env.at("A"), "1");
  EXPECT_EQ(r.resource.memMB, 2048);
}

TEST(DeclarativeComponent, NoneDropsListItemAndConfigDefaultsApply) {
  auto c = ParseDeclarativeComponent(kTrain, "train.yaml");
  auto app = Materialize(**c, {}, {{"script", "cfg.py"}, {"debug", "True"}});
  ASSERT_THAT(app, IsOk());
  EXPECT_THAT(app->roles[0].args, ElementsAre("cfg.py", "--lr=0.1", "--debug=true"));
  EXPECT_EQ(app->roles[0].num_replicas, 2);
}

TEST(DeclarativeComponent, MissingRequiredParameter) {
  auto c = ParseDeclarativeComponent(kTrain, "train.yaml");
  EXPECT_THAT(Materialize(**c, {}), StatusIs(StatusCode::kInvalidArgument, HasSubstr("required: --script")));
}

TEST(DeclarativeComponent, TemplateProducingInvalidAppDefIsNamed) {
  auto c = ParseDeclarativeComponent(kTrain, "train.yaml");
  EXPECT_THAT(Materialize(**c, {"--script", "t", "--replicas", "0"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("num_replicas: must be >= 1")));
}

TEST(DeclarativeComponent, BadFiles) {
  auto err = [](const std::string& yaml) { return ParseDeclarativeComponent(yaml, "f.yaml").status(); };
  EXPECT_THAT(err("app: [unclosed"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("f.yaml")));
  EXPECT_THAT(err("params: {}\n"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("app: missing")));
  EXPECT_THAT(err("parms: {}\napp: {name: a}\n"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("f.yaml.parms: unknown field. Did you mean `params`?")));
  EXPECT_THAT(err("params: {x: {type: decimal}}\napp: {name: a}\n"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("params.x: type: invalid parameter type 'decimal', must be one of [str, int, float")));
  EXPECT_THAT(err("params: {x: {type: int, default: abc}}\napp: {name: a}\n"),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("params.x.default:"), HasSubstr("invalid int value 'abc'"))));
  EXPECT_THAT(err("params: {x: {helpp: a}}\napp: {name: a}\n"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("Did you mean `help`?")));
  EXPECT_THAT(
      err("params: {lr: {}}\napp: {name: \"{{ lrr }}\"}\n"),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("app.name: unknown parameter `{{ lrr }}`. Did you mean `lr`?")));
  EXPECT_THAT(err("params: {x: {default: ~}}\napp: {name: a}\n"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("null default needs `optional: true`")));
  EXPECT_THAT(err("params: {help: {}}\napp: {name: a}\n"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("not a valid parameter name")));
}

TEST(DeclarativeComponent, LoadsFromFileAndDetectsKind) {
  torchx::testing::ScopedTempDir dir;
  std::string comp = dir.Write("train.yaml", kTrain);
  std::string spec = dir.Write("app.yaml", "name: a\nroles: []\n");
  EXPECT_TRUE(IsDeclarativeComponentFile(comp));
  EXPECT_FALSE(IsDeclarativeComponentFile(spec));
  EXPECT_FALSE(IsDeclarativeComponentFile(dir.path() + "/missing.yaml"));
  auto c = LoadDeclarativeComponent(comp);
  ASSERT_THAT(c, IsOk());
  EXPECT_EQ((*c)->origin(), comp);
  EXPECT_THAT(LoadDeclarativeComponent(dir.path() + "/missing.yaml"),
              StatusIs(StatusCode::kNotFound, HasSubstr("cannot be read")));
}

}  // namespace
}  // namespace torchx::components
