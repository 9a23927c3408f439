#include "torchx/components/component.h"
#include "torchx/components/component_json.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "components/function_component.h"
#include "testing/component_source.h"
#include "testing/status_matchers.h"

namespace torchx::components {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace internal;

ComponentSpec TestSpec(bool with_varargs = true) {
  return ComponentSpec{
      "test.comp",
      "A test component.",
      "Longer text.",
      {Required("file", ParamType::kStr, "a file"), WithDefault("n", ParamType::kInt, 1, "a count"),
       WithDefault("ratio", ParamType::kFloat, 0.5, "a ratio"), WithDefault("flag", ParamType::kBool, false, "a flag"),
       OptionalNone("tags", ParamType::kListStr, "tags"), OptionalNone("env", ParamType::kDictStr, "env"),
       OptionalNone("m", ParamType::kStr, "module"), OptionalNone("h", ParamType::kStr, "host")},
      with_varargs ? std::optional<Param>(VarArgs("args", "program args")) : std::nullopt};
}

TEST(ParseComponentArgs, TypedValuesAndDefaults) {
  auto a = ParseComponentArgs(TestSpec(),
                              {"--file", "x.txt", "--n=3", "--flag", "TRUE", "--tags", "a, b,c", "--env", "A=1,B=2"});
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->Str("file"), "x.txt");
  EXPECT_EQ(a->Int("n"), 3);
  EXPECT_EQ(a->Float("ratio"), 0.5);
  EXPECT_TRUE(a->Bool("flag"));
  EXPECT_THAT(*a->OptList("tags"), ElementsAre("a", "b", "c"));
  EXPECT_EQ(a->OptDict("env")->at("B"), "2");
  EXPECT_EQ(a->OptStr("m"), std::nullopt);
  EXPECT_TRUE(a->varargs.empty());
}

TEST(ParseComponentArgs, SingleLetterNamesTakeOneDashAndHIsAParameter) {
  auto a = ParseComponentArgs(TestSpec(), {"--file", "f", "-m", "pkg.mod", "-h", "gpu.small"});
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->OptStr("m"), "pkg.mod");
  EXPECT_EQ(a->OptStr("h"), "gpu.small");
  EXPECT_FALSE(a->help_requested);
  EXPECT_THAT(ParseComponentArgs(TestSpec(), {"--file", "f", "--m", "x"}), IsOk());
  EXPECT_THAT(ParseComponentArgs(TestSpec(), {"-file", "f"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("unrecognized argument '-file'")));
}

TEST(ParseComponentArgs, VarargsTakeEverythingFromFirstPositional) {
  auto a = ParseComponentArgs(TestSpec(), {"--file", "f", "train.py", "--lr", "0.1", "--n", "2"});
  ASSERT_THAT(a, IsOk());
  EXPECT_THAT(a->varargs, ElementsAre("train.py", "--lr", "0.1", "--n", "2"));
  EXPECT_EQ(a->Int("n"), 1);
}

TEST(ParseComponentArgs, DoubleDashStartsVarargsAndIsDropped) {
  auto a = ParseComponentArgs(TestSpec(), {"--file", "f", "--", "--lr", "--", "x"});
  ASSERT_THAT(a, IsOk());
  EXPECT_THAT(a->varargs, ElementsAre("--lr", "--", "x"));
}

TEST(ParseComponentArgs, NegativeNumbersAreValuesAndPositionals) {
  auto a = ParseComponentArgs(TestSpec(), {"--file", "f", "--n", "-3", "-1"});
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->Int("n"), -3);
  EXPECT_THAT(a->varargs, ElementsAre("-1"));
}

TEST(ParseComponentArgs, Errors) {
  auto spec = TestSpec();
  EXPECT_THAT(ParseComponentArgs(spec, {}),
              StatusIs(StatusCode::kInvalidArgument, "test.comp: the following arguments are required: --file"));
  EXPECT_THAT(ParseComponentArgs(spec, {"--file", "a", "--file", "b"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("repeated command line argument --file")));
  EXPECT_THAT(ParseComponentArgs(spec, {"--file", "a", "--n", "x"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("--n: invalid int value 'x'")));
  EXPECT_THAT(
      ParseComponentArgs(spec, {"--file", "a", "--n", "99999999999"}),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("-n/--n: invalid int value '99999999999', out of range")));
  EXPECT_THAT(ComponentArgsFromJson(spec, R"({"file": "a", "n": 99999999999})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("out of range")));
  EXPECT_THAT(ParseComponentArgs(spec, {"--file", "a", "--ratio", "1.5.2"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("--ratio: invalid float value")));
  EXPECT_THAT(ParseComponentArgs(spec, {"--file"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("argument --file: expected one argument")));
  EXPECT_THAT(ParseComponentArgs(spec, {"--file", "a", "--nn", "2"}),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("unrecognized argument '--nn'. Did you mean `-n`?"), HasSubstr("after `--`"))));
  EXPECT_THAT(ParseComponentArgs(spec, {"--file", "a", "--env", "novalue"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("--env: invalid dict value 'novalue'")));
  EXPECT_THAT(ParseComponentArgs(TestSpec(false), {"--file", "a", "extra"}),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("unrecognized argument 'extra' (test.comp takes no positional")));
}

TEST(ParseComponentArgs, OptionalEmptyStringIsNone) {
  auto a = ParseComponentArgs(TestSpec(), {"--file", "f", "--tags", ""});
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->OptList("tags"), std::nullopt);
}

TEST(ParseComponentArgs, ConfigDefaultsMakeRequiredOptionalAndLoseToCli) {
  ConfigDefaults cfg = {{"file", "from-config"}, {"n", "7"}, {"args", "a b  c"}};
  auto a = ParseComponentArgs(TestSpec(), {"--n", "2"}, cfg);
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->Str("file"), "from-config");
  EXPECT_EQ(a->Int("n"), 2);
  EXPECT_THAT(a->varargs, ElementsAre("a", "b", "c"));
  auto b = ParseComponentArgs(TestSpec(), {"x"}, cfg);
  EXPECT_THAT(b->varargs, ElementsAre("x"));
  EXPECT_THAT(ParseComponentArgs(TestSpec(), {}, {{"fil", "x"}}),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("[component:test.comp] fil: not a parameter of test.comp. Did you mean `file`?")));
  EXPECT_THAT(ParseComponentArgs(TestSpec(), {}, {{"file", "x"}, {"n", "many"}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("[component:test.comp] n: -n/--n: invalid int")));
}

TEST(ParseComponentArgs, HelpIsRecognisedWithoutRequiredArgs) {
  auto spec = TestSpec();
  auto a = ParseComponentArgs(spec, {"--help"});
  ASSERT_THAT(a, IsOk());
  EXPECT_TRUE(a->help_requested);
  std::string help = ComponentHelp(spec);
  EXPECT_THAT(help, HasSubstr("usage: torchx run <run args...> test.comp [--help] --file FILE [-n N]"));
  EXPECT_THAT(help, HasSubstr("--file str\n        a file (required)"));
  EXPECT_THAT(help, HasSubstr("--n int\n        a count (default: 1)"));
  EXPECT_THAT(help, HasSubstr("--flag bool\n        a flag (default: False)"));
  EXPECT_THAT(help, HasSubstr("-m/--m str\n        module (default: None)"));
}

TEST(ComponentArgsFromJson, TypedValuesWithoutDecoding) {
  auto a = ComponentArgsFromJson(TestSpec(), R"({"file": "f", "n": 4, "tags": ["a", 1], "env": {"K": 2},
                                               "flag": true, "*": ["x", "y"], "m": null})");
  ASSERT_THAT(a, IsOk());
  EXPECT_EQ(a->Int("n"), 4);
  EXPECT_THAT(*a->OptList("tags"), ElementsAre("a", "1"));
  EXPECT_EQ(a->OptDict("env")->at("K"), "2");
  EXPECT_TRUE(a->Bool("flag"));
  EXPECT_THAT(a->varargs, ElementsAre("x", "y"));
  EXPECT_THAT(ComponentArgsFromJson(TestSpec(), R"({"file": "f", "n": "x"})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("--n: invalid int")));
  EXPECT_THAT(ComponentArgsFromJson(TestSpec(), R"({"file": "f", "flag": [1]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("flag: expected bool")));
  EXPECT_THAT(ComponentArgsFromJson(TestSpec(), R"({"n": 1})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("required: --file")));
}

TEST(ComponentSignature, RendersPythonStyleDefinition) {
  std::string sig = ComponentSignature(TestSpec());
  EXPECT_THAT(sig, HasSubstr("def comp(\n    *args: str,\n    file: str,\n    n: int = 1,\n    ratio: float = 0.5,"));
  EXPECT_THAT(sig, HasSubstr("tags: Optional[List[str]] = None,"));
  EXPECT_THAT(sig, HasSubstr(") -> specs.AppDef:\n    \"\"\"\n    A test component."));
}

TEST(FindComponent, FindsBuiltinsAndSuggestsForUnknownNames) {
  testing::ListComponentSource builtins;
  std::vector<std::string> names = builtins.Names();
  EXPECT_EQ(names.size(), 12u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_THAT(FindComponent(builtins, "dist.ddp"), IsOk());
  EXPECT_THAT(
      FindComponent(builtins, "dist.dpp"),
      StatusIs(
          StatusCode::kNotFound,
          "component `dist.dpp` not found. Did you mean `dist.ddp`? Run `torchx builtins` to list the components."));
}

}  // namespace
}  // namespace torchx::components

// ---- ComponentSpec / ComponentArgs JSON (how Python components describe themselves) ----

namespace torchx::components {
namespace {

TEST(ComponentJsonTest, SpecRoundTripsThroughJson) {
  ComponentSpec spec{
      "f.py:train", "Trains.", "More.", {}, Param{"script_args", ParamType::kListStr, false, {}, "args"}, ""};
  spec.params.push_back(Param{"lr", ParamType::kFloat, false, Value(0.5), "learning rate"});
  spec.params.push_back(Param{"steps", ParamType::kListStr, true, Value(), "steps"});
  spec.params.push_back(Param{"name", ParamType::kStr, false, std::nullopt, "required"});
  auto back = ComponentSpecFromJson(ComponentSpecToJson(spec));
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(ComponentSpecToJson(*back), ComponentSpecToJson(spec));
  ASSERT_EQ(back->params.size(), 3u);
  EXPECT_FALSE(back->params[2].default_value.has_value());
  EXPECT_TRUE(back->params[1].default_value->is_null());
  ASSERT_TRUE(back->varargs.has_value());
  EXPECT_EQ(back->varargs->name, "script_args");

  auto args = ParseComponentArgs(*back, {"--name", "n", "--steps", "1,2", "--", "x", "y"});
  ASSERT_TRUE(args.has_value()) << args.error().ToString();
  EXPECT_EQ(ComponentArgsToJson(*args), R"({"values":{"lr":0.5,"name":"n","steps":["1","2"]},"varargs":["x","y"]})");
}

TEST(ComponentJsonTest, BadSpecNamesThePath) {
  auto r = ComponentSpecFromJson(R"({"name": "c", "params": [{"name": "x", "type": "set"}]})");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.error().message(), ::testing::HasSubstr("params[0].type"));
  EXPECT_THAT(r.error().message(), ::testing::HasSubstr("[str, int, float, bool, list, dict]"));
  EXPECT_FALSE(ComponentSpecFromJson("[]").has_value());
  EXPECT_FALSE(ComponentSpecFromJson(R"({"params": []})").has_value());
}

}  // namespace
}  // namespace torchx::components
