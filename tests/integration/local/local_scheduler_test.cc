// local_cwd against real processes: layout, env, failures, retries, cancel, supervisor loss,
// concurrency. Each test has its own state directory.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "schedulers/local/app_plan.h"
#include "schedulers/local/detached_start.h"
#include "schedulers/local/local_scheduler.h"
#include "schedulers/local/state_store.h"
#include "schedulers/local/supervisor_store.h"
#include "schedulers/local/warm_supervisor.h"
#include "testing/local_env.h"
#include "testing/registry.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "torchx/specs/app_handle.h"
#include "torchx/specs/serialize.h"

namespace torchx {
namespace {

namespace fs = std::filesystem;
using specs::AppState;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

specs::Role ShRole(std::string name, std::string script, int replicas = 1) {
  specs::Role r;
  r.name = std::move(name);
  r.entrypoint = "sh";
  r.args = {"-c", std::move(script)};
  r.num_replicas = replicas;
  r.resource = specs::Resource{1, 0, 128, {}, {}, {}};
  return r;
}

specs::AppDef App(std::vector<specs::Role> roles, std::string name = "app") {
  return specs::AppDef{std::move(name), std::move(roles), {}};
}

std::string AppDir(const testing::LocalSchedulerEnv& env, const std::string& handle) {
  return (fs::path(env.state_dir()) / "logs" / "torchx" / specs::ParseAppHandle(handle)->app_id).string();
}

std::vector<std::string> Lines(runner::Runner& r, const std::string& handle, const std::string& role, int replica,
                               schedulers::LogStream stream = schedulers::LogStream::kCombined) {
  schedulers::LogOptions o;
  o.role = role;
  o.replica = replica;
  o.stream = stream;
  auto it = r.LogLines(handle, o);
  EXPECT_THAT(it, IsOk());
  std::vector<std::string> out;
  if (!it) return out;
  while (true) {
    auto line = (*it)->Next();
    if (!line || !*line) break;
    out.push_back(**line);
  }
  return out;
}

class LocalSchedulerTest : public ::testing::Test {
 protected:
  testing::LocalSchedulerEnv env_;
  std::unique_ptr<plugins::PluginRegistry> registry_ = testing::BuiltinRegistry();
  runner::Runner runner_{*registry_};
};

TEST_F(LocalSchedulerTest, EchoSucceedsWithTorchXLogLayout) {
  auto handle = runner_.RunComponent("utils.echo", {"--msg", "hello world", "--num_replicas", "2"}, "local_cwd");
  ASSERT_THAT(handle, IsOk());
  EXPECT_EQ(handle->rfind("local_cwd://torchx/echo-", 0), 0u) << *handle;
  auto status = testing::WaitTerminal(runner_, *handle);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, AppState::kSucceeded);
  ASSERT_EQ(status->roles.size(), 1u);
  EXPECT_EQ(status->roles[0].replicas.size(), 2u);
  for (const auto& r : status->roles[0].replicas) EXPECT_EQ(r.state, AppState::kSucceeded);
  fs::path dir = AppDir(env_, *handle);
  for (int i : {0, 1}) {
    EXPECT_EQ(Read(dir / "echo" / std::to_string(i) / "stdout.log"), "hello world\n");
    EXPECT_EQ(Read(dir / "echo" / std::to_string(i) / "combined.log"), "hello world\n");
    EXPECT_TRUE(fs::exists(dir / "echo" / std::to_string(i) / "stderr.log"));
  }
  EXPECT_THAT(Read(dir / "SUCCESS"), HasSubstr("\"final_state\": \"SUCCEEDED\""));
  EXPECT_EQ(status->ui_url, "file://" + dir.string());
  EXPECT_EQ(Lines(runner_, *handle, "echo", 1), std::vector<std::string>{"hello world\n"});
}

// A wait on several apps is woken by whichever ends first (a sweep's driver filling the slot a
// trial freed), not by the one it names first.
TEST_F(LocalSchedulerTest, AWaitOnSeveralAppsWakesWhenAnyOfThemEnds) {
  auto slow = runner_.Run(App({ShRole("slow", "sleep 30")}), "local_cwd");
  auto quick = runner_.Run(App({ShRole("quick", "sleep 1")}), "local_cwd");
  ASSERT_THAT(slow, IsOk());
  ASSERT_THAT(quick, IsOk());
  auto start = std::chrono::steady_clock::now();
  bool ended = false;
  while (!ended && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    EXPECT_TRUE(runner_.WaitForAnyUpdate({*slow, *quick}, std::chrono::seconds(25)));
    auto s = runner_.Status(*quick);
    ended = s.ok() && *s && specs::IsTerminal((*s)->state);
  }
  EXPECT_TRUE(ended);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));  // not the 25 s wait
  // An app that has ended already is no wait at all.
  auto again = std::chrono::steady_clock::now();
  EXPECT_TRUE(runner_.WaitForAnyUpdate({*slow, *quick}, std::chrono::seconds(25)));
  EXPECT_LT(std::chrono::steady_clock::now() - again, std::chrono::seconds(5));
  ASSERT_THAT(runner_.Cancel(*slow), IsOk());
  testing::WaitTerminal(runner_, *slow);
}

mode_t ModeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

TEST_F(LocalSchedulerTest, StateAndLogsAreOnlyTheUsersAndAWritableStateDirIsRefused) {
  auto handle = runner_.RunComponent("utils.echo", {"--msg", "private"}, "local_cwd");
  ASSERT_THAT(handle, IsOk());
  ASSERT_TRUE(testing::WaitTerminal(runner_, *handle));
  fs::path state(env_.state_dir());
  EXPECT_EQ(ModeOf(state / "local.db"), 0600u);
  EXPECT_EQ(ModeOf(state / "local.db-wal"), 0600u);  // SQLite copies the database's mode
  fs::path dir = AppDir(env_, *handle);
  EXPECT_EQ(ModeOf(state), 0700u);
  for (const fs::path& d : {dir, dir / "echo", dir / "echo" / "0"}) EXPECT_EQ(ModeOf(d), 0700u) << d;
  for (const char* f : {"echo/0/stdout.log", "echo/0/stderr.log", "echo/0/combined.log", "SUCCESS", "supervisor.log"}) {
    EXPECT_EQ(ModeOf(dir / f), 0600u) << f;
  }
  // A state directory others can write is refused before anything is recorded or started.
  ASSERT_EQ(::chmod(state.c_str(), 0777), 0);
  runner::Runner fresh(*registry_);
  auto refused = fresh.RunComponent("utils.echo", {"--msg", "x"}, "local_cwd");
  (void)::chmod(state.c_str(), 0700);
  EXPECT_THAT(refused, StatusIs(StatusCode::kFailedPrecondition,
                                AllOf(HasSubstr(state.string() + " can be written by other users (mode 0777)"),
                                      HasSubstr("chmod go-w"))));
  // What umask 002 made (group-writable, ours) is narrowed, not refused; and an older version's
  // wider database files are narrowed too.
  ASSERT_EQ(::chmod(state.c_str(), 0775), 0);
  ASSERT_EQ(::chmod((state / "local.db-wal").c_str(), 0644), 0);
  runner::Runner again(*registry_);
  EXPECT_THAT(again.RunComponent("utils.echo", {"--msg", "x"}, "local_cwd"), IsOk());
  EXPECT_EQ(ModeOf(state), 0755u);
  EXPECT_EQ(ModeOf(state / "local.db-wal"), 0600u);
}

TEST_F(LocalSchedulerTest, InjectsTorchXEnvMacrosAndPath) {
  specs::Role role = ShRole("w",
                            "echo job=$TORCHX_JOB_ID; echo rank0=$TORCHX_RANK0_HOST; echo rid=$RID; "
                            "echo unbuf=$PYTHONUNBUFFERED; echo err=$TORCHELASTIC_ERROR_FILE; echo path=$PATH; "
                            "echo cwd=$(pwd)",
                            2);
  role.env["RID"] = "${replica_id}";
  auto handle = runner_.Run(App({role}), "local_cwd", {{"prepend_cwd", true}});
  ASSERT_THAT(handle, IsOk());
  ASSERT_EQ(testing::WaitTerminal(runner_, *handle)->state, AppState::kSucceeded);
  std::string out = Read(fs::path(AppDir(env_, *handle)) / "w" / "1" / "stdout.log");
  std::string app_id = specs::ParseAppHandle(*handle)->app_id;
  std::string cwd = fs::current_path().string();
  EXPECT_THAT(out, HasSubstr("job=local_cwd://torchx/" + app_id + "\n"));
  EXPECT_THAT(out, HasSubstr("rank0=localhost\n"));
  EXPECT_THAT(out, HasSubstr("rid=1\n"));
  // Unbuffered Python unless the submitter's environment already says (TorchX's setdefault).
  const char* inherited = std::getenv("PYTHONUNBUFFERED");
  EXPECT_THAT(out, HasSubstr(std::string("unbuf=") + (inherited ? inherited : "x") + "\n"));
  EXPECT_THAT(out, HasSubstr("err=" + AppDir(env_, *handle) + "/w/1/error.json\n"));
  EXPECT_THAT(out, HasSubstr("path=" + cwd + ":"));  // prepend_cwd
  EXPECT_THAT(out, HasSubstr("cwd=" + cwd + "\n"));
}

TEST_F(LocalSchedulerTest, FailureReportsExitCodeAndTorchelasticErrorFile) {
  std::string script =
      "echo '{\"message\": {\"message\": \"boom\", \"errorCode\": 7, \"extraInfo\": {\"timestamp\": \"1\"}}}' "
      "> $TORCHELASTIC_ERROR_FILE; echo to-stderr >&2; exit 7";
  auto handle = runner_.Run(App({ShRole("t", script)}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  auto status = testing::WaitTerminal(runner_, *handle);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, AppState::kFailed);
  EXPECT_EQ(status->msg, "t/0 exited with code 7");
  EXPECT_THAT(status->structured_error_msg, HasSubstr("boom"));
  EXPECT_THAT(status->roles[0].replicas[0].structured_error_msg, HasSubstr("boom"));
  EXPECT_THAT(specs::FormatAppStatus(*status), HasSubstr("FAILED (exitcode: 7)"));
  EXPECT_EQ(Lines(runner_, *handle, "t", 0, schedulers::LogStream::kStderr), std::vector<std::string>{"to-stderr\n"});
}

TEST_F(LocalSchedulerTest, MissingEntrypointFailsWithReason) {
  specs::Role r = ShRole("x", "");
  r.entrypoint = "/nonexistent/program";
  r.args = {};
  auto handle = runner_.Run(App({r}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  auto status = testing::WaitTerminal(runner_, *handle);
  EXPECT_EQ(status->state, AppState::kFailed);
  EXPECT_THAT(status->msg, HasSubstr("cannot start `/nonexistent/program`"));
  EXPECT_THAT(status->msg, HasSubstr("No such file or directory"));
}

// A replica that fails on its first attempt only (a marker file remembers attempts).
std::string FlakyOnce(const std::string& marker) {
  return "echo start >> " + marker + "; if [ ! -e " + marker + ".ok ]; then touch " + marker + ".ok; exit 3; fi";
}

TEST_F(LocalSchedulerTest, ReplicaRetryRestartsOnlyTheFailedReplica) {
  std::string m = env_.dir().path() + "/m";
  specs::Role flaky = ShRole(
      "r", "if [ \"$RID\" = 1 ]; then " + FlakyOnce(m + "1") + "; else echo start >> " + m + "0; sleep 0.5; fi", 2);
  flaky.env["RID"] = "${replica_id}";
  flaky.max_retries = 1;
  flaky.retry_policy = specs::RetryPolicy::kReplica;
  auto handle = runner_.Run(App({flaky}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  auto status = testing::WaitTerminal(runner_, *handle);
  EXPECT_EQ(status->state, AppState::kSucceeded) << status->msg;
  EXPECT_EQ(status->num_restarts, 1);
  EXPECT_EQ(Read(m + "1"), "start\nstart\n");
  EXPECT_EQ(Read(m + "0"), "start\n");  // the healthy replica was not restarted
  // The first attempt's logs were archived (it printed nothing, so it has no files: they come with output).
  EXPECT_TRUE(fs::is_directory(fs::path(AppDir(env_, *handle)) / "r" / "1" / "attempt_0"));
  EXPECT_FALSE(fs::exists(fs::path(AppDir(env_, *handle)) / "r" / "1" / "attempt_0" / "combined.log"));

  // The retry history: replica 1's failed first attempt (exit 3), then its second; replica 0 once.
  auto attempts = runner_.Attempts(*handle);
  ASSERT_THAT(attempts, IsOk());
  ASSERT_EQ(attempts->size(), 3u);
  const schedulers::ReplicaAttempt& healthy = (*attempts)[0];
  const schedulers::ReplicaAttempt& failed = (*attempts)[1];
  const schedulers::ReplicaAttempt& retried = (*attempts)[2];
  EXPECT_EQ(healthy.replica_id, 0);
  EXPECT_EQ(healthy.state, AppState::kSucceeded);
  EXPECT_EQ(failed.replica_id, 1);
  EXPECT_EQ(failed.attempt, 0);
  EXPECT_EQ(failed.state, AppState::kFailed);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(retried.attempt, 1);
  EXPECT_EQ(retried.state, AppState::kSucceeded);
  ASSERT_TRUE(failed.ended.has_value());
  ASSERT_TRUE(retried.ended.has_value());
  EXPECT_LE(failed.started, *failed.ended);
  EXPECT_LE(*failed.ended, retried.started);
  EXPECT_LE(retried.started, *retried.ended);
  // Deleting the app removes its history too.
  ASSERT_THAT(runner_.Delete(*handle), IsOk());
  EXPECT_THAT(runner_.Attempts(*handle), StatusIs(StatusCode::kNotFound, HasSubstr("does not exist")));
}

TEST_F(LocalSchedulerTest, RoleRetryRestartsEveryReplicaOfTheRole) {
  std::string m = env_.dir().path() + "/m";
  // Replica 0 fails once, but only after replica 1 has started, so that its restart is observable.
  specs::Role a = ShRole("a",
                         "echo start >> " + m + "a$RID; if [ \"$RID\" = 0 ]; then while [ ! -e " + m +
                             "a1 ]; do sleep 0.02; done; " + FlakyOnce(m + "flag") + "; fi; sleep 0.2",
                         2);
  a.env["RID"] = "${replica_id}";
  a.max_retries = 1;
  a.retry_policy = specs::RetryPolicy::kRole;
  specs::Role b = ShRole("b", "echo start >> " + m + "b; sleep 1");
  auto handle = runner_.Run(App({a, b}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  auto status = testing::WaitTerminal(runner_, *handle);
  EXPECT_EQ(status->state, AppState::kSucceeded) << status->msg;
  EXPECT_EQ(Read(m + "a0"), "start\nstart\n");
  EXPECT_EQ(Read(m + "a1"), "start\nstart\n");
  EXPECT_EQ(Read(m + "b"), "start\n");
}

TEST_F(LocalSchedulerTest, ApplicationRetryRestartsEverything) {
  std::string m = env_.dir().path() + "/m";
  // `a` fails once, but only after `b` has started, so that b's restart is observable.
  specs::Role a = ShRole("a", "while [ ! -e " + m + "b ]; do sleep 0.02; done; " + FlakyOnce(m + "a"));
  a.max_retries = 2;
  specs::Role b = ShRole("b", "echo start >> " + m + "b; sleep 0.3");
  auto handle = runner_.Run(App({a, b}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  auto status = testing::WaitTerminal(runner_, *handle);
  EXPECT_EQ(status->state, AppState::kSucceeded) << status->msg;
  EXPECT_EQ(status->num_restarts, 1);
  EXPECT_EQ(Read(m + "b"), "start\nstart\n");
}

TEST_F(LocalSchedulerTest, ApplicationRetryRerunsReplicasThatAlreadySucceeded) {
  // `b` ends successfully before `a` fails; the restart must run `b` again and still let the
  // app reach SUCCEEDED (the success count has to forget b's first success).
  std::string m = env_.dir().path() + "/m";
  specs::Role a = ShRole("a", "while [ ! -e " + m + "b ]; do sleep 0.02; done; sleep 0.1; " + FlakyOnce(m + "a"));
  a.max_retries = 1;
  specs::Role b = ShRole("b", "echo start >> " + m + "b");
  auto handle = runner_.Run(App({a, b}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  auto status = testing::WaitTerminal(runner_, *handle);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, AppState::kSucceeded) << status->msg;
  EXPECT_EQ(Read(m + "b"), "start\nstart\n");
}

TEST_F(LocalSchedulerTest, RetriesExhaustedFails) {
  specs::Role r = ShRole("r", "exit 2");
  r.max_retries = 2;
  auto handle = runner_.Run(App({r}), "local_cwd");
  auto status = testing::WaitTerminal(runner_, *handle);
  EXPECT_EQ(status->state, AppState::kFailed);
  EXPECT_EQ(status->num_restarts, 2);
}

// Whether any live (non-zombie) process is in group `pgid`. kill(-pgid, 0) would also count
// zombies, which an init that reaps slowly leaves around for a while.
bool GroupAlive(int pgid) {
  if (pgid <= 0) return false;
  for (const auto& e : fs::directory_iterator("/proc")) {
    int pid = std::atoi(e.path().filename().c_str());
    if (pid <= 0 || getpgid(pid) != pgid) continue;
    std::string stat = Read(e.path() / "stat");
    size_t close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z') return true;
  }
  return false;
}

// What /proc says of a process: its parent and its command line (arguments space-separated).
struct ProcInfo {
  int ppid = -1;
  std::string cmdline;
};
ProcInfo ProcOf(int pid) {
  ProcInfo info;
  std::string stat = Read(fs::path("/proc") / std::to_string(pid) / "stat");
  size_t close = stat.rfind(')');
  if (close != std::string::npos) std::sscanf(stat.c_str() + close + 2, "%*c %d", &info.ppid);
  info.cmdline = Read(fs::path("/proc") / std::to_string(pid) / "cmdline");
  std::replace(info.cmdline.begin(), info.cmdline.end(), '\0', ' ');
  return info;
}

struct Pids {
  int supervisor = 0;
  std::vector<int> replicas;
};

// An app's record as a test writes it straight into the store (no plan, no supervisor).
schedulers::local::AppRecord Recorded(const testing::LocalSchedulerEnv& env, const std::string& app_id,
                                      const specs::AppDef& app, AppState state) {
  schedulers::local::AppRecord a;
  a.app_id = app_id;
  a.session = "torchx";
  a.name = app.name;
  a.appdef_json = specs::AppDefToJson(app);
  a.plan_json = "{}";
  a.app_dir = env.state_dir() + "/logs/torchx/" + app_id;
  a.state = state;
  a.created = a.updated = schedulers::local::NowSeconds();
  return a;
}

Pids PidsOf(const testing::LocalSchedulerEnv& env, const std::string& handle) {
  auto store = schedulers::local::StateStore::Open(env.state_dir());
  Pids p;
  std::string app_id = specs::ParseAppHandle(handle)->app_id;
  if (!store) return p;
  auto app = (*store)->GetApp(app_id);
  if (app && *app) p.supervisor = (*app)->supervisor_pid;
  auto reps = (*store)->GetReplicas(app_id);
  if (reps) {
    for (const auto& r : *reps) p.replicas.push_back(r.pid);
  }
  return p;
}

// Polls `pred` for up to 10 s: for effects of another process (a signal delivered, a group gone).
template <typename Pred>
bool Eventually(Pred pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

TEST_F(LocalSchedulerTest, CancelStopsTheWholeProcessGroup) {
  auto handle = runner_.Run(App({ShRole("s", "sleep 100 & sleep 100; wait", 2)}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  ASSERT_EQ(runner_.Status(*handle)->value().state, AppState::kRunning);
  Pids pids = PidsOf(env_, *handle);
  ASSERT_EQ(pids.replicas.size(), 2u);
  for (int pg : pids.replicas) EXPECT_TRUE(GroupAlive(pg));
  ASSERT_THAT(runner_.Cancel(*handle), IsOk());
  auto status = testing::WaitTerminal(runner_, *handle);
  EXPECT_EQ(status->state, AppState::kCancelled);
  for (const auto& r : status->roles[0].replicas) EXPECT_EQ(r.state, AppState::kCancelled);
  for (int pg : pids.replicas) EXPECT_TRUE(Eventually([&] { return !GroupAlive(pg); })) << pg;
  EXPECT_THAT(runner_.Cancel(*handle), IsOk());  // idempotent on a terminal app
  EXPECT_THAT(Read(fs::path(AppDir(env_, *handle)) / "SUCCESS"), HasSubstr("\"final_state\": \"CANCELLED\""));
}

TEST_F(LocalSchedulerTest, CancelEscalatesToSigkillAfterGrace) {
  auto handle = runner_.Run(App({ShRole("s", "trap '' TERM; while true; do sleep 0.1; done")}), "local_cwd",
                            {{"kill_grace_seconds", 0.3}});
  ASSERT_THAT(handle, IsOk());
  Pids pids = PidsOf(env_, *handle);
  ASSERT_THAT(runner_.Cancel(*handle), IsOk());
  auto status = testing::WaitTerminal(runner_, *handle);
  EXPECT_EQ(status->state, AppState::kCancelled);
  EXPECT_TRUE(Eventually([&] { return !GroupAlive(pids.replicas.at(0)); }));
}

// The failure cause the store recorded for `handle`'s end (Runner::ClassifyFailure).
void ExpectCause(runner::Runner& runner, const std::string& handle, schedulers::FailureCause want) {
  auto report = runner.ClassifyFailure(handle);
  ASSERT_THAT(report, IsOk());
  ASSERT_TRUE(report->has_value()) << handle;
  EXPECT_EQ(schedulers::FailureCauseName((*report)->cause), schedulers::FailureCauseName(want)) << (*report)->reason;
}

// Whether the supervisor runs the app: its watchdog (a fork of it) is there.
bool SupervisorUp(int supervisor) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    int pid = std::atoi(e.path().filename().c_str());
    if (pid <= 0) continue;
    ProcInfo info = ProcOf(pid);
    if (info.ppid == supervisor && info.cmdline.find("torchx-supervisor") != std::string::npos) return true;
  }
  return false;
}

TEST_F(LocalSchedulerTest, KilledSupervisorIsReportedAndNothingOutlivesIt) {
  auto handle = runner_.Run(App({ShRole("s", "sleep 100; true")}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  Pids pids = PidsOf(env_, *handle);
  ASSERT_GT(pids.supervisor, 0);
  ASSERT_TRUE(Eventually([&] { return SupervisorUp(pids.supervisor); }));
  // Its start is over once its diagnostics file is there (RedirectDiagnostics): the file's
  // creation in the app's directory would wake the wait below (a slow supervisor, under TSan,
  // makes it after the wait is armed).
  ASSERT_TRUE(Eventually([&] { return fs::exists(fs::path(AppDir(env_, *handle)) / "supervisor.log"); }));
  // A reader already waiting on the app (a managed job's driver) is woken by the end its watchdog
  // records (the summary it leaves in the app's directory), not by its own clock: well before 60 s.
  auto woken = std::async(std::launch::async, [&] { return runner_.WaitForUpdate(*handle, std::chrono::seconds(60)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the wait is armed
  ASSERT_EQ(woken.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  ASSERT_EQ(::kill(pids.supervisor, SIGKILL), 0);
  EXPECT_EQ(woken.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  // `sh` dies with its parent (PDEATHSIG); its child `sleep` is reached through the group.
  EXPECT_TRUE(Eventually([&] { return !GroupAlive(pids.replicas.at(0)); }));
  auto status = testing::WaitTerminal(runner_, *handle);
  EXPECT_EQ(status->state, AppState::kFailed);
  EXPECT_THAT(status->msg, HasSubstr("supervisor"));
  EXPECT_THAT(status->msg, HasSubstr("died unexpectedly"));
  ExpectCause(runner_, *handle, schedulers::FailureCause::kSupervisorLost);
  std::string summary = Read(fs::path(AppDir(env_, *handle)) / "SUCCESS");
  EXPECT_THAT(summary, HasSubstr("\"final_state\": \"FAILED\""));
  EXPECT_THAT(summary, HasSubstr("\"pid\": " + std::to_string(pids.replicas.at(0))));
}

// Killed at once, before its watchdog exists (a small app's supervisor takes over after `run`
// returns): the replica's leader dies with it, and the first reader finds the supervisor gone,
// records the app FAILED and stops what is left of the replica's group.
TEST_F(LocalSchedulerTest, SupervisorKilledAsRunReturnsIsCleanedUpByTheNextReader) {
  auto handle = runner_.Run(App({ShRole("s", "sleep 100; true")}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  Pids pids = PidsOf(env_, *handle);
  ASSERT_GT(pids.supervisor, 0);
  ASSERT_EQ(::kill(pids.supervisor, SIGKILL), 0);
  auto status = testing::WaitTerminal(runner_, *handle);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, AppState::kFailed);
  EXPECT_THAT(status->msg, HasSubstr("died unexpectedly"));
  EXPECT_TRUE(Eventually([&] { return !GroupAlive(pids.replicas.at(0)); }));
  ExpectCause(runner_, *handle, schedulers::FailureCause::kSupervisorLost);
}

TEST_F(LocalSchedulerTest, ReaderDetectsLostSupervisorWhenItsWatchdogIsGoneToo) {
  auto handle = runner_.Run(App({ShRole("s", "sleep 100")}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  Pids pids = PidsOf(env_, *handle);
  // SIGSTOP the whole session (supervisor, watchdog and replicas), then kill the supervisor and
  // the watchdog while stopped: only a reader can notice now.
  int sid = getsid(pids.supervisor);
  ASSERT_GT(sid, 0);
  ASSERT_EQ(::kill(pids.supervisor, SIGSTOP), 0);
  for (const auto& e : fs::directory_iterator("/proc")) {
    int pid = std::atoi(e.path().filename().c_str());
    if (pid > 0 && pid != pids.supervisor && getsid(pid) == sid && getpgid(pid) == getpgid(pids.supervisor)) {
      ::kill(pid, SIGKILL);  // the watchdog shares the supervisor's process group
    }
  }
  ::kill(pids.supervisor, SIGKILL);
  auto status = testing::WaitTerminal(runner_, *handle);
  EXPECT_EQ(status->state, AppState::kFailed);
  // The reader's message names the pid (the watchdog's does not).
  EXPECT_THAT(status->msg, HasSubstr("supervisor (pid " + std::to_string(pids.supervisor) + ") died unexpectedly"));
  EXPECT_TRUE(Eventually([&] { return !GroupAlive(pids.replicas.at(0)); }));
  ExpectCause(runner_, *handle, schedulers::FailureCause::kSupervisorLost);
}

TEST_F(LocalSchedulerTest, AppFromBeforeARebootIsReportedFailed) {
  // What a reboot leaves behind: a RUNNING record whose supervisor identity has another boot id.
  auto store = schedulers::local::StateStore::Open(env_.state_dir());
  ASSERT_THAT(store, IsOk());
  schedulers::local::AppRecord a =
      Recorded(env_, "rebooted-1", App({ShRole("s", "sleep 100")}, "rebooted"), AppState::kRunning);
  a.supervisor_pid = getpid();  // a live pid: only the boot id tells it is not ours
  a.supervisor_start = "00000000-0000-0000-0000-000000000000:12345";
  ASSERT_THAT((*store)->InsertApp(a), IsOk());
  auto status = runner_.Status("local_cwd://torchx/rebooted-1");
  ASSERT_THAT(status, IsOk());
  ASSERT_TRUE(status->has_value());
  EXPECT_EQ((*status)->state, AppState::kFailed);
  EXPECT_EQ((*status)->msg, "the host rebooted while the app was running");
  ExpectCause(runner_, "local_cwd://torchx/rebooted-1", schedulers::FailureCause::kNodeFailure);
}

// A state directory written before causes were recorded (schema 1: no apps.end_cause): opening
// it adds the column once; its records read with no cause (their state and exit codes decide),
// and new ends record theirs.
TEST_F(LocalSchedulerTest, AStoreFromBeforeCausesIsMigratedOnce) {
  std::string db_path = env_.state_dir() + "/local.db";
  fs::create_directories(env_.state_dir());
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
    const char* v1 =
        "CREATE TABLE apps (app_id TEXT PRIMARY KEY, session TEXT NOT NULL, name TEXT NOT NULL,"
        " appdef_json TEXT NOT NULL, plan_json TEXT NOT NULL, app_dir TEXT NOT NULL, state INTEGER NOT NULL,"
        " num_restarts INTEGER NOT NULL DEFAULT 0, msg TEXT NOT NULL DEFAULT '',"
        " structured_error_msg TEXT NOT NULL DEFAULT '<NONE>', supervisor_pid INTEGER NOT NULL DEFAULT 0,"
        " supervisor_start TEXT NOT NULL DEFAULT '', created REAL NOT NULL, updated REAL NOT NULL,"
        " cancel_requested INTEGER NOT NULL DEFAULT 0);"
        "INSERT INTO apps (app_id, session, name, appdef_json, plan_json, app_dir, state, msg, created, updated)"
        " VALUES ('old-1', 'torchx', 'old', '{}', '{}', '/nowhere', 5,"
        " 'the app''s supervisor died unexpectedly; its replicas were stopped', 1, 1);"
        "PRAGMA journal_mode=WAL; PRAGMA user_version = 1;";
    ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  for (int open = 0; open < 2; ++open) {  // the second open finds the new version and changes nothing
    auto store = schedulers::local::StateStore::Open(env_.state_dir());
    ASSERT_THAT(store, IsOk());
    auto old = (*store)->GetApp("old-1");
    ASSERT_THAT(old, IsOk());
    ASSERT_TRUE(old->has_value());
    EXPECT_EQ((*old)->state, AppState::kFailed);
    EXPECT_EQ((*old)->end_cause, std::nullopt);
  }
  ExpectCause(runner_, "local_cwd://torchx/old-1", schedulers::FailureCause::kUnknown);
  auto store = schedulers::local::StateStore::Open(env_.state_dir());
  ASSERT_THAT(store, IsOk());
  schedulers::local::AppRecord a = Recorded(env_, "new-1", App({ShRole("s", "true")}, "new"), AppState::kRunning);
  ASSERT_THAT((*store)->InsertApp(a), IsOk());
  ASSERT_THAT((*store)->SetAppState("new-1", AppState::kFailed, 0, "any words", "<NONE>",
                                    schedulers::FailureCause::kSupervisorLost),
              IsOk());
  ExpectCause(runner_, "local_cwd://torchx/new-1", schedulers::FailureCause::kSupervisorLost);
  auto listed = (*store)->ListApps();
  ASSERT_THAT(listed, IsOk());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ(listed->front().end_cause, schedulers::FailureCause::kSupervisorLost);
  EXPECT_EQ(listed->front().app_id, "new-1");  // newest first
  EXPECT_EQ(listed->back().msg, "the app's supervisor died unexpectedly; its replicas were stopped");
  // The migration also made the listing's index, and a listing reads it, not the table.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  std::string plan;
  auto collect = [](void* out, int, char** values, char**) {
    *static_cast<std::string*>(out) += std::string(values[3] ? values[3] : "") + "\n";
    return 0;
  };
  ASSERT_EQ(sqlite3_exec(db,
                         "EXPLAIN QUERY PLAN SELECT app_id, session, name, state, num_restarts, msg, supervisor_pid,"
                         " supervisor_start, created, updated, end_cause FROM apps ORDER BY created DESC",
                         collect, &plan, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_THAT(plan, HasSubstr("COVERING INDEX apps_listing"));
}

TEST_F(LocalSchedulerTest, CancelBeforeTheSupervisorStartsIsNotLost) {
  // A cancel that finds no supervisor pid yet leaves only a flag; the supervisor must honour it.
  std::string marker = env_.dir().path() + "/ran";
  specs::AppDef app = App({ShRole("s", "touch " + marker)}, "early");
  schedulers::local::PlanInputs in;
  in.app_id = "early-1";
  in.session = "torchx";
  in.cwd = fs::current_path().string();
  in.log_dir = env_.state_dir() + "/logs";
  auto plan = schedulers::local::BuildAppPlan(app, in);
  ASSERT_THAT(plan, IsOk());
  auto store = schedulers::local::StateStore::Open(env_.state_dir());
  ASSERT_THAT(store, IsOk());
  schedulers::local::AppRecord a;
  a.app_id = "early-1";
  a.session = "torchx";
  a.name = "early";
  a.appdef_json = specs::AppDefToJson(app);
  a.plan_json = schedulers::local::AppPlanToJson(*plan);
  a.app_dir = plan->app_dir;
  a.state = AppState::kSubmitted;
  a.created = a.updated = schedulers::local::NowSeconds();
  ASSERT_THAT((*store)->InsertApp(a), IsOk());
  ASSERT_THAT((*store)->RequestCancel("early-1"), IsOk());
  auto supervisor = schedulers::local::FindSupervisor();
  ASSERT_THAT(supervisor, IsOk());
  ASSERT_EQ(std::system((*supervisor + " " + env_.state_dir() + " early-1").c_str()), 0);
  auto status = testing::WaitTerminal(runner_, "local_cwd://torchx/early-1");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, AppState::kCancelled);
  EXPECT_FALSE(fs::exists(marker)) << "a replica ran after the cancel";
}

schedulers::local::AppPlan PlanOf(const testing::LocalSchedulerEnv& env, const specs::AppDef& app,
                                  const std::string& app_id) {
  schedulers::local::PlanInputs in;
  in.app_id = app_id;
  in.session = "torchx";
  in.cwd = fs::current_path().string();
  in.log_dir = env.state_dir() + "/logs";
  auto plan = schedulers::local::BuildAppPlan(app, in);
  EXPECT_THAT(plan, IsOk());
  return plan ? *plan : schedulers::local::AppPlan{};
}

// A small app's start as the caller makes it, without the record and the commit that follow.
Result<std::unique_ptr<schedulers::local::DetachedStart>> StartUnrecorded(
    const testing::LocalSchedulerEnv& env, const schedulers::local::AppPlan& plan,
    schedulers::local::SpawnMode mode = schedulers::local::DefaultSpawnMode()) {
  for (const auto& rp : plan.replicas) fs::create_directories(rp.log_dir);
  TORCHX_ASSIGN_OR_RETURN(std::string supervisor, schedulers::local::FindSupervisor());
  return schedulers::local::StartDetached(supervisor, env.state_dir(), plan.app_id, plan, mode);
}

// A small app's replicas are started by the caller, as children of a supervisor that is nobody's
// child of ours (detached_start.h), recorded RUNNING before `run` returns.
TEST_F(LocalSchedulerTest, ASmallAppIsStartedByTheCallerAndAdoptedByItsSupervisor) {
  auto handle = runner_.Run(App({ShRole("s", "sleep 100", 2)}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  auto status = runner_.Status(*handle);
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ((*status)->state, AppState::kRunning);
  Pids pids = PidsOf(env_, *handle);
  ASSERT_EQ(pids.replicas.size(), 2u);
  // Read once its exec is through: the record names the supervisor-to-be before its exec
  // completes, and /proc/<pid>/cmdline reads empty (or the caller's) until then.
  ProcInfo sup;
  EXPECT_TRUE(Eventually([&] {
    sup = ProcOf(pids.supervisor);
    return sup.cmdline.find("torchx-supervisor") != std::string::npos;
  }));
  EXPECT_THAT(sup.cmdline, AllOf(HasSubstr("torchx-supervisor --adopt "), HasSubstr(env_.state_dir())));
  EXPECT_NE(sup.ppid, getpid());
  EXPECT_EQ(getsid(pids.supervisor), pids.supervisor);  // its own session, as a daemon
  for (int replica : pids.replicas) {
    EXPECT_EQ(ProcOf(replica).ppid, pids.supervisor);
    EXPECT_EQ(getpgid(replica), replica);
    EXPECT_EQ(getsid(replica), pids.supervisor);
  }
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "the start left a child of the caller behind";
  ASSERT_THAT(runner_.Cancel(*handle), IsOk());
  auto ended = testing::WaitTerminal(runner_, *handle);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->state, AppState::kCancelled);
  for (int replica : pids.replicas) EXPECT_TRUE(Eventually([&] { return !GroupAlive(replica); }));
}

// A replica holds its stdin, stdout and stderr and nothing else of its launchers', whether the
// caller started it or the supervisor did (its retry).
TEST_F(LocalSchedulerTest, AReplicaInheritsOnlyItsStdio) {
  specs::Role role = ShRole("r", "ls /proc/self/fd | tr '\\n' ' '; echo; exit 1");
  role.max_retries = 1;
  auto handle = runner_.Run(App({role}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  auto status = testing::WaitTerminal(runner_, *handle);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->state, AppState::kFailed);
  fs::path dir = fs::path(AppDir(env_, *handle)) / "r" / "0";
  // `ls` sees its three and the directory it lists.
  EXPECT_EQ(Read(dir / "attempt_0" / "stdout.log"), "0 1 2 3 \n");
  EXPECT_EQ(Read(dir / "stdout.log"), "0 1 2 3 \n");
}

// A start the caller does not record (it failed to, or died) leaves nothing running: the
// supervisor stops the replicas and exits without touching the store.
TEST_F(LocalSchedulerTest, AnUnrecordedStartLeavesNothingRunning) {
  specs::AppDef app = App({ShRole("s", "sleep 100", 2)}, "abandoned");
  schedulers::local::AppPlan plan = PlanOf(env_, app, "abandoned-1");
  auto started = StartUnrecorded(env_, plan);
  ASSERT_THAT(started, IsOk());
  int sup = (*started)->supervisor_pid();
  std::vector<int> replicas;
  for (const auto& r : (*started)->replicas()) {
    EXPECT_EQ(r.exec_errno, 0);
    EXPECT_TRUE(GroupAlive(r.pid));
    replicas.push_back(r.pid);
  }
  started->reset();  // abandoned
  for (int replica : replicas) EXPECT_TRUE(Eventually([&] { return !GroupAlive(replica); }));
  EXPECT_TRUE(Eventually([&] { return ::kill(sup, 0) != 0 || ProcOf(sup).cmdline.empty(); }));
  auto store = schedulers::local::StateStore::Open(env_.state_dir());
  ASSERT_THAT(store, IsOk());
  auto found = (*store)->GetApp("abandoned-1");
  ASSERT_THAT(found, IsOk());
  EXPECT_FALSE(found->has_value());
}

// The chain made by forks (what a ThreadSanitizer build uses) starts what the chain made by
// CLONE_VM clones does, and reports it the same: each replica running in its own group or its
// exec's errno, the supervisor exec'd as `--adopt`, all of it stopped when the start is abandoned.
TEST_F(LocalSchedulerTest, AStartByForksReportsWhatAStartByClonesDoes) {
  std::vector<schedulers::local::SpawnMode> modes = {schedulers::local::SpawnMode::kFork};
  // ThreadSanitizer cannot follow a CLONE_VM child: there, the forks only (DefaultSpawnMode).
  if (schedulers::local::DefaultSpawnMode() == schedulers::local::SpawnMode::kCloneVm) {
    modes.push_back(schedulers::local::SpawnMode::kCloneVm);
  }
  for (auto mode : modes) {
    SCOPED_TRACE(mode == schedulers::local::SpawnMode::kFork ? "fork" : "clone");
    specs::Role missing = ShRole("m", "");
    missing.entrypoint = "/nonexistent/program";
    missing.args = {};
    std::string id = mode == schedulers::local::SpawnMode::kFork ? "forked-1" : "cloned-1";
    schedulers::local::AppPlan plan = PlanOf(env_, App({ShRole("s", "sleep 100", 2), missing}), id);
    auto started = StartUnrecorded(env_, plan, mode);
    ASSERT_THAT(started, IsOk());
    const auto& replicas = (*started)->replicas();
    ASSERT_EQ(replicas.size(), 3u);
    for (int i : {0, 1}) {
      EXPECT_EQ(replicas[i].exec_errno, 0);
      EXPECT_TRUE(GroupAlive(replicas[i].pid));
      EXPECT_FALSE(replicas[i].identity.empty());
    }
    EXPECT_EQ(replicas[2].exec_errno, ENOENT);
    int sup = (*started)->supervisor_pid();
    EXPECT_TRUE(Eventually([&] { return ProcOf(sup).cmdline.find("--adopt") != std::string::npos; }))
        << ProcOf(sup).cmdline;
    EXPECT_FALSE((*started)->supervisor_identity().empty());
    std::vector<int> pids = {replicas[0].pid, replicas[1].pid};
    started->reset();  // abandoned
    for (int pid : pids) EXPECT_TRUE(Eventually([&] { return !GroupAlive(pid); }));
    EXPECT_TRUE(Eventually([&] { return ::kill(sup, 0) != 0 || ProcOf(sup).cmdline.empty(); }));
  }
}

// Whether `pid` is a live process (an exited one that its parent has not reaped yet is not).
bool Alive(int pid) {
  std::string stat = Read(fs::path("/proc") / std::to_string(pid) / "stat");
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// The supervisor `sup` of a small app says it is idle on its link a moment after its app's end
// is recorded, and then waits with no child left (its watchdog gone and reaped) and asleep:
// what a test waits for before it runs the next app.
void LetItIdle(int sup) {
  fs::path task = fs::path("/proc") / std::to_string(sup) / "task" / std::to_string(sup);
  EXPECT_TRUE(Eventually([&] {
    std::string stat = Read(task / "stat");
    size_t close = stat.rfind(')');
    return Read(task / "children").empty() && close != std::string::npos && close + 2 < stat.size() &&
           stat[close + 2] == 'S';
  })) << "supervisor "
      << sup << " did not become idle";
}

// Back-to-back runs of one process: the supervisor of the app that ended takes the next app
// (warm_supervisor.h), with the caller's environment as it is at that run.
TEST_F(LocalSchedulerTest, AnIdleSupervisorTakesTheCallersNextApp) {
  auto first = runner_.Run(App({ShRole("s", "echo first")}), "local_cwd");
  ASSERT_THAT(first, IsOk());
  ASSERT_EQ(testing::WaitTerminal(runner_, *first)->state, AppState::kSucceeded);
  int sup = PidsOf(env_, *first).supervisor;
  // Apps that end at once: their supervisor says idle right after it says started.
  for (int i = 0; i < 6; ++i) {
    LetItIdle(sup);
    auto quick = runner_.Run(App({ShRole("s", "true")}), "local_cwd");
    ASSERT_THAT(quick, IsOk());
    EXPECT_EQ(PidsOf(env_, *quick).supervisor, sup) << "run " << i;
  }
  LetItIdle(sup);
  ASSERT_EQ(::setenv("TORCHX_WARM_TEST", "second run", 1), 0);
  auto second = runner_.Run(App({ShRole("s", "echo $TORCHX_WARM_TEST; echo oops >&2; exit 3")}), "local_cwd");
  ::unsetenv("TORCHX_WARM_TEST");
  ASSERT_THAT(second, IsOk());
  auto ended = testing::WaitTerminal(runner_, *second);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->state, AppState::kFailed);
  EXPECT_EQ(PidsOf(env_, *second).supervisor, sup) << "the idle supervisor was not reused";
  fs::path dir = AppDir(env_, *second);
  EXPECT_EQ(Read(dir / "s" / "0" / "stdout.log"), "second run\n");
  EXPECT_EQ(Read(dir / "s" / "0" / "stderr.log"), "oops\n");
  EXPECT_THAT(Read(dir / "SUCCESS"), HasSubstr("\"final_state\": \"FAILED\""));
  EXPECT_TRUE(fs::exists(dir / "supervisor.log"));
  // A program that is not there, and two replicas with a retry: as any supervisor reports them.
  LetItIdle(sup);
  specs::Role missing = ShRole("x", "");
  missing.entrypoint = "/nonexistent/program";
  missing.args = {};
  auto absent = runner_.Run(App({missing}), "local_cwd");
  ASSERT_THAT(absent, IsOk());
  auto failed = testing::WaitTerminal(runner_, *absent);
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->state, AppState::kFailed);
  EXPECT_THAT(failed->msg, HasSubstr("cannot start `/nonexistent/program`"));
  EXPECT_EQ(PidsOf(env_, *absent).supervisor, sup);
  LetItIdle(sup);
  specs::Role retried = ShRole("r", FlakyOnce((fs::path(env_.state_dir()) / "flaky").string()), 2);
  retried.max_retries = 1;
  auto twice = runner_.Run(App({retried}), "local_cwd");
  ASSERT_THAT(twice, IsOk());
  auto done = testing::WaitTerminal(runner_, *twice);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->state, AppState::kSucceeded);
  EXPECT_EQ(done->num_restarts, 1);
  EXPECT_EQ(PidsOf(env_, *twice).supervisor, sup);
  // A third, with the umask changed: the replicas would inherit the old one from the idle
  // supervisor, so a new supervisor starts it.
  LetItIdle(sup);
  mode_t old = ::umask(0027);
  auto third = runner_.Run(App({ShRole("s", "umask")}), "local_cwd");
  ::umask(old);
  ASSERT_THAT(third, IsOk());
  ASSERT_EQ(testing::WaitTerminal(runner_, *third)->state, AppState::kSucceeded);
  EXPECT_NE(PidsOf(env_, *third).supervisor, sup);
  EXPECT_EQ(Read(fs::path(AppDir(env_, *third)) / "s" / "0" / "stdout.log"), "0027\n");
}

// A cancel of an app that has ended, or one still on its way to the supervisor that ran it,
// does not reach the app that supervisor runs now.
TEST_F(LocalSchedulerTest, ACancelOfAnEndedAppSparesTheNextAppOfItsSupervisor) {
  auto first = runner_.Run(App({ShRole("s", "true")}), "local_cwd");
  ASSERT_THAT(first, IsOk());
  ASSERT_EQ(testing::WaitTerminal(runner_, *first)->state, AppState::kSucceeded);
  int sup = PidsOf(env_, *first).supervisor;
  LetItIdle(sup);
  auto second = runner_.Run(App({ShRole("s", "sleep 100")}), "local_cwd");
  ASSERT_THAT(second, IsOk());
  ASSERT_EQ(PidsOf(env_, *second).supervisor, sup);
  ASSERT_THAT(runner_.Cancel(*first), IsOk());
  sigval stale{};
  stale.sival_int = schedulers::local::CancelToken(specs::ParseAppHandle(*first)->app_id);
  ASSERT_EQ(::sigqueue(sup, SIGTERM, stale), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto status = runner_.Status(*second);
  ASSERT_THAT(status, IsOk());
  EXPECT_EQ((*status)->state, AppState::kRunning);
  // SIGTERM does not queue: a cancel of the second app sent while the stale one was pending is
  // merged into it. Its flag in the store (set before any signal) makes it count all the same.
  auto store = schedulers::local::StateStore::Open(env_.state_dir());
  ASSERT_THAT(store, IsOk());
  ASSERT_THAT((*store)->RequestCancel(specs::ParseAppHandle(*second)->app_id), IsOk());
  ASSERT_EQ(::sigqueue(sup, SIGTERM, stale), 0);
  auto ended = testing::WaitTerminal(runner_, *second);
  ASSERT_TRUE(ended);
  EXPECT_EQ(ended->state, AppState::kCancelled);
}

// An idle supervisor goes when the process that could hand it an app lets it go, and by itself
// once it has waited kWarmLingerMs.
TEST_F(LocalSchedulerTest, AnIdleSupervisorExitsWithItsCallerOrAfterItsLinger) {
  int released = 0;
  {
    runner::Runner r{*registry_};
    auto h = r.Run(App({ShRole("s", "true")}), "local_cwd");
    ASSERT_THAT(h, IsOk());
    ASSERT_EQ(testing::WaitTerminal(r, *h)->state, AppState::kSucceeded);
    released = PidsOf(env_, *h).supervisor;
    LetItIdle(released);
    EXPECT_TRUE(Alive(released)) << "the supervisor did not wait for a next app";
  }
  EXPECT_TRUE(Eventually([&] { return !Alive(released); }));
  auto h = runner_.Run(App({ShRole("s", "true")}), "local_cwd");
  ASSERT_THAT(h, IsOk());
  ASSERT_EQ(testing::WaitTerminal(runner_, *h)->state, AppState::kSucceeded);
  int lingering = PidsOf(env_, *h).supervisor;
  LetItIdle(lingering);
  std::this_thread::sleep_for(std::chrono::milliseconds(schedulers::local::kWarmLingerMs));
  EXPECT_TRUE(Eventually([&] { return !Alive(lingering); }));
  // The next run finds it gone and starts another.
  auto next = runner_.Run(App({ShRole("s", "true")}), "local_cwd");
  ASSERT_THAT(next, IsOk());
  ASSERT_EQ(testing::WaitTerminal(runner_, *next)->state, AppState::kSucceeded);
  EXPECT_NE(PidsOf(env_, *next).supervisor, lingering);
}

// A replica whose program is missing is reported by its exec's error, as the supervisor's own
// launcher reports it.
TEST_F(LocalSchedulerTest, AStartedReplicaThatCannotExecSaysWhy) {
  specs::Role role = ShRole("s", "");
  role.entrypoint = "no-such-program-here";
  role.args = {};
  schedulers::local::AppPlan plan = PlanOf(env_, App({role}, "noexec"), "noexec-1");
  auto started = StartUnrecorded(env_, plan);
  ASSERT_THAT(started, IsOk());
  ASSERT_EQ((*started)->replicas().size(), 1u);
  EXPECT_EQ((*started)->replicas()[0].exec_errno, ENOENT);
}

// The supervisor's writer leaves out rows the store already has, and a batch that moves a replica
// through two rows ends at the second whatever was written before.
TEST_F(LocalSchedulerTest, TheStoreWriterSkipsOnlyRowsTheStoreHas) {
  auto store = schedulers::local::StateStore::Open(env_.state_dir());
  ASSERT_THAT(store, IsOk());
  ASSERT_THAT((*store)->InsertApp(Recorded(env_, "rows-1", App({ShRole("s", "true")}, "rows"), AppState::kRunning)),
              IsOk());
  schedulers::local::StateStoreWriter writer(**store, "rows-1");
  auto row = [](AppState state, std::optional<int> code) {
    schedulers::local::ReplicaRecord r;
    r.app_id = "rows-1";
    r.role = "s";
    r.pid = 4242;
    r.state = state;
    r.exit_code = code;
    return r;
  };
  auto stored = [&] {
    auto rows = (*store)->GetReplicas("rows-1");
    EXPECT_THAT(rows, IsOk());
    EXPECT_EQ(rows->size(), 1u);
    return rows->empty() ? AppState::kUnknown : rows->front().state;
  };
  writer.RecordReplicasAndState({row(AppState::kRunning, std::nullopt)}, AppState::kRunning, 0, "", "<NONE>");
  EXPECT_EQ(stored(), AppState::kRunning);
  writer.PutReplicas({row(AppState::kSucceeded, 0)});
  EXPECT_EQ(stored(), AppState::kSucceeded);
  // RUNNING then SUCCEEDED again in one batch: the RUNNING row differs from what was written, and
  // the SUCCEEDED after it from the RUNNING before it: both go, the last one stays.
  writer.PutReplicas({row(AppState::kRunning, std::nullopt), row(AppState::kSucceeded, 0)});
  EXPECT_EQ(stored(), AppState::kSucceeded);
  writer.RecordEnd({row(AppState::kSucceeded, 0)}, AppState::kSucceeded, 0, "", "<NONE>", std::nullopt);
  EXPECT_EQ(stored(), AppState::kSucceeded);
  auto app = (*store)->GetApp("rows-1");
  ASSERT_TRUE(app.ok() && *app);
  EXPECT_EQ((*app)->state, AppState::kSucceeded);
}

TEST_F(LocalSchedulerTest, SupervisorIdlesWithoutCpu) {
  auto handle = runner_.Run(App({ShRole("s", "sleep 30")}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  int sup = PidsOf(env_, *handle).supervisor;
  // Between resource samples (the first 1 s after the start, then every 5 s by default) it sleeps.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto cpu_ticks = [sup] {
    std::string stat = Read("/proc/" + std::to_string(sup) + "/stat");
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));
    std::string f;
    long ticks = 0;
    for (int i = 3; i <= 15 && rest >> f; ++i) {
      if (i == 14 || i == 15) ticks += std::atol(f.c_str());  // utime + stime
    }
    return ticks;
  };
  long before = cpu_ticks();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  // Under ThreadSanitizer its runtime's own background thread wakes now and then: one tick (10 ms
  // in 3 s) is that thread, not the supervisor's loop (a fresh-clone tsan stage saw it once).
  long allowed = 0;
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
  allowed = 1;
#endif
#endif
  EXPECT_LE(cpu_ticks() - before, allowed) << "the supervisor used CPU while its replica slept";
  ASSERT_THAT(runner_.Cancel(*handle), IsOk());
  testing::WaitTerminal(runner_, *handle);
}

TEST_F(LocalSchedulerTest, DeleteRemovesEndedAppsOnly) {
  auto live = runner_.Run(App({ShRole("s", "sleep 100")}), "local_cwd");
  EXPECT_THAT(runner_.Delete(*live), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("cancel it")));
  ASSERT_THAT(runner_.Cancel(*live), IsOk());
  testing::WaitTerminal(runner_, *live);
  std::string dir = AppDir(env_, *live);
  ASSERT_TRUE(fs::exists(dir));
  ASSERT_THAT(runner_.Delete(*live), IsOk());
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_THAT(runner_.Status(*live), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(runner_.Delete(*live), StatusIs(StatusCode::kNotFound, ::testing::_));
}

TEST_F(LocalSchedulerTest, UnknownAppsAndBadHandles) {
  EXPECT_THAT(runner_.Status("local_cwd://torchx/nope-123"), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(runner_.Describe("local_cwd://torchx/nope-123"), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(runner_.Cancel("local_cwd://torchx/nope-123"), IsOk());
  EXPECT_THAT(runner_.Status("nope"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("is not of the form")));
  EXPECT_THAT(runner_.Status("slurmm://torchx/1"), StatusIs(StatusCode::kNotFound, HasSubstr("unknown scheduler")));
}

TEST_F(LocalSchedulerTest, LogsFollowUntilTheAppEndsAndFilterByRegex) {
  auto handle =
      runner_.Run(App({ShRole("s", "for i in 1 2 3; do echo line$i; sleep 0.2; done; echo other")}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  schedulers::LogOptions o;
  o.role = "s";
  o.follow = true;
  o.regex = "line";
  auto it = runner_.LogLines(*handle, o);
  ASSERT_THAT(it, IsOk());
  std::vector<std::string> got;
  while (true) {
    auto l = (*it)->Next();
    ASSERT_THAT(l, IsOk());
    if (!*l) break;
    got.push_back(**l);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"line1\n", "line2\n", "line3\n"}));
  EXPECT_TRUE(specs::IsTerminal(runner_.Status(*handle)->value().state));
  o.role = "nope";
  EXPECT_THAT(runner_.LogLines(*handle, o), StatusIs(StatusCode::kNotFound, HasSubstr("roles: [s]")));
  o.role = "s";
  o.regex = "(";
  EXPECT_THAT(runner_.LogLines(*handle, o), StatusIs(StatusCode::kInvalidArgument, HasSubstr("regex")));
}

TEST_F(LocalSchedulerTest, AnotherRunnerSeesAndCancelsTheApp) {
  auto handle = runner_.Run(App({ShRole("s", "sleep 100")}), "local_cwd");
  ASSERT_THAT(handle, IsOk());
  runner::Runner other(*registry_);
  EXPECT_EQ(other.Status(*handle)->value().state, AppState::kRunning);
  auto described = other.Describe(*handle);
  ASSERT_TRUE(described->has_value());
  EXPECT_EQ((*described)->roles[0].args[1], "sleep 100");
  ASSERT_THAT(other.Cancel(*handle), IsOk());
  EXPECT_EQ(testing::WaitTerminal(runner_, *handle)->state, AppState::kCancelled);
  auto listed = other.List("local_cwd");
  ASSERT_THAT(listed, IsOk());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].app_handle, *handle);
  // The `local` alias (Ax's default scheduler name) reads the same store.
  EXPECT_EQ(other.Status("local://torchx/" + (*listed)[0].app_id)->value().state, AppState::kCancelled);
}

TEST_F(LocalSchedulerTest, StateDirRunoptIsFoundFromABareHandle) {
  testing::ScopedTempDir other;
  auto handle = runner_.Run(App({ShRole("s", "true")}), "local_cwd", {{"state_dir", other.path()}});
  ASSERT_THAT(handle, IsOk());
  EXPECT_EQ(testing::WaitTerminal(runner_, *handle)->state, AppState::kSucceeded);
  EXPECT_TRUE(fs::exists(fs::path(other.path()) / "local.db"));
  runner::Runner fresh(*registry_);
  EXPECT_EQ(fresh.Status(*handle)->value().state, AppState::kSucceeded);
}

// A store made by several processes at once (a launcher and a pipeline's local step starting
// together in a new state directory): each opens it. The switch to WAL could deadlock with another
// process's schema transaction, which SQLite breaks by answering one of them BUSY at once.
TEST(StateStoreTest, AStoreMadeByManyProcessesAtOnceOpensInEach) {
  constexpr int kRounds = 20, kProcesses = 6;
  for (int round = 0; round < kRounds; ++round) {
    testing::ScopedTempDir dir;
    std::string state_dir = dir.path() + "/state";
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        auto store = schedulers::local::StateStore::Open(state_dir);
        if (!store) std::fprintf(stderr, "round %d: %s\n", round, store.error().message().c_str());
        std::_Exit(store ? 0 : 1);
      }
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
  }
}

TEST_F(LocalSchedulerTest, ManyConcurrentClientsLoseNoRecord) {
  constexpr int kThreads = 6, kAppsEach = 5;
  std::vector<std::vector<std::string>> handles(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      runner::Runner r(*registry_);
      for (int i = 0; i < kAppsEach; ++i) {
        auto h = r.Run(App({ShRole("s", "echo " + std::to_string(t * 100 + i), 2)}), "local_cwd");
        if (h) {
          handles[t].push_back(*h);
        } else {
          ADD_FAILURE() << "run " << t << "/" << i << ": " << h.error().message();
        }
        (void)r.List("local_cwd");
        for (const auto& prev : handles[t]) (void)r.Status(prev);
      }
    });
  }
  for (auto& th : threads) th.join();
  runner::Runner r(*registry_);
  int total = 0;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(handles[t].size(), static_cast<size_t>(kAppsEach));
    for (const auto& h : handles[t]) {
      auto s = testing::WaitTerminal(r, h);
      ASSERT_TRUE(s);
      EXPECT_EQ(s->state, AppState::kSucceeded) << h << " " << s->msg;
      ++total;
    }
  }
  EXPECT_EQ(r.List("local_cwd")->size(), static_cast<size_t>(total));
}

// One Runner shared by threads (Ax's thread pool around one runner): each thread gets its own
// local_cwd instance (its own store connection), so no run or wait sees another's half-made
// statement, and every app ends as its script says. A thread's instances go when it exits.
TEST_F(LocalSchedulerTest, OneRunnerSharedByThreads) {
  constexpr int kThreads = 8, kAppsEach = 10;
  runner::Runner shared(*registry_);
  std::vector<std::vector<std::pair<std::string, AppState>>> ended(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppsEach; ++i) {
        bool fail = (t + i) % 3 == 0;
        auto h = shared.Run(App({ShRole("s", fail ? "exit 3" : "true")}), "local_cwd");
        if (!h) {
          ADD_FAILURE() << "run " << t << "/" << i << ": " << h.error().message();
          continue;
        }
        auto s = shared.Wait(*h, std::chrono::milliseconds(50), std::chrono::seconds(60));
        if (!s || !*s) {
          ADD_FAILURE() << "wait " << *h << ": " << (s ? "no such app" : s.error().message());
          continue;
        }
        ended[t].emplace_back(*h, (*s)->state);
        EXPECT_EQ((*s)->state, fail ? AppState::kFailed : AppState::kSucceeded) << *h << " " << (*s)->msg;
      }
    });
  }
  for (auto& th : threads) th.join();
  size_t total = 0;
  for (const auto& e : ended) total += e.size();
  EXPECT_EQ(total, static_cast<size_t>(kThreads * kAppsEach));
  auto listed = shared.List("local_cwd");
  ASSERT_THAT(listed, IsOk());
  EXPECT_EQ(listed->size(), total);
}

}  // namespace
}  // namespace torchx
