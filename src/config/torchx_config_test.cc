#include "torchx/config/torchx_config.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using torchx::testing::ScopedEnv;
using torchx::testing::ScopedTempDir;

specs::RunOpts LocalOpts() {
  specs::RunOpts o;
  EXPECT_THAT(o.Add("log_dir", specs::CfgType::kStr, "dir"), IsOk());
  EXPECT_THAT(o.Add("prepend_cwd", specs::CfgType::kBool, "p", false), IsOk());
  EXPECT_THAT(o.Add("mounts", specs::CfgType::kListStr, "m"), IsOk());
  EXPECT_THAT(o.Add("labels", specs::CfgType::kDictStr, "l"), IsOk());
  EXPECT_THAT(o.Add("nproc", specs::CfgType::kInt, "n", std::int64_t{1}), IsOk());
  EXPECT_THAT(o.Add("cluster", specs::CfgType::kStr, "c", {}, true), IsOk());
  return o;
}

TEST(TorchxConfig, ParsesSectionsCaseSensitiveKeysAndComments) {
  auto cfg = TorchxConfig::Parse(
      "# comment\n; also comment\n[local_cwd]\nLog_Dir = /tmp/x\nprepend_cwd: True\n\n"
      "[component:dist.ddp]\nj = 2x2\n[cli:run]\nscheduler = local_cwd\n",
      "mem");
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(cfg->Get("local_cwd", "Log_Dir")->value, "/tmp/x");
  EXPECT_EQ(cfg->Get("local_cwd", "log_dir"), nullptr);
  EXPECT_EQ(cfg->Get("local_cwd", "prepend_cwd")->value, "True");
  EXPECT_EQ(cfg->Get("local_cwd", "prepend_cwd")->line, 5);
  EXPECT_THAT(cfg->ComponentDefaults("dist.ddp"), ElementsAre(std::pair<std::string, std::string>{"j", "2x2"}));
  EXPECT_EQ(cfg->CliDefault("run", "scheduler"), "local_cwd");
  EXPECT_EQ(cfg->CliDefault("run", "workspace"), std::nullopt);
  EXPECT_THAT(cfg->SectionNames(), ElementsAre("local_cwd", "component:dist.ddp", "cli:run"));
}

// What a Runner hands each back-end it builds: the scheduler sections alone, as written.
TEST(TorchxConfig, SchedulerSettingsAreTheSchedulerSectionsAsWritten) {
  auto cfg = TorchxConfig::Parse(
      "[slurm]\nstatus_interval = 5\npartition = debug\n[component:dist.ddp]\nj = 2x1\n"
      "[cli:run]\nscheduler = slurm\n[local_cwd]\nlog_dir = /tmp\n",
      "mem");
  ASSERT_THAT(cfg, IsOk());
  auto settings = SchedulerSettings(*cfg);
  ASSERT_EQ(settings.size(), 2u);
  EXPECT_EQ(settings["slurm"]["status_interval"], "5");
  EXPECT_EQ(settings["slurm"]["partition"], "debug");
  EXPECT_EQ(settings["local_cwd"]["log_dir"], "/tmp");
}

TEST(TorchxConfig, MultiLineValuesJoinWithNewline) {
  auto cfg = TorchxConfig::Parse("[s]\nk = a\n  b\nother = 1\n", "mem");
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(cfg->Get("s", "k")->value, "a\nb");
}

TEST(TorchxConfig, ParseErrorsNameOriginAndLine) {
  EXPECT_THAT(TorchxConfig::Parse("[s]\nno delimiter here\n", "f.ini"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("f.ini:2: malformed line")));
  EXPECT_THAT(TorchxConfig::Parse("k = v\n", "f.ini"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("f.ini:1: k: key before any [section]")));
  EXPECT_THAT(TorchxConfig::Parse("[s]\nk = 1\nk = 2\n", "f.ini"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("f.ini:3: [s] k: duplicate key (first set on line 2)")));
  EXPECT_THAT(TorchxConfig::Parse("[s]\nk = a ; b\n", "f.ini"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("f.ini:2: ' ;' is ambiguous")));
  EXPECT_THAT(TorchxConfig::Parse("[s]\nk = " + std::string(300, 'x') + "\n", "f.ini"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("f.ini:2: line longer than")));
}

TEST(TorchxConfig, ApplySchedulerDefaultsCastsLikeConfigparser) {
  auto file = TorchxConfig::Parse(
      "[local_cwd]\nlog_dir = None\nprepend_cwd = on\nmounts = a,b;c\nlabels = x:1,y:2\n"
      "nproc = 4\ncluster = c1\nunknown_key = 1\n",
      "f");
  ASSERT_THAT(file, IsOk());
  specs::Cfg cfg{{"cluster", std::string("from-cli")}};
  std::vector<std::string> unknown;
  ASSERT_THAT(file->ApplySchedulerDefaults("local_cwd", LocalOpts(), cfg, &unknown), IsOk());
  EXPECT_TRUE(specs::CfgValIsNone(cfg.at("log_dir")));
  EXPECT_EQ(std::get<bool>(cfg.at("prepend_cwd")), true);
  EXPECT_EQ(std::get<specs::CfgList>(cfg.at("mounts")), (specs::CfgList{"a,b", "c"}));  // ';' only
  EXPECT_EQ(std::get<specs::CfgDict>(cfg.at("labels")), (specs::CfgDict{{"x", "1"}, {"y", "2"}}));
  EXPECT_EQ(std::get<std::int64_t>(cfg.at("nproc")), 4);
  EXPECT_EQ(std::get<std::string>(cfg.at("cluster")), "from-cli");  // the CLI wins
  EXPECT_THAT(unknown, ElementsAre("f [local_cwd] unknown_key"));
}

TEST(TorchxConfig, ApplyErrorsNameFileSectionAndKey) {
  auto file = TorchxConfig::Parse("[local_cwd]\nprepend_cwd = maybe\nnproc = many\n", "/h/.torchxconfig");
  ASSERT_THAT(file, IsOk());
  specs::Cfg cfg;
  EXPECT_THAT(file->ApplySchedulerDefaults("local_cwd", LocalOpts(), cfg),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("/h/.torchxconfig:2: [local_cwd] prepend_cwd: invalid bool value 'maybe', "
                                 "must be one of [true, false, yes, no, on, off, 1, 0]")));
  auto file2 = TorchxConfig::Parse("[local_cwd]\nnproc = many\n", "/h/.torchxconfig");
  EXPECT_THAT(
      file2->ApplySchedulerDefaults("local_cwd", LocalOpts(), cfg),
      StatusIs(StatusCode::kInvalidArgument,
               HasSubstr("/h/.torchxconfig:2: [local_cwd] nproc: invalid int value 'many', expected an integer")));
}

TEST(TorchxConfig, LookupOrderHomeBeatsCwdAndEnvIsExclusive) {
  ScopedTempDir home, cwd, other;
  home.Write(".torchxconfig", "[s]\na = home\n");
  cwd.Write(".torchxconfig", "[s]\na = cwd\nb = cwd\n");
  std::string explicit_file = other.Write("custom.ini", "[s]\nc = env\n");
  ScopedEnv h("HOME", home.path().c_str());
  {
    ScopedEnv e("TORCHXCONFIG", nullptr);
    auto cfg = TorchxConfig::Load(cwd.path());
    ASSERT_THAT(cfg, IsOk());
    EXPECT_EQ(cfg->Get("s", "a")->value, "home");
    EXPECT_EQ(cfg->Get("s", "b")->value, "cwd");
    EXPECT_EQ(cfg->files().size(), 2u);
  }
  {
    ScopedEnv e("TORCHXCONFIG", explicit_file.c_str());
    auto cfg = TorchxConfig::Load(cwd.path());
    ASSERT_THAT(cfg, IsOk());
    EXPECT_EQ(cfg->Get("s", "a"), nullptr);
    EXPECT_EQ(cfg->Get("s", "c")->value, "env");
  }
  {
    ScopedEnv e("TORCHXCONFIG", "/nonexistent/x");
    EXPECT_THAT(TorchxConfig::Load(cwd.path()),
                StatusIs(StatusCode::kNotFound, HasSubstr("TORCHXCONFIG=/nonexistent/x")));
  }
}

TEST(TorchxConfig, HomeEqualToCwdIsReadOnce) {
  ScopedTempDir dir;
  dir.Write(".torchxconfig", "[s]\na = 1\n");
  ScopedEnv h("HOME", dir.path().c_str());
  ScopedEnv e("TORCHXCONFIG", nullptr);
  auto cfg = TorchxConfig::Load(dir.path());
  ASSERT_THAT(cfg, IsOk());
  EXPECT_EQ(cfg->files().size(), 1u);
}

TEST(DumpConfig, RequiredOnlyAndAll) {
  std::vector<std::pair<std::string, specs::RunOpts>> s = {{"local_cwd", LocalOpts()}};
  EXPECT_EQ(DumpConfig(s, false), "[local_cwd]\ncluster = #FIXME:(str) c\n\n");
  std::string all = DumpConfig(s, true);
  EXPECT_THAT(all, HasSubstr("log_dir = None\n"));
  EXPECT_THAT(all, HasSubstr("prepend_cwd = False\n"));
  EXPECT_THAT(all, HasSubstr("nproc = 1\n"));
  // what configure writes, apply reads back
  auto back = TorchxConfig::Parse(all, "dump");
  ASSERT_THAT(back, IsOk());
  specs::Cfg cfg;
  ASSERT_THAT(back->Section("local_cwd").size(), 6u);
}

}  // namespace
}  // namespace torchx::config
