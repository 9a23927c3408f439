// The slurm scheduler against a fake CommandRunner that answers as sbatch, squeue, sacct,
// scancel and sinfo do (outputs in the shapes tests/golden/slurm holds and the real-cluster tests
// in tests/integration/slurm see): what it runs, and how it reads the answers. No Slurm needed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "schedulers/slurm/fake_slurm.h"
#include "schedulers/slurm/slurm_scheduler.h"
#include "schedulers/slurm/slurm_status.h"
#include "testing/fake_clock.h"
#include "testing/fake_command_runner.h"
#include "testing/fake_http_client.h"
#include "testing/golden.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::schedulers::slurm {
namespace {

namespace fs = std::filesystem;
using specs::AppState;
using ::testing::AllOf;
using ::testing::ElementsAre;
using testing::FakeCommandRunner;
using ::testing::HasSubstr;

// What squeue and sacct print for a job id they do not know (squeue exits 1; sacct prints only
// its header).
constexpr const char* kSqueueInvalidId = "slurm_load_jobs error: Invalid job id specified\n";
constexpr const char* kSacctHeader = "JobID|JobName|State|ExitCode|NodeList\n";

// A plain (non-het) finished job and the golden het job as sacct lists them.
std::string SacctRows() {
  return testing::Golden("slurm/sacct_hetjob.txt") +
         "15|trainer-0|COMPLETED|0:0|node4\n15.batch|batch|COMPLETED|0:0|node4\n";
}

// Accounting asked for Submit too (List): a header naming it and one job with a time.
std::string SacctRowsWithSubmit() {
  return "JobID|JobName|State|ExitCode|NodeList|Submit\n"
         "15|trainer-0|COMPLETED|0:0|node4|2026-11-23T22:40:01\n"
         "16|trainer-0|PENDING|0:0|None assigned|Unknown\n";
}

specs::AppDef Echo(int replicas) {
  specs::Role r;
  r.name = "echo";
  r.image = "/tmp";
  r.entrypoint = "echo";
  r.args = {"hello"};
  r.num_replicas = replicas;
  r.resource = specs::NullResource();
  return specs::AppDef{"hello", {r}, {}};
}

// Describe's answer for an id the scheduler does not know: OK, and no app.
MATCHER(IsNoApp, "is OK and holds no app") { return arg.ok() && !arg->has_value(); }

using Fixture = FakeSlurm;

// The one squeue every answer about the queue comes from.
const std::vector<std::string>& SnapshotSqueue() {
  static const std::vector<std::string> argv{
      "squeue", "--me", "-h", "-a", "-r", "-t", "all", "-O", std::string(kSnapshotFormat)};
  return argv;
}

TEST(SlurmScheduler, ScheduleRunsSbatchOnTheDryRunsScriptAndReadsTheJobId) {
  Fixture f;
  f.tools->On({"sinfo", "--version"}, 0, "slurm 24.05.3\n");
  f.tools->On({"sinfo", "--format"}, 0, "debug*,2048\ngpu,512000\n");
  f.tools->On({"sbatch"}, 0, "1234;cluster-a\n");  // --parsable on a federated cluster
  auto info = f.sched->SubmitDryRun(Echo(2), {});
  ASSERT_THAT(info, IsOk());
  auto id = f.sched->Schedule(*info);
  ASSERT_THAT(id, IsOkAndHolds("1234"));
  auto sbatch = f.tools->CallsOf("sbatch");
  ASSERT_EQ(sbatch.size(), 1u);
  ASSERT_GE(sbatch[0].size(), 3u);
  EXPECT_EQ(sbatch[0][1], "--parsable");
  fs::path script = sbatch[0].back();
  EXPECT_EQ(script.filename(), "torchx-sbatch.sh");
  std::string text = f.tools->FileAtCall(script);
  EXPECT_THAT(info->request, HasSubstr(text));  // the script the dry run showed is the one sent
  EXPECT_THAT(text, HasSubstr("#SBATCH --job-name=echo-0"));
  EXPECT_THAT(text, HasSubstr("#SBATCH --job-name=echo-1"));
  EXPECT_FALSE(fs::exists(script.parent_path()));  // slurmctld has its copy: the temporary one is gone
}

specs::AppDef EchoArg(const std::string& arg) {
  specs::AppDef app = Echo(1);
  app.roles[0].args = {arg};
  app.roles[0].env = {{"TORCHX_JOB_ID", "slurm://s/${app_id}"}};
  return app;
}

// A sweep's trials as one array job: one sbatch, `--array=0-2%2`, a case per task whose job id is
// `<array>_<task>` (its log files, TORCHX_JOB_ID), and each task's own id back; sinfo asked once
// for the three dry runs.
TEST(SlurmScheduler, ScheduleArraySubmitsOneArrayJobWithATaskPerDryRun) {
  Fixture f;
  f.tools->On({"sinfo", "--version"}, 0, "slurm 24.05.3\n");
  f.tools->On({"sinfo", "--format"}, 0, "debug*,2048\n");
  f.tools->On({"sbatch"}, 0, "900\n");
  std::vector<DryRunInfo> tasks;
  for (const char* arg : {"a", "b", "c"}) {
    auto info = f.sched->SubmitDryRun(EchoArg(arg), {});
    ASSERT_THAT(info, IsOk());
    tasks.push_back(*info);
  }
  EXPECT_EQ(f.tools->CallsOf("sinfo").size(), 2u);  // version and partitions, once
  auto ids = f.sched->ScheduleArray(tasks, 2);
  ASSERT_THAT(ids, IsOkAndHolds(ElementsAre("900_0", "900_1", "900_2")));
  auto sbatch = f.tools->CallsOf("sbatch");
  ASSERT_EQ(sbatch.size(), 1u);
  fs::path script = sbatch[0].back();
  std::string text = f.tools->FileAtCall(script);
  EXPECT_THAT(text, HasSubstr("#SBATCH --array=0-2%2 --job-name=echo-0"));
  EXPECT_THAT(text, HasSubstr("case \"$SLURM_ARRAY_TASK_ID\" in\n0) srun "));
  EXPECT_THAT(text, HasSubstr("--output=slurm-\"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"-echo-0.out"));
  EXPECT_THAT(text, HasSubstr("'TORCHX_JOB_ID=slurm://s/'\"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"''"));
  EXPECT_THAT(text, HasSubstr(" echo b ;;\n2) srun "));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("slurm-\"$SLURM_JOB_ID\"-echo")));
  EXPECT_FALSE(fs::exists(script.parent_path()));
}

TEST(SlurmScheduler, TasksThatCannotShareAnArrayAreNamed) {
  Fixture f;
  f.tools->On({"sinfo", "--version"}, 0, "slurm 24.05.3\n");
  f.tools->On({"sinfo", "--format"}, 0, "debug*,4096\n");
  auto one = f.sched->SubmitDryRun(EchoArg("a"), {});
  specs::AppDef big = EchoArg("b");
  big.roles[0].resource.cpu = 4;
  auto other = f.sched->SubmitDryRun(big, {});
  auto two = f.sched->SubmitDryRun(Echo(2), {});
  ASSERT_THAT(one, IsOk());
  ASSERT_THAT(other, IsOk());
  ASSERT_THAT(two, IsOk());
  EXPECT_THAT(f.sched->ScheduleArray({*one, *other}, 0),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("task 1 cannot join task 0's job array: its #SBATCH")));
  EXPECT_THAT(
      f.sched->ScheduleArray({*one, *two}, 0),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("task 1 cannot join task 0's job array: it has 2 replicas")));
  EXPECT_TRUE(f.tools->CallsOf("sbatch").empty());
}

// An array task's status: the snapshot's squeue (-r) lists every task under its array job and
// task id, waiting or running; a het job's components are its replicas.
TEST(SlurmScheduler, DescribeArrayTasksAndHetJobsFromOneSqueue) {
  Fixture f;
  f.tools->On({"squeue"}, 0, testing::Golden("slurm/squeue_snapshot_22_05.txt"));
  auto state = [&](const std::string& id) {
    auto d = f.sched->Describe(id);
    EXPECT_THAT(d, IsOk());
    return d.ok() && d->has_value() ? (*d)->state : AppState::kUnsubmitted;
  };
  EXPECT_EQ(state("2052_3"), AppState::kPending);
  EXPECT_EQ(state("2052_0"), AppState::kRunning);
  EXPECT_EQ(state("2043_4"), AppState::kSucceeded);
  EXPECT_EQ(state("2053"), AppState::kFailed);
  auto het = f.sched->Describe("2050");
  ASSERT_THAT(het, IsOk());
  ASSERT_TRUE(het->has_value());
  EXPECT_EQ((*het)->state, AppState::kRunning);
  ASSERT_EQ((*het)->roles_statuses.size(), 1u);
  ASSERT_EQ((*het)->roles_statuses[0].replicas.size(), 2u);
  EXPECT_EQ((*het)->roles_statuses[0].replicas[1].hostname, "node2");
  auto running = f.sched->Describe("2052_1");
  ASSERT_THAT(running, IsOk());
  ASSERT_TRUE(running->has_value());
  EXPECT_EQ((*running)->app_id, "2052_1");
  EXPECT_EQ((*running)->roles_statuses[0].replicas[0].hostname, "node3");
  EXPECT_THAT(f.tools->calls(), ElementsAre(SnapshotSqueue()));  // six jobs, one question
}

// workspace_type=docker: the images the dry run marked go to the registry before sbatch, and a
// push that fails submits nothing.
TEST(SlurmScheduler, SchedulePushesTheWorkspaceImagesBeforeSbatch) {
  auto tools = std::make_shared<FakeCommandRunner>();
  auto http = std::make_shared<testing::FakeHttpClient>();
  auto sched = MakeSlurmScheduler("test", tools, nullptr, http);
  tools->On({"sbatch"}, 0, "77\n");
  auto info = sched->SubmitDryRun(Echo(1), {});
  ASSERT_THAT(info, IsOk());
  nlohmann::json payload = nlohmann::json::parse(info->payload);
  payload["push"] = {"reg.example.com/team/x:abc123"};
  info->payload = payload.dump();
  http->On("POST", "/v1.41/images/", 200, R"({"status": "pushed"})");
  ASSERT_THAT(sched->Schedule(*info), IsOkAndHolds("77"));
  ASSERT_EQ(http->requests().size(), 1u);
  EXPECT_THAT(http->requests()[0].path, HasSubstr("/push?tag=abc123"));
  EXPECT_EQ(tools->CallsOf("sbatch").size(), 1u);

  http->On("POST", "/v1.41/images/", 500, R"({"message": "connection refused"})");
  auto failed = sched->Schedule(*info);
  EXPECT_THAT(failed,
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("pushing image reg.example.com/team/x:abc123")));
  EXPECT_EQ(tools->CallsOf("sbatch").size(), 1u);  // not sent again
  for (auto& argv : tools->CallsOf("sbatch")) EXPECT_FALSE(fs::exists(fs::path(argv.back()).parent_path()));

  payload["push"] = {"no-tag"};
  info->payload = payload.dump();
  EXPECT_THAT(sched->Schedule(*info), StatusIs(StatusCode::kInvalidArgument, HasSubstr("push: `no-tag`")));
}

TEST(SlurmScheduler, ADockerWorkspaceNeedsAnImageRepoAndAnUnknownTypeIsNamed) {
  Fixture f;
  specs::AppDef app = Echo(1);
  auto opts = f.sched->run_opts();
  auto docker = opts.Resolve(specs::Cfg{{"workspace_type", std::string("docker")}});
  ASSERT_THAT(docker, IsOk());
  EXPECT_THAT(f.sched->BuildWorkspace("/tmp", app, *docker),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("needs the run option `image_repo`")));
  auto bad_repo = opts.Resolve(
      specs::Cfg{{"workspace_type", std::string("docker")}, {"image_repo", std::string("Registry/UPPER:tag")}});
  ASSERT_THAT(bad_repo, IsOk());
  EXPECT_THAT(f.sched->BuildWorkspace("/tmp", app, *bad_repo),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("is not an image repository")));
  auto odd = opts.Resolve(specs::Cfg{{"workspace_type", std::string("podman")}});
  ASSERT_THAT(odd, IsOk());
  EXPECT_THAT(f.sched->BuildWorkspace("/tmp", app, *odd),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("this scheduler offers: dir, docker")));
}

TEST(SlurmScheduler, ADirWorkspaceGoesIntoTheNextDryRunOnly) {
  Fixture f;
  specs::AppDef app = Echo(1);
  auto cfg = f.sched->run_opts().Resolve(specs::Cfg{});
  ASSERT_THAT(cfg, IsOk());
  ASSERT_THAT(f.sched->BuildWorkspace("/some/ws", app, *cfg), IsOk());
  auto with = f.sched->SubmitDryRun(app, {});
  ASSERT_THAT(with, IsOk());
  EXPECT_EQ(nlohmann::json::parse(with->payload)["workspace"], "/some/ws");
  auto without = f.sched->SubmitDryRun(app, {});  // the same scheduler, no --workspace this time
  ASSERT_THAT(without, IsOk());
  EXPECT_EQ(nlohmann::json::parse(without->payload)["workspace"], "");
}

TEST(SlurmScheduler, ScheduleReadsAPlainJobIdAndReportsSbatchsOwnError) {
  Fixture f;
  f.tools->On({"sbatch"}, 0, "77\n");
  auto info = f.sched->SubmitDryRun(Echo(1), {});  // sinfo missing: TorchX's defaults
  ASSERT_THAT(info, IsOk());
  EXPECT_THAT(f.sched->Schedule(*info), IsOkAndHolds("77"));
  f.tools->On({"sbatch"}, 1, "",
              "sbatch: error: invalid partition specified: gpu\n"
              "sbatch: error: Batch job submission failed: Invalid partition name specified\n");
  // Refused by the cluster: not an outage (a managed job fails over instead of retrying).
  EXPECT_THAT(f.sched->Schedule(*info), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("sbatch failed (exit 1)")));
  EXPECT_THAT(f.sched->Schedule(*info), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("Invalid partition name")));
  f.tools->On({"sbatch"}, 1, "",
              "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n");
  EXPECT_THAT(f.sched->Schedule(*info), StatusIs(StatusCode::kUnavailable, HasSubstr("Unable to contact")));
  for (auto& argv : f.tools->CallsOf("sbatch")) EXPECT_FALSE(fs::exists(fs::path(argv.back()).parent_path()));
}

TEST(SlurmScheduler, MissingSbatchSaysSoAndWhere) {
  Fixture f;  // nothing answers: no Slurm tool is installed
  auto info = f.sched->SubmitDryRun(Echo(1), {});
  ASSERT_THAT(info, IsOk());
  auto id = f.sched->Schedule(*info);
  EXPECT_THAT(id, StatusIs(StatusCode::kUnavailable, HasSubstr("`sbatch` is not installed")));
  EXPECT_THAT(id, StatusIs(StatusCode::kUnavailable, HasSubstr("Slurm login node")));
  for (auto& argv : f.tools->CallsOf("sbatch")) EXPECT_FALSE(fs::exists(fs::path(argv.back()).parent_path()));
}

TEST(SlurmScheduler, DescribeALiveJobFromSqueue) {
  Fixture f;
  f.tools->On({"squeue"}, 0, QueueRows(testing::Golden("slurm/squeue_rows_22_05.txt")));
  auto running = f.sched->Describe("1080");
  ASSERT_THAT(running, IsOk());
  ASSERT_TRUE(running->has_value());
  EXPECT_EQ((*running)->state, AppState::kRunning);
  EXPECT_EQ((*running)->roles_statuses[0].replicas[1].hostname, "node1");
  auto failed = f.sched->Describe("1078");
  ASSERT_THAT(failed, IsOk());
  ASSERT_TRUE(failed->has_value());
  EXPECT_EQ((*failed)->state, AppState::kFailed);
  EXPECT_EQ((*failed)->msg, "trainer-0 exited with code 3");
  // Both from one squeue of every job, asked again only once the refresh interval has passed.
  EXPECT_THAT(f.tools->calls(), ElementsAre(SnapshotSqueue()));
  f.NextRefresh();
  ASSERT_THAT(f.sched->Describe("1080"), IsOk());
  EXPECT_THAT(f.tools->calls(), ElementsAre(SnapshotSqueue(), SnapshotSqueue()));
}

// `status` right after `run` or `cancel` is read fresh: the snapshot taken before is not used for
// the job this scheduler just submitted or cancelled.
TEST(SlurmScheduler, AJobJustSubmittedOrCancelledIsReadFresh) {
  Fixture f;
  f.tools->On({"sinfo", "--version"}, 0, "slurm 22.05.8\n");
  f.tools->On({"squeue"}, 0, QueueRows("1078|1078|0|FAILED|node1|0|768|2026-11-20T10:58:00|trainer-0|\n"));
  ASSERT_THAT(f.sched->Describe("1078"), IsOk());
  f.tools->On({"sbatch"}, 0, "1090\n");
  auto info = f.sched->SubmitDryRun(Echo(1), {});
  ASSERT_THAT(info, IsOk());
  ASSERT_THAT(f.sched->Schedule(*info), IsOkAndHolds("1090"));
  f.clock->Advance(std::chrono::milliseconds(100));
  f.tools->On({"squeue"}, 0,
              QueueRows("1078|1078|0|FAILED|node1|0|768|2026-11-20T10:58:00|trainer-0|\n"
                        "1090|N/A|N/A|RUNNING|node2|0|0|2026-11-20T10:59:00|echo-0|\n"));
  auto d = f.sched->Describe("1090");
  ASSERT_THAT(d, IsOk());
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->state, AppState::kRunning);
  EXPECT_EQ(f.tools->CallsOf("squeue").size(), 2u);
  // Another job's answer still comes from that snapshot.
  ASSERT_THAT(f.sched->Describe("1078"), IsOk());
  EXPECT_EQ(f.tools->CallsOf("squeue").size(), 2u);
  f.tools->On({"scancel"}, 0, "");
  ASSERT_THAT(f.sched->Cancel("1090"), IsOk());
  f.clock->Advance(std::chrono::milliseconds(100));
  f.tools->On({"squeue"}, 0, QueueRows("1090|N/A|N/A|CANCELLED|node2|0|0|2026-11-20T10:59:00|echo-0|\n"));
  auto cancelled = f.sched->Describe("1090");
  ASSERT_THAT(cancelled, IsOk());
  ASSERT_TRUE(cancelled->has_value());
  EXPECT_EQ((*cancelled)->state, AppState::kCancelled);
}

// `[slurm] status_interval`: seconds, default 2; anything else is refused naming the option.
TEST(SlurmScheduler, StatusIntervalIsReadFromTheSlurmSection) {
  using Settings = std::map<std::string, std::string, std::less<>>;
  EXPECT_THAT(StatusInterval({}), IsOkAndHolds(2.0));
  EXPECT_THAT(StatusInterval(Settings{{"status_interval", "5"}}), IsOkAndHolds(5.0));
  EXPECT_THAT(StatusInterval(Settings{{"status_interval", "0.5"}, {"partition", "debug"}}), IsOkAndHolds(0.5));
  for (const char* bad : {"", "abc", "0", "-1", "2s", "nan", "601"}) {
    EXPECT_THAT(StatusInterval(Settings{{"status_interval", bad}}),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("[slurm] status_interval: `")))
        << bad;
  }
}

// A job submitted here since the queue's snapshot is listed: the queue is read fresh.
TEST(SlurmScheduler, ListAfterASubmissionReadsTheQueueFresh) {
  Fixture f;
  f.tools->On({"sinfo", "--version"}, 0, "slurm 22.05.8\n");
  f.tools->On({"sacct"}, 1, "", "sacct: error: Slurm accounting storage is disabled\n");
  f.tools->On({"squeue"}, 0, "");
  ASSERT_THAT(f.sched->List(), IsOkAndHolds(::testing::IsEmpty()));
  f.tools->On({"sbatch"}, 0, "1090\n");
  auto info = f.sched->SubmitDryRun(Echo(1), {});
  ASSERT_THAT(info, IsOk());
  ASSERT_THAT(f.sched->Schedule(*info), IsOk());
  f.clock->Advance(std::chrono::milliseconds(100));
  f.tools->On({"squeue"}, 0, QueueRows("1090|N/A|N/A|PENDING|n/a|0|0|2026-11-20T10:59:00|echo-0|\n"));
  auto list = f.sched->List();
  ASSERT_THAT(list, IsOk());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].app_id, "1090");
}

// A squeue that answers slowly (a busy controller) is still shared for a whole interval: its age
// counts from its answer, not from when it was asked.
TEST(SlurmScheduler, ASlowSqueueIsSharedForAWholeInterval) {
  struct SlowTools : internal::CommandRunner {
    std::shared_ptr<FakeCommandRunner> inner = std::make_shared<FakeCommandRunner>();
    std::shared_ptr<testing::FakeClock> clock = std::make_shared<testing::FakeClock>();
    Result<internal::CommandResult> Run(const std::vector<std::string>& argv, const std::string& cwd,
                                        std::chrono::milliseconds timeout) override {
      clock->Advance(std::chrono::milliseconds(2500));
      return inner->Run(argv, cwd, timeout);
    }
  };
  auto tools = std::make_shared<SlowTools>();
  tools->inner->On({"squeue"}, 0, QueueRows(testing::Golden("slurm/squeue_rows_22_05.txt")));
  testing::ScopedTempDir dir;
  auto store = MakeFileSnapshotStore(dir.path(), "c");
  ASSERT_THAT(store, IsOk());
  auto one = MakeSlurmScheduler("test", tools, tools->clock, nullptr, QueueReading{*store, 2});
  auto two = MakeSlurmScheduler("test", tools, tools->clock, nullptr, QueueReading{*store, 2});
  ASSERT_THAT(one->Describe("1080"), IsOk());
  ASSERT_THAT(two->Describe("1078"), IsOk());
  ASSERT_THAT(one->Describe("1078"), IsOk());
  EXPECT_EQ(tools->inner->CallsOf("squeue").size(), 1u);
}

// A failure of one process's own (its squeue missing from PATH) is not written for the others.
TEST(SlurmScheduler, AProcesssOwnFailureIsNotShared) {
  testing::ScopedTempDir dir;
  auto store = MakeFileSnapshotStore(dir.path(), "c");
  ASSERT_THAT(store, IsOk());
  auto clock = std::make_shared<testing::FakeClock>();
  auto bare = std::make_shared<FakeCommandRunner>();  // answers nothing: every tool is missing
  auto lost = MakeSlurmScheduler("test", bare, clock, nullptr, QueueReading{*store, 2});
  EXPECT_THAT(lost->Describe("1080"), StatusIs(StatusCode::kUnavailable, HasSubstr("is this a Slurm login node")));
  auto tools = std::make_shared<FakeCommandRunner>();
  tools->On({"squeue"}, 0, QueueRows(testing::Golden("slurm/squeue_rows_22_05.txt")));
  auto fine = MakeSlurmScheduler("test", tools, clock, nullptr, QueueReading{*store, 2});
  auto d = fine->Describe("1080");
  ASSERT_THAT(d, IsOk());
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->state, AppState::kRunning);
}

// An id that is no Slurm job id asks nothing and spoils no batch: a followed job that left the
// queue is still answered by accounting after it.
TEST(SlurmScheduler, AnIdThatIsNoJobIdAsksNothing) {
  Fixture f;
  f.tools->On({"squeue"}, 0, QueueRows("15|N/A|N/A|RUNNING|node4|0|0|2026-11-20T10:58:00|trainer-0|\n"));
  f.tools->On({"sacct"}, 0, SacctRows());
  ASSERT_THAT(f.sched->Describe("15"), IsOk());
  for (const char* bad : {"typo", "15;rm", "-j", "15_", "15_x", ""})
    EXPECT_THAT(f.sched->Describe(bad), IsNoApp()) << bad;
  EXPECT_EQ(f.tools->calls().size(), 1u);
  f.NextRefresh();
  f.tools->On({"squeue"}, 0, "");
  auto d = f.sched->Describe("15");
  ASSERT_THAT(d, IsOk());
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->state, AppState::kSucceeded);
  EXPECT_THAT(f.tools->CallsOf("sacct"), ElementsAre(ElementsAre("sacct", "--parsable2", "-j", "15", "-o",
                                                                 "JobID,JobName,State,ExitCode,NodeList")));
}

// What a dry run asks sinfo (the version, the partitions' memory) is shared by the host's
// processes for a minute: the second `torchx run` asks nothing.
TEST(SlurmScheduler, ClusterFactsAreSharedByTheHostsProcesses) {
  testing::ScopedTempDir dir;
  auto store = MakeFileSnapshotStore(dir.path(), "c");
  ASSERT_THAT(store, IsOk());
  auto clock = std::make_shared<testing::FakeClock>();
  auto tools = std::make_shared<FakeCommandRunner>();
  tools->On({"sinfo", "--version"}, 0, "slurm 22.05.8\n");
  tools->On({"sinfo", "--format"}, 0, "debug*,2048\ngpu,512000\n");
  auto one = MakeSlurmScheduler("test", tools, clock, nullptr, QueueReading{*store, 2});
  auto first = one->SubmitDryRun(Echo(1), {});
  ASSERT_THAT(first, IsOk());
  auto two = MakeSlurmScheduler("test", tools, clock, nullptr, QueueReading{*store, 2});
  auto second = two->SubmitDryRun(Echo(1), {});
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->request, first->request);  // the same version's flags, the same partition memory
  EXPECT_EQ(tools->CallsOf("sinfo").size(), 2u);
  clock->Advance(std::chrono::seconds(61));
  auto three = MakeSlurmScheduler("test", tools, clock, nullptr, QueueReading{*store, 2});
  ASSERT_THAT(three->SubmitDryRun(Echo(1), {}), IsOk());
  EXPECT_EQ(tools->CallsOf("sinfo").size(), 4u);
}

// Schedulers of one store (the processes of one user on one host) share its snapshot: a second
// reader within the interval asks nothing.
TEST(SlurmScheduler, SchedulersOfOneStoreShareOneSqueue) {
  auto tools = std::make_shared<FakeCommandRunner>();
  auto clock = std::make_shared<testing::FakeClock>();
  testing::ScopedTempDir dir;
  auto store = MakeFileSnapshotStore(dir.path(), "/etc/slurm/slurm.conf");
  ASSERT_THAT(store, IsOk());
  tools->On({"squeue"}, 0, QueueRows(testing::Golden("slurm/squeue_rows_22_05.txt")));
  auto one = MakeSlurmScheduler("test", tools, clock, nullptr, QueueReading{*store, 2});
  auto two = MakeSlurmScheduler("test", tools, clock, nullptr, QueueReading{*store, 2});
  ASSERT_THAT(one->Describe("1080"), IsOk());
  auto seen = two->Describe("1078");
  ASSERT_THAT(seen, IsOk());
  ASSERT_TRUE(seen->has_value());
  EXPECT_EQ((*seen)->state, AppState::kFailed);
  EXPECT_EQ(tools->CallsOf("squeue").size(), 1u);
  // Past the interval, whichever asks first refreshes it for both.
  clock->Advance(std::chrono::seconds(2));
  ASSERT_THAT(two->Describe("1078"), IsOk());
  ASSERT_THAT(one->Describe("1080"), IsOk());
  EXPECT_EQ(tools->CallsOf("squeue").size(), 2u);
  // Another cluster's store is another snapshot.
  auto other = MakeFileSnapshotStore(dir.path(), "/etc/slurm-b/slurm.conf");
  ASSERT_THAT(other, IsOk());
  auto three = MakeSlurmScheduler("test", tools, clock, nullptr, QueueReading{*other, 2});
  ASSERT_THAT(three->Describe("1080"), IsOk());
  EXPECT_EQ(tools->CallsOf("squeue").size(), 3u);
}

TEST(SlurmScheduler, DescribeNativeIsTheControllersJobAndItsBatchScript) {
  Fixture f;
  f.tools->On({"scontrol", "show"}, 0,
              "JobId=1080 JobName=trainer-0 UserId=slurm(64030) JobState=RUNNING Reason=None Partition=debug "
              "Command=/tmp/torchx/run.sh a b WorkDir=/tmp/torchx TRES=cpu=2,mem=1G,node=1\n");
  f.tools->On({"scontrol", "write"}, 0, "#!/bin/bash\n#SBATCH --job-name=trainer-0\nsrun echo hi\n");
  auto native = f.sched->DescribeNative("1080");
  ASSERT_THAT(native, IsOk());
  ASSERT_TRUE(native->has_value());
  nlohmann::json payload = nlohmann::json::parse((*native)->payload);
  EXPECT_EQ(payload["job"]["JobState"], "RUNNING");
  EXPECT_EQ(payload["job"]["Command"], "/tmp/torchx/run.sh a b");  // a value with spaces
  EXPECT_EQ(payload["job"]["TRES"], "cpu=2,mem=1G,node=1");
  EXPECT_THAT(payload["batch_script"].get<std::string>(), HasSubstr("srun echo hi"));
  EXPECT_THAT((*native)->request, AllOf(HasSubstr("JobState=RUNNING"), HasSubstr("#SBATCH --job-name=trainer-0")));
  EXPECT_THAT(f.tools->calls(), ElementsAre(ElementsAre("scontrol", "show", "job", "-o", "1080"),
                                            ElementsAre("scontrol", "write", "batch_script", "1080", "-")));

  Fixture gone;
  gone.tools->On({"scontrol", "show"}, 1, "", "slurm_load_jobs error: Invalid job id specified\n");
  EXPECT_THAT(gone.sched->DescribeNative("999"), IsNoApp());
  Fixture down;
  down.tools->On({"scontrol", "show"}, 1, "", "slurm_load_jobs error: Unable to contact slurm controller\n");
  EXPECT_THAT(down.sched->DescribeNative("1080"), StatusIs(StatusCode::kUnavailable, HasSubstr("Unable to contact")));
}

TEST(SlurmStatus, ParseScontrolJobKeepsValuesWithSpacesAndEquals) {
  auto fields = ParseScontrolJob("JobId=7 JobName=a b Comment=x=y Dependency=(null)\n");
  ASSERT_THAT(fields, IsOk());
  EXPECT_THAT(*fields, ElementsAre(::testing::Pair("JobId", "7"), ::testing::Pair("JobName", "a b"),
                                   ::testing::Pair("Comment", "x=y"), ::testing::Pair("Dependency", "(null)")));
  EXPECT_THAT(ParseScontrolJob("no job here"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("no JobId")));
}

TEST(SlurmScheduler, DescribeAFinishedJobFromAccounting) {
  Fixture f;
  f.tools->On({"squeue"}, 0, "");  // the controller has forgotten them (past MinJobAge)
  f.tools->On({"sacct"}, 0, SacctRows());
  auto state = [&](const std::string& id) {
    auto d = f.sched->Describe(id);
    EXPECT_THAT(d, IsOk());
    return d.ok() && d->has_value() ? (*d)->state : AppState::kUnsubmitted;
  };
  EXPECT_EQ(state("15"), AppState::kSucceeded);
  EXPECT_EQ(state("13"), AppState::kCancelled);
  EXPECT_EQ(state("14"), AppState::kFailed);
  auto sacct = f.tools->CallsOf("sacct");
  ASSERT_EQ(sacct.size(), 3u);
  EXPECT_THAT(sacct[0], ElementsAre("sacct", "--parsable2", "-j", "15", "-o", "JobID,JobName,State,ExitCode,NodeList"));
  // Their ends are remembered: asked again, nobody is.
  f.NextRefresh();
  EXPECT_EQ(state("15"), AppState::kSucceeded);
  EXPECT_EQ(state("14"), AppState::kFailed);
  EXPECT_EQ(f.tools->CallsOf("sacct").size(), 3u);
}

// Jobs the queue forgot while they were followed are asked of accounting together, once per refresh.
TEST(SlurmScheduler, FollowedJobsThatLeaveTheQueueAreAskedOfAccountingInOneCall) {
  Fixture f;
  f.tools->On({"squeue"}, 0,
              QueueRows("13|N/A|N/A|RUNNING|node1|0|0|2026-11-20T10:58:00|trainer-0|\n"
                        "14|N/A|N/A|RUNNING|node1|0|0|2026-11-20T10:58:00|trainer-0|\n"
                        "15|N/A|N/A|RUNNING|node1|0|0|2026-11-20T10:58:00|trainer-0|\n"));
  for (const char* id : {"13", "14", "15"}) ASSERT_THAT(f.sched->Describe(id), IsOk());
  f.NextRefresh();
  f.tools->On({"squeue"}, 0, "");
  f.tools->On({"sacct"}, 0, SacctRows());
  for (const char* id : {"13", "14", "15"}) {
    auto d = f.sched->Describe(id);
    ASSERT_THAT(d, IsOk());
    ASSERT_TRUE(d->has_value());
    EXPECT_TRUE(specs::IsTerminal((*d)->state)) << id;
  }
  auto sacct = f.tools->CallsOf("sacct");
  ASSERT_EQ(sacct.size(), 1u);
  EXPECT_EQ(sacct[0][3], "13,14,15");
}

TEST(SlurmScheduler, AnUnknownJobIsNoApp) {
  Fixture f;
  f.tools->On({"squeue", "--me"}, 0, "");
  f.tools->On({"squeue"}, 1, "", kSqueueInvalidId);  // asked alone: not another user's either
  f.tools->On({"sacct"}, 0, kSacctHeader);
  EXPECT_THAT(f.sched->Describe("999"), IsNoApp());
  f.NextRefresh();
  f.tools->On({"squeue", "--me"}, 0, QueueRows(testing::Golden("slurm/squeue_rows_22_05.txt")));
  EXPECT_THAT(f.sched->Describe("999"), IsNoApp());
  // No accounting on the cluster: sacct fails, and the job is still simply unknown.
  f.NextRefresh();
  f.tools->On({"sacct"}, 1, "", "sacct: error: Problem talking to the database: Connection refused\n");
  EXPECT_THAT(f.sched->Describe("999"), IsNoApp());
}

// Another user's job is not in the user's snapshot: it is asked alone, as before batching.
TEST(SlurmScheduler, AnotherUsersJobIsAskedAlone) {
  Fixture f;
  f.tools->On({"squeue", "--me"}, 0, "");
  f.tools->On({"sacct"}, 0, kSacctHeader);
  f.tools->On({"squeue", "-h"}, 0, QueueRows("77|N/A|N/A|RUNNING|node2|0|0|2026-11-20T10:58:00|theirs-0|\n"));
  auto d = f.sched->Describe("77");
  ASSERT_THAT(d, IsOk());
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->state, AppState::kRunning);
  EXPECT_THAT(f.tools->CallsOf("squeue")[1],
              ElementsAre("squeue", "-h", "-a", "-r", "-t", "all", "-j", "77", "-O", std::string(kSnapshotFormat)));
}

TEST(SlurmScheduler, CancelRunsScancelOnlyForALiveJob) {
  Fixture f;
  f.tools->On({"squeue", "--me"}, 0, QueueRows(testing::Golden("slurm/squeue_rows_22_05.txt")));
  f.tools->On({"squeue"}, 1, "", kSqueueInvalidId);
  f.tools->On({"sacct"}, 0, SacctRows());
  f.tools->On({"scancel"}, 0, "");
  EXPECT_THAT(f.sched->Cancel("1080"), IsOk());
  EXPECT_THAT(f.sched->Cancel("15"), IsOk());   // finished: nothing to cancel
  EXPECT_THAT(f.sched->Cancel("999"), IsOk());  // unknown: nothing to cancel
  EXPECT_THAT(f.tools->CallsOf("scancel"), ElementsAre(ElementsAre("scancel", "1080")));
}

TEST(SlurmScheduler, CancelReportsScancelsError) {
  Fixture f;
  f.tools->On({"squeue"}, 0, QueueRows(testing::Golden("slurm/squeue_rows_22_05.txt")));
  f.tools->On({"scancel"}, 1, "", "scancel: error: Kill job error on job id 1080: Access/permission denied\n");
  EXPECT_THAT(f.sched->Cancel("1080"),
              StatusIs(StatusCode::kUnavailable, HasSubstr("scancel 1080: scancel: error: Kill job error")));
}

TEST(SlurmScheduler, AControllerOutageIsSaidPlainlyNotTakenForAMissingJob) {
  Fixture f;
  f.tools->On({"squeue"}, 1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n");
  f.tools->On({"sacct"}, 0, SacctRows());
  auto d = f.sched->Describe("15");
  ASSERT_THAT(d, IsOk());
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->state, AppState::kSucceeded);
  EXPECT_THAT((*d)->msg, HasSubstr("the Slurm controller cannot be reached (slurm_load_jobs error: Unable to contact "
                                   "slurm controller (connect failure)): state from accounting, which may lag"));
  // The outage is an answer too: within the interval nobody asks the controller again.
  ASSERT_THAT(f.sched->Describe("15"), IsOk());
  EXPECT_EQ(f.tools->CallsOf("squeue").size(), 1u);
  // Without accounting either: an error, not "no such app" (which would end a `wait`).
  f.NextRefresh();
  f.tools->On({"sacct"}, 1, "", "sacct: error: slurmdbd: Connection refused\n");
  EXPECT_THAT(f.sched->Describe("15"),
              StatusIs(StatusCode::kUnavailable, HasSubstr("Unable to contact slurm controller")));
  // Once the controller answers, an id neither it nor accounting knows is simply unknown.
  f.NextRefresh();
  f.tools->On({"squeue", "--me"}, 0, "");
  f.tools->On({"squeue", "-h"}, 1, "", kSqueueInvalidId);
  EXPECT_THAT(f.sched->Describe("15"), IsOkAndHolds(::testing::Eq(std::nullopt)));
}

TEST(SlurmScheduler, ListMergesAccountingWithTheLiveQueue) {
  Fixture f;
  f.tools->On({"sacct"}, 0, SacctRows());
  f.tools->On({"squeue"}, 0, QueueRows(testing::Golden("slurm/squeue_rows_22_05.txt")));
  auto list = f.sched->List();
  ASSERT_THAT(list, IsOk());
  std::map<std::string, AppState> got;
  for (const auto& r : *list) got[r.app_id] = r.state;
  EXPECT_EQ(got, (std::map<std::string, AppState>{{"13", AppState::kCancelled},
                                                  {"14", AppState::kFailed},
                                                  {"15", AppState::kSucceeded},
                                                  {"74", AppState::kCancelled},
                                                  {"1078", AppState::kFailed},
                                                  {"1080", AppState::kRunning},
                                                  {"1082", AppState::kPending},
                                                  {"1083", AppState::kFailed}}));
  EXPECT_THAT(f.tools->CallsOf("squeue"), ElementsAre(SnapshotSqueue()));
  std::vector<std::string> order;
  for (const auto& r : *list) order.push_back(r.app_id);
  EXPECT_THAT(order, ElementsAre("1083", "1082", "1080", "1078", "74", "15", "14", "13"));  // newest first
  // When accounting says when each job was submitted, so does the listing.
  // Listed again within the interval: both lists are shared, nobody is asked.
  ASSERT_THAT(f.sched->List(), IsOk());
  EXPECT_EQ(f.tools->CallsOf("squeue").size(), 1u);
  EXPECT_EQ(f.tools->CallsOf("sacct").size(), 1u);
  f.NextRefresh();
  f.tools->On({"sacct"}, 0, SacctRowsWithSubmit());
  auto timed = f.sched->List();
  ASSERT_THAT(timed, IsOk());
  std::map<std::string, std::optional<double>> created;
  for (const auto& r : *timed) created[r.app_id] = r.created;
  std::tm tm{};
  tm.tm_isdst = -1;
  strptime("2026-11-23T22:40:01", "%Y-%m-%dT%H:%M:%S", &tm);
  EXPECT_EQ(created["15"], static_cast<double>(std::mktime(&tm)));
  EXPECT_EQ(created["16"], std::nullopt);
  f.NextRefresh();
  f.tools->On({"squeue"}, 1, "", "slurm_load_jobs error: Unable to contact slurm controller\n");
  EXPECT_THAT(f.sched->List(), StatusIs(StatusCode::kUnavailable, HasSubstr("Unable to contact slurm controller")));
}

// `torchx log -t` through a controller outage: the job's files are read on, the outage is not
// taken for the job's end, and squeue is asked at most every 2 s however often the files are polled.
TEST(SlurmScheduler, AFollowedLogOutlastsAControllerOutageAndAsksSqueueSparingly) {
  testing::ScopedTempDir dir;
  dir.Write("slurm-15-echo-0.out", "first\n");
  struct ScopedCwd {  // the job's files are in the cwd when no job_dir was recorded
    fs::path was = fs::current_path();
    explicit ScopedCwd(const fs::path& to) { fs::current_path(to); }
    ~ScopedCwd() {
      std::error_code ec;
      fs::current_path(was, ec);
    }
  } cwd(dir.path());
  auto tools = std::make_shared<FakeCommandRunner>();
  auto clock = std::make_shared<testing::FakeClock>();
  auto sched = MakeSlurmScheduler("test", tools, clock);
  tools->On({"squeue"}, 1, "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n");
  tools->On({"sacct"}, 1, "", "sacct: error: slurmdbd: Connection refused\n");
  LogOptions o;
  o.role = "echo";
  o.replica = 0;
  o.stream = LogStream::kStdout;
  o.follow = true;
  auto it = sched->LogIter("15", o);
  ASSERT_THAT(it, IsOk());
  EXPECT_THAT((*it)->Next(), IsOkAndHolds(::testing::Optional(std::string("first\n"))));
  // Nothing more is written and the controller never answers: followed for 10 minutes, then ended.
  EXPECT_THAT((*it)->Next(), IsOkAndHolds(::testing::Eq(std::nullopt)));
  auto waited = clock->Now() - std::chrono::steady_clock::time_point();
  EXPECT_GE(waited, std::chrono::minutes(10));
  EXPECT_LT(waited, std::chrono::minutes(11));
  EXPECT_LE(tools->CallsOf("squeue").size(), 10u * 30 + 2);  // once per 2 s, not per 200 ms poll
}

// `torchx debug stack` on Slurm: one `srun --overlap` into the job per running replica (a het
// job's component by --het-group), each replica's processes named by its role and replica and put on
// its node; a replica whose srun fails says why, and the others are still dumped.
TEST(SlurmScheduler, DumpStacksRunsTheHelperOnEachRunningReplicasNode) {
  Fixture f;
  f.tools->On({"squeue"}, 0,
              QueueRows("2000|2000|0|RUNNING|node1|0|0|2026-11-20T10:58:00|trainer-0|\n"
                        "2001|2000|1|RUNNING|node2|0|0|2026-11-20T10:58:00|trainer-1|\n"
                        "2002|2000|2|PENDING|N/A|0|0|2026-11-20T10:58:00|ps-0|\n"));
  f.tools->On({"srun", "--overlap", "--jobid=2000", "--het-group=0"}, 0,
              R"({"groups": [], "processes": [{"pid": 41, "rank": 0, "host": "vm", "command": "python train.py",
                  "threads": [{"name": "MainThread", "os_thread_id": 41, "main": true,
                               "frames": [{"function": "all_reduce", "file": "c10d.py", "line": 9}]}],
                  "error": null}]})");
  f.tools->On({"srun", "--overlap", "--jobid=2000", "--het-group=1"}, 1, "",
              "srun: error: Unable to create step for job 2000: Job/step already completing\n");
  auto stacks = f.sched->DumpStacks("2000", {});
  ASSERT_THAT(stacks, IsOk());
  ASSERT_TRUE(stacks->has_value());
  ASSERT_EQ((*stacks)->size(), 2u);  // ps/0 is pending: nothing to dump
  const ProcessStack& first = (**stacks)[0];
  EXPECT_EQ(first.role, "trainer");
  EXPECT_EQ(first.replica_id, 0);
  EXPECT_EQ(first.host, "node1");  // Slurm's node name, not the machine's
  EXPECT_EQ(first.rank, 0);
  EXPECT_EQ(first.threads.at(0).frames.at(0).function, "all_reduce");
  const ProcessStack& second = (**stacks)[1];
  EXPECT_EQ(second.replica_id, 1);
  EXPECT_THAT(second.error, HasSubstr("Job/step already completing"));
  auto calls = f.tools->CallsOf("srun");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_TRUE(calls[0][7].ends_with("/torchx-stacks")) << calls[0][7];  // the helper, found as the others are
  // One replica only, and an ended job is refused.
  EXPECT_THAT(f.sched->DumpStacks("2000", {"ps", 0}), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("ps/0")));
}

}  // namespace
}  // namespace torchx::schedulers::slurm
