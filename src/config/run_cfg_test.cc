// The one precedence of a run's options, as the CLI, the dashboard and pipelines resolve them:
// the request's sources highest first, then .torchxconfig; unknown keys refused (naming the
// source, "did you mean") or warned about; malformed values named by their source.
#include "torchx/config/run_cfg.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::config {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Form = CfgSource::Form;

specs::RunOpts Opts() {
  specs::RunOpts o;
  EXPECT_THAT(o.Add("log_dir", specs::CfgType::kStr, "dir"), IsOk());
  EXPECT_THAT(o.Add("nproc", specs::CfgType::kInt, "n", std::int64_t{1}), IsOk());
  EXPECT_THAT(o.Add("queue", specs::CfgType::kStr, "q"), IsOk());
  EXPECT_THAT(o.Add("mounts", specs::CfgType::kListStr, "m"), IsOk());
  return o;
}

TEST(ResolveRunCfg, SourcesHighestFirstThenTheConfigFile) {
  auto file = TorchxConfig::Parse("[local_cwd]\nlog_dir = /from/file\nqueue = fileq\nnproc = 7\n", "mem");
  ASSERT_THAT(file, IsOk());
  std::vector<CfgSource> sources = {{Form::kJsonObject, R"({"nproc": 3})", "steps.a.cfg"},
                                    {Form::kString, "nproc=5,queue=cli", "-cfg"},
                                    {Form::kJsonObject, R"({"queue": "filecfg", "mounts": ["a", "b"]})", "cfg"}};
  auto cfg = ResolveRunCfg("local_cwd", Opts(), sources, *file, UnknownOptions::kRefuse);
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(std::get<std::int64_t>(cfg->at("nproc")), 3);     // the step's own
  EXPECT_EQ(std::get<std::string>(cfg->at("queue")), "cli");  // -cfg over the file's cfg
  EXPECT_THAT(std::get<specs::CfgList>(cfg->at("mounts")), ElementsAre("a", "b"));
  EXPECT_EQ(std::get<std::string>(cfg->at("log_dir")), "/from/file");  // .torchxconfig last
}

TEST(ResolveRunCfg, AnUnknownKeyListsTheValidOptionsOnce) {
  TorchxConfig none;
  auto far = ResolveRunCfg("local_cwd", Opts(), {{Form::kJsonObject, R"({"zzzzzzzz": "x"})", "cfg"}}, none,
                           UnknownOptions::kRefuse);
  ASSERT_FALSE(far.ok());
  const std::string& msg = far.error().message();
  EXPECT_THAT(msg, HasSubstr("valid options: "));
  EXPECT_EQ(msg.find("alid"), msg.rfind("alid")) << msg;  // not again as "Valid choices"
}

TEST(ResolveRunCfg, UnknownKeysAreRefusedNamingTheSourceOrWarnedAbout) {
  TorchxConfig none;
  EXPECT_THAT(
      ResolveRunCfg("local_cwd", Opts(), {{Form::kJsonObject, R"({"log_dirr": "x"})", "steps.b.cfg"}}, none,
                    UnknownOptions::kRefuse),
      StatusIs(StatusCode::kInvalidArgument,
               AllOf(HasSubstr("steps.b.cfg.log_dirr: unknown option for scheduler local_cwd"), HasSubstr("log_dir"))));
  EXPECT_THAT(ResolveRunCfg("local_cwd", Opts(), {{Form::kString, "queue=q,log_dirr=x", "field `cfg`"}}, none,
                            UnknownOptions::kRefuse),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("field `cfg`: `log_dirr`: unknown option")));
  std::vector<std::string> warnings;
  auto warned = ResolveRunCfg("local_cwd", Opts(), {{Form::kString, "queue=q,log_dirr=x", "-cfg"}}, none,
                              UnknownOptions::kWarn, &warnings);
  ASSERT_THAT(warned, IsOk());
  EXPECT_EQ(std::get<std::string>(warned->at("queue")), "q");
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("ignored: log_dirr")));
  // A typo in .torchxconfig is reported, whatever the policy for the request's own keys.
  auto file = TorchxConfig::Parse("[local_cwd]\nqueu = x\n", "mem");
  ASSERT_THAT(file, IsOk());
  warnings.clear();
  EXPECT_THAT(ResolveRunCfg("local_cwd", Opts(), {}, *file, UnknownOptions::kRefuse, &warnings), IsOk());
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("queu")));
}

// (Values of the wrong type are refused when the run resolves them against the scheduler.)
TEST(ResolveRunCfg, MalformedValuesAreNamedByTheirSource) {
  TorchxConfig none;
  EXPECT_THAT(ResolveRunCfg("local_cwd", Opts(), {{Form::kJsonObject, "[1]", "cfg"}}, none, UnknownOptions::kRefuse),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("cfg: must be an object")));
  EXPECT_THAT(ResolveRunCfg("local_cwd", Opts(), {{Form::kString, "nproc=x", "-cfg"}}, none, UnknownOptions::kRefuse),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("-cfg")));
}

}  // namespace
}  // namespace torchx::config
