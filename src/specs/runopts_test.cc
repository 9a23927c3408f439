#include "torchx/specs/runopts.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::specs {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs P(std::string_view s) {
  auto r = CfgStringToPairs(s);
  EXPECT_THAT(r, IsOk()) << s;
  return r.has_value() ? *r : Pairs{};
}

TEST(CfgStringToPairs, TorchXCases) {
  EXPECT_TRUE(P("").empty());
  EXPECT_EQ(P("FOO=v1"), (Pairs{{"FOO", "v1"}}));
  EXPECT_EQ(P("FOO=v1,v2"), (Pairs{{"FOO", "v1,v2"}}));
  EXPECT_EQ(P("FOO=v1;v2"), (Pairs{{"FOO", "v1;v2"}}));
  EXPECT_EQ(P("FOO=''"), (Pairs{{"FOO", ""}}));
  EXPECT_EQ(P("FOO=\"\""), (Pairs{{"FOO", ""}}));
  EXPECT_EQ(P("FOO=,"), (Pairs{{"FOO", ","}}));
  EXPECT_EQ(P("FOO=;"), (Pairs{{"FOO", ";"}}));
  EXPECT_EQ(P("FOO=v1,v2,"), (Pairs{{"FOO", "v1,v2,"}}));
  EXPECT_EQ(P("FOO=v1;v2,"), (Pairs{{"FOO", "v1;v2,"}}));
  EXPECT_EQ(P("FOO=v1,v2,BAR=v3"), (Pairs{{"FOO", "v1,v2"}, {"BAR", "v3"}}));
  EXPECT_EQ(P("FOO=v1;v2;BAR=v3"), (Pairs{{"FOO", "v1;v2"}, {"BAR", "v3"}}));
  EXPECT_EQ(P("FOO=v1,v2;BAR=v3"), (Pairs{{"FOO", "v1,v2"}, {"BAR", "v3"}}));
  EXPECT_EQ(P("foo=bar1,bar2,bar3,my_key=my_value,new_foo=new_bar1,new_bar2"),
            (Pairs{{"foo", "bar1,bar2,bar3"}, {"my_key", "my_value"}, {"new_foo", "new_bar1,new_bar2"}}));
  EXPECT_EQ(P("key1=value1,,foo=bar"), (Pairs{{"key1", "value1,"}, {"foo", "bar"}}));
  EXPECT_EQ(P("FOO=\"value with = and , and ;\""), (Pairs{{"FOO", "value with = and , and ;"}}));
  EXPECT_EQ(P(" a = 1 , b = 2 "), (Pairs{{"a", "1"}, {"b", "2"}}));
}

TEST(CfgStringToPairs, QuotesWithEscapesAndMixedQuotes) {
  EXPECT_EQ(P("A='x=1,y=2',B=\"it's\""), (Pairs{{"A", "x=1,y=2"}, {"B", "it's"}}));
  EXPECT_EQ(P("A='a\\'b'"), (Pairs{{"A", "a\\'b"}}));  // escape kept, quote not closing
  EXPECT_EQ(P("A='x"), (Pairs{{"A", "'x"}}));          // unbalanced quote is literal
}

TEST(CfgStringToPairs, RepeatedKeyKeepsLastValue) { EXPECT_EQ(P("a=1,b=2,a=3"), (Pairs{{"a", "3"}, {"b", "2"}})); }

TEST(CfgStringToPairs, Malformed) {
  for (const char* bad : {"FOO", "FOO,", "FOO;", "FOO=", "FOO=;BAR=v1", "a=1,=2"}) {
    EXPECT_THAT(CfgStringToPairs(bad), StatusIs(StatusCode::kInvalidArgument, HasSubstr("cfg:"))) << bad;
  }
  EXPECT_THAT(CfgStringToPairs("FOO"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("does not have at least one `key=value` pair")));
  EXPECT_THAT(CfgStringToPairs("FOO=;BAR=v1"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("cannot be split into `val<delim>key`")));
}

RunOpts TestOpts() {
  RunOpts opts;
  EXPECT_THAT(opts.Add("run_as_user", CfgType::kStr, "user to run the job as"), IsOk());
  EXPECT_THAT(opts.Add("cluster_id", CfgType::kInt, "cluster to submit the job", {}, true), IsOk());
  EXPECT_THAT(opts.Add("priority", CfgType::kFloat, "job priority", 0.5), IsOk());
  EXPECT_THAT(opts.Add("preemptible", CfgType::kBool, "is the job preemptible", false), IsOk());
  EXPECT_THAT(opts.Add("mounts", CfgType::kListStr, "mounts", CfgList{"a"}), IsOk());
  EXPECT_THAT(opts.Add("labels", CfgType::kDictStr, "labels"), IsOk());
  return opts;
}

TEST(RunOpts, AddRejectsRequiredWithDefaultAndWrongDefaultType) {
  RunOpts opts;
  EXPECT_THAT(opts.Add("illegal", CfgType::kInt, "h", std::int64_t{10}, true),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("required option: illegal must not specify default value. Given: 10")));
  EXPECT_THAT(
      opts.Add("bad_type", CfgType::kStr, "h", std::int64_t{10}),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("option: bad_type, must be of type: str. Given: 10 (int)")));
  EXPECT_TRUE(opts.empty());
}

TEST(RunOpts, ResolveRefusesUnknownKeysNamingTheValidOnes) {
  RunOpts opts = TestOpts();
  EXPECT_THAT(opts.Resolve(Cfg{{"cluster_id", std::int64_t{3}}, {"priorty", 1.0}}),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("Unknown run option `priorty`. Valid options are: cluster_id, labels, mounts, "
                                       "preemptible, priority, run_as_user. Given: "),
                             HasSubstr("Did you mean `priority`?"))));
  // camelCase stands for the snake_case option; two spellings must agree.
  auto camel = opts.Resolve(Cfg{{"clusterId", std::int64_t{3}}, {"runAsUser", std::string("me")}});
  ASSERT_THAT(camel, IsOk());
  EXPECT_EQ(camel->Int("cluster_id"), 3);
  EXPECT_EQ(camel->Str("run_as_user"), "me");
  EXPECT_FALSE(camel->values().contains("clusterId"));
  EXPECT_THAT(
      opts.Resolve(Cfg{{"cluster_id", std::int64_t{3}}, {"clusterId", std::int64_t{4}}}),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("passed under two spellings (`cluster_id` and `clusterId`)")));
  EXPECT_THAT(opts.Resolve(Cfg{{"cluster_id", std::int64_t{3}}, {"clusterId", std::int64_t{3}}}), IsOk());
}

TEST(RunOpts, ResolveFillsDefaultsAndPassesUnknownKeysThroughWhenAsked) {
  RunOpts opts = TestOpts();
  auto cfg = opts.Resolve(Cfg{{"cluster_id", std::int64_t{3}}, {"extra", std::string("x")}}, UnknownKeys::kPassThrough);
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(cfg->Int("cluster_id"), 3);
  EXPECT_EQ(cfg->Float("priority"), 0.5);
  EXPECT_EQ(cfg->Bool("preemptible"), false);
  EXPECT_EQ(cfg->List("mounts"), CfgList{"a"});
  EXPECT_EQ(cfg->Str("run_as_user"), std::nullopt);  // no default: None
  EXPECT_EQ(std::get<std::string>(cfg->values().at("extra")), "x");
  EXPECT_TRUE(CfgValIsNone(cfg->values().at("run_as_user")));
}

TEST(RunOpts, ResolveFillsTheDefaultForAnExplicitNone) {
  RunOpts opts = TestOpts();
  auto cfg = opts.Resolve(Cfg{{"cluster_id", std::int64_t{3}}, {"priority", CfgVal{}}});
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(cfg->Float("priority"), 0.5);
}

TEST(RunOpts, ResolvedIntReadsAPythonBoolAsAnInt) {
  auto cfg = TestOpts().Resolve(Cfg{{"cluster_id", true}});
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(cfg->Int("cluster_id"), 1);
}

TEST(RunOptsDeathTest, ReadingAnUndeclaredOrMistypedOptionIsABug) {
  auto cfg =
      TestOpts().Resolve(Cfg{{"cluster_id", std::int64_t{3}}, {"extra", std::string("x")}}, UnknownKeys::kPassThrough);
  ASSERT_THAT(cfg, IsOk());
  EXPECT_DEATH((void)cfg->Str("extra"), "run option 'extra' read as str but it is not declared");
  EXPECT_DEATH((void)cfg->Str("cluster_id"), "run option 'cluster_id' read as str but declared as int");
}

TEST(RunOpts, ResolveErrorsMatchTorchX) {
  RunOpts opts = TestOpts();
  EXPECT_THAT(opts.Resolve({}),
              StatusIs(StatusCode::kInvalidArgument,
                       "Required run option: cluster_id, must be provided and not `None`. Given: <EMPTY>"));
  EXPECT_THAT(opts.Resolve(Cfg{{"cluster_id", std::string("x")}}),
              StatusIs(StatusCode::kInvalidArgument,
                       "Run option: cluster_id, must be of type: int, but was: x (str). Given: "
                       "{'cluster_id': 'x'}"));
  EXPECT_THAT(opts.Resolve(Cfg{{"cluster_id", std::int64_t{1}}, {"mounts", std::string("a")}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("must be of type: typing.List[str]")));
}

TEST(RunOpts, CfgFromStringCastsKnownKeysAndReportsUnknown) {
  RunOpts opts = TestOpts();
  std::vector<std::string> unknown;
  auto cfg =
      opts.CfgFromString("cluster_id=7,priority=2.5,preemptible=TRUE,mounts=a;b,,labels=k:v;x:y:z,nope=1", &unknown);
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(std::get<std::int64_t>(cfg->at("cluster_id")), 7);
  EXPECT_EQ(std::get<double>(cfg->at("priority")), 2.5);
  EXPECT_EQ(std::get<bool>(cfg->at("preemptible")), true);
  EXPECT_EQ(std::get<CfgList>(cfg->at("mounts")), (CfgList{"a", "b"}));
  EXPECT_EQ(std::get<CfgDict>(cfg->at("labels")), (CfgDict{{"k", "v"}, {"x", "y:z"}}));
  EXPECT_EQ(cfg->count("nope"), 0u);
  EXPECT_THAT(unknown, ElementsAre("nope=1"));
}

TEST(RunOpts, CfgFromStringListForms) {
  RunOpts opts = TestOpts();
  EXPECT_EQ(std::get<CfgList>(opts.CfgFromString("mounts=v1")->at("mounts")), CfgList{"v1"});
  EXPECT_EQ(std::get<CfgList>(opts.CfgFromString("mounts=v1,v2,run_as_user=u")->at("mounts")), (CfgList{"v1", "v2"}));
  EXPECT_EQ(std::get<bool>(opts.CfgFromString("preemptible=yes")->at("preemptible")), true);
}

TEST(RunOpts, CfgFromStringBadValuesNameTheOption) {
  RunOpts opts = TestOpts();
  EXPECT_THAT(opts.CfgFromString("cluster_id=abc"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("option cluster_id: invalid int value 'abc'")));
  EXPECT_THAT(opts.CfgFromString("priority=1.5x"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("option priority: invalid float")));
  EXPECT_THAT(opts.CfgFromString("labels=novalue"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("item 'novalue' is not of the form key:value")));
}

TEST(RunOpts, CfgFromJson) {
  RunOpts opts = TestOpts();
  auto cfg =
      opts.CfgFromJson(R"({"cluster_id": 1, "mounts": [1, "b"], "labels": {"a": 2}, "run_as_user": null, "x": 1})");
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(std::get<CfgList>(cfg->at("mounts")), (CfgList{"1", "b"}));
  EXPECT_EQ(std::get<CfgDict>(cfg->at("labels")), (CfgDict{{"a", "2"}}));
  EXPECT_TRUE(CfgValIsNone(cfg->at("run_as_user")));
  EXPECT_EQ(cfg->count("x"), 0u);
  EXPECT_THAT(opts.CfgFromJson("[1]"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("object")));
}

TEST(RunOpts, RenderMatchesTorchXRepr) {
  RunOpts opts;
  ASSERT_THAT(opts.Add("log_dir", CfgType::kStr, "dir to write logs"), IsOk());
  ASSERT_THAT(opts.Add("cluster", CfgType::kStr, "the cluster", {}, true), IsOk());
  ASSERT_THAT(opts.Add("prepend_cwd", CfgType::kBool, "prepend cwd", false), IsOk());
  ASSERT_THAT(opts.Add("mounts", CfgType::kListStr, "mounts", CfgList{"a", "b"}), IsOk());
  EXPECT_EQ(opts.Render(),
            "    usage:\n"
            "        cluster=CLUSTER,[log_dir=LOG_DIR],[prepend_cwd=PREPEND_CWD],[mounts=MOUNTS]\n"
            "\n"
            "    required arguments:\n"
            "        cluster=CLUSTER (str)\n"
            "            the cluster\n"
            "\n"
            "    optional arguments:\n"
            "        log_dir=LOG_DIR (str, None)\n"
            "            dir to write logs\n"
            "        prepend_cwd=PREPEND_CWD (bool, False)\n"
            "            prepend cwd\n"
            "        mounts=MOUNTS (typing.List[str], ['a', 'b'])\n"
            "            mounts");
}

TEST(CfgVal, PythonStringForms) {
  EXPECT_EQ(CfgValToString(CfgVal{}), "None");
  EXPECT_EQ(CfgValToString(CfgVal(1.0)), "1.0");
  EXPECT_EQ(CfgValToString(CfgVal(true)), "True");
  EXPECT_EQ(CfgValRepr(CfgVal(std::string("it's"))), "\"it's\"");
  EXPECT_EQ(CfgValToString(CfgVal(CfgDict{{"a", "b"}})), "{'a': 'b'}");
  EXPECT_TRUE(CfgValIs(CfgVal(true), CfgType::kInt));  // Python: bool is an int
  EXPECT_FALSE(CfgValIs(CfgVal(std::int64_t{1}), CfgType::kBool));
}

TEST(RunOptsCases, CamelCaseNamesFindSnakeCaseOptions) {
  EXPECT_EQ(SnakeToCamel("hpc_cluster_uuid"), "hpcClusterUuid");
  EXPECT_EQ(SnakeToCamel("name"), "name");
  EXPECT_EQ(CamelToSnake("hpcClusterUuid"), "hpc_cluster_uuid");
  EXPECT_EQ(CamelToSnake(SnakeToCamel("num_retries")), "num_retries");

  RunOpts opts;
  ASSERT_TRUE(opts.Add("run_as", CfgType::kStr, "user", {}, true).ok());
  ASSERT_TRUE(opts.Add("priority", CfgType::kInt, "prio", CfgVal(std::int64_t{10})).ok());
  EXPECT_NE(opts.Get("runAs"), nullptr);
  EXPECT_EQ(opts.Get("run_as_"), nullptr);
  auto resolved = opts.Resolve(Cfg{{"runAs", CfgVal(std::string("me"))}});
  ASSERT_TRUE(resolved.ok()) << resolved.status().message();
  EXPECT_EQ(resolved->Str("run_as"), "me");
  EXPECT_EQ(resolved->values().count("runAs"), 0u);
  EXPECT_EQ(resolved->Int("priority"), 10);
}

TEST(RunOptsCases, CfgStringBoolsTakeTheIniVocabularyOnly) {
  RunOpts opts;
  ASSERT_TRUE(opts.Add("flag", CfgType::kBool, "f", CfgVal(false)).ok());
  for (const char* yes : {"true", "TRUE", "1", "yes", "On"}) {
    auto cfg = opts.CfgFromString(std::string("flag=") + yes);
    ASSERT_TRUE(cfg.ok()) << yes;
    EXPECT_EQ(std::get<bool>(cfg->at("flag")), true) << yes;
  }
  for (const char* no : {"false", "0", "no", "OFF"}) {
    auto cfg = opts.CfgFromString(std::string("flag=") + no);
    ASSERT_TRUE(cfg.ok()) << no;
    EXPECT_EQ(std::get<bool>(cfg->at("flag")), false) << no;
  }
  auto bad = opts.CfgFromString("flag=garbage");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("garbage"), std::string::npos);
}

}  // namespace
}  // namespace torchx::specs
