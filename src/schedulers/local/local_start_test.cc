// LocalScheduler's start paths over a fake ProcessStarter (process_starter.h): which path an app
// takes, what is recorded before a supervisor takes over, and the warm protocol's races, with a
// thread of the test playing the supervisor's end of each link. No process is started, so these
// run under ThreadSanitizer with the caller's logic whole.
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schedulers/local/local_scheduler.h"
#include "schedulers/local/process_starter.h"
#include "schedulers/local/state_store.h"
#include "schedulers/local/warm_supervisor.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::schedulers::local {
namespace {

using specs::AppState;
using ::testing::HasSubstr;

class FakeStarter final : public ProcessStarter {
 public:
  // Scripted.
  std::function<Result<int>(const std::vector<std::string>&)> run_to_exit;
  std::string context = "context-1";
  int pid = 4242;
  std::vector<std::string> env = {"A=1", "B=two words"};

  Result<int> RunToExit(const std::vector<std::string>& argv) override {
    ran.push_back(argv);
    return run_to_exit ? run_to_exit(argv) : Result<int>(0);
  }

  Result<std::unique_ptr<DetachedStart>> StartDetached(const std::string&, const std::string&,
                                                       const std::string& app_id, const AppPlan& plan) override {
    int link[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link) != 0) return InternalError("socketpair");
    int n = static_cast<int>(detached.size());
    std::vector<DetachedReplica> replicas(plan.replicas.size());
    for (size_t i = 0; i < replicas.size(); ++i) {
      replicas[i] = {1000 + 100 * n + static_cast<int>(i), "boot:" + std::to_string(i), 0};
    }
    detached.push_back(app_id);
    peers.push_back(link[1]);
    return std::make_unique<DetachedStart>(link[0], 9000 + n, "boot:supervisor", std::move(replicas));
  }

  std::vector<std::string> Environment() override { return env; }
  std::string LaunchContext() override { return context; }
  int ProcessId() override { return pid; }

  // Recorded.
  std::vector<std::vector<std::string>> ran;
  std::vector<std::string> detached;  // the app id of each detached start
  std::vector<int> peers;             // the supervisor's end of each start's link
};

// Up to 5 s for `fd` to be readable (or at its end).
bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 5000) == 1;
}

// What the supervisor's end has received until the caller closed its end or 5 s passed.
std::string Received(int fd, size_t at_most) {
  std::string out;
  while (out.size() < at_most && Readable(fd)) {
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// The supervisor's end at the caller's next app: the request, whole.
std::optional<WarmRequest> ReadRequest(int fd) {
  std::string text;
  while (Readable(fd)) {
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return std::nullopt;
    text.append(buf, static_cast<size_t>(n));
    bool malformed = false;
    if (auto parsed = ParseWarmRequest(text, malformed)) return parsed->first;
    if (malformed) return std::nullopt;
  }
  return std::nullopt;
}

void Send(int fd, std::string_view bytes) { ASSERT_TRUE(SendAll(fd, bytes)); }

specs::AppDef App(int replicas, std::string name = "app") {
  specs::Role r;
  r.name = "r";
  r.entrypoint = "sh";
  r.args = {"-c", "true"};
  r.num_replicas = replicas;
  r.resource = specs::Resource{1, 0, 128, {}, {}, {}};
  return specs::AppDef{std::move(name), {r}, {}};
}

class LocalStartTest : public ::testing::Test {
 protected:
  ~LocalStartTest() override {
    for (int fd : fake_->peers) ::close(fd);
  }

  Result<std::string> Run(int replicas) {
    TORCHX_ASSIGN_OR_RETURN(DryRunInfo info, scheduler_.SubmitDryRun(App(replicas), specs::Cfg{}));
    return scheduler_.Schedule(info);
  }
  // The app as the store holds it (nullopt: not recorded).
  std::optional<AppRecord> Recorded(const std::string& app_id) {
    auto store = StateStore::Open(dir_.path());
    if (!store.ok()) return std::nullopt;
    auto app = (*store)->GetApp(app_id);
    return app.ok() ? *app : std::nullopt;
  }
  // What a supervisor does for a warm request it accepts: the app recorded RUNNING (as itself).
  void RecordAsTheSupervisor(const WarmRequest& req) {
    auto store = StateStore::Open(dir_.path());
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT((*store)->InsertStartedApp(RunningRecordOf(req), {}), IsOk());
  }
  // A small app started detached, and its supervisor now idle.
  int IdleSupervisor() {
    size_t before = fake_->detached.size();
    auto first = Run(2);
    EXPECT_THAT(first, IsOk());
    EXPECT_EQ(fake_->detached.size(), before + 1);
    int peer = fake_->peers.back();
    EXPECT_EQ(Received(peer, 1), "y");
    Send(peer, std::string_view(&kWarmIdle, 1));
    return peer;
  }

  testing::ScopedTempDir dir_;
  std::shared_ptr<FakeStarter> fake_ = std::make_shared<FakeStarter>();
  LocalScheduler scheduler_{"local_cwd", "torchx", dir_.path(), nullptr, fake_};
};

TEST_F(LocalStartTest, ALargeAppIsRecordedThenHandedToItsSupervisorWhichMayFailIt) {
  std::optional<AppState> seen;
  fake_->run_to_exit = [&](const std::vector<std::string>& argv) -> Result<int> {
    if (auto rec = Recorded(argv.back())) seen = rec->state;
    return 1 << 8;  // exited 1 before the app started
  };
  auto id = Run(static_cast<int>(kDetachedStartMaxReplicas) + 1);
  EXPECT_THAT(id, StatusIs(StatusCode::kUnavailable, HasSubstr("exited before the app started")));
  ASSERT_EQ(fake_->ran.size(), 1u);
  ASSERT_EQ(fake_->ran[0].size(), 3u);
  EXPECT_EQ(fake_->ran[0][1], dir_.path());
  EXPECT_EQ(seen, AppState::kSubmitted) << "recorded before its supervisor was started";
  auto rec = Recorded(fake_->ran[0][2]);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->state, AppState::kFailed);
  EXPECT_EQ(rec->end_cause, FailureCause::kSupervisorLost);
  EXPECT_TRUE(fake_->detached.empty());
}

TEST_F(LocalStartTest, ASupervisorThatCannotStartFailsTheAppSayingWhy) {
  fake_->run_to_exit = [](const std::vector<std::string>& argv) -> Result<int> {
    return UnavailableError("cannot start " + argv[0] + ": No such file or directory");
  };
  auto id = Run(static_cast<int>(kDetachedStartMaxReplicas) + 1);
  EXPECT_THAT(id, StatusIs(StatusCode::kUnavailable, HasSubstr("No such file or directory")));
  auto rec = Recorded(fake_->ran.at(0)[2]);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->state, AppState::kFailed);
  EXPECT_THAT(rec->msg, HasSubstr("cannot start"));
}

TEST_F(LocalStartTest, ASmallAppIsRecordedRunningBeforeItsSupervisorIsToldToTakeOver) {
  auto id = Run(2);
  ASSERT_THAT(id, IsOk());
  ASSERT_EQ(fake_->detached, std::vector<std::string>{*id});
  EXPECT_EQ(Received(fake_->peers[0], 1), "y");
  auto rec = Recorded(*id);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->state, AppState::kRunning);
  EXPECT_EQ(rec->supervisor_pid, 9000);
  EXPECT_EQ(rec->supervisor_start, "boot:supervisor");
  EXPECT_TRUE(fake_->ran.empty()) << "no supervisor of its own was started";
}

TEST_F(LocalStartTest, ASmallAppThatCannotBeRecordedIsAbandonedAndItsSupervisorToldSo) {
  auto info = scheduler_.SubmitDryRun(App(1), specs::Cfg{});
  ASSERT_THAT(info, IsOk());
  {
    auto store = StateStore::Open(dir_.path());
    ASSERT_THAT(store, IsOk());
    AppRecord taken;
    taken.app_id = info->app_id;
    taken.app_dir = dir_.path();
    ASSERT_THAT((*store)->InsertApp(taken), IsOk());  // the id is taken: the record fails
  }
  EXPECT_THAT(scheduler_.Schedule(*info), ::testing::Not(IsOk()));
  ASSERT_EQ(fake_->peers.size(), 1u);
  EXPECT_EQ(Received(fake_->peers[0], 1), "") << "the link ends without the commit";
}

TEST_F(LocalStartTest, AnIdleSupervisorTakesTheNextAppWithTheCallersEnvironmentAndRecordsIt) {
  int peer = IdleSupervisor();
  fake_->env = {"A=2", "C=3"};
  std::optional<WarmRequest> req;
  std::thread supervisor([&] {
    req = ReadRequest(peer);
    if (req) RecordAsTheSupervisor(*req);
    Send(peer, std::string_view(&kWarmStarted, 1));
  });
  auto id = Run(2);
  supervisor.join();
  ASSERT_THAT(id, IsOk());
  ASSERT_TRUE(req);
  EXPECT_EQ(req->app_id, *id);
  EXPECT_EQ(req->env, (std::vector<std::string>{"A=2", "C=3"}));
  EXPECT_EQ(fake_->detached.size(), 1u) << "nothing new started";
  EXPECT_EQ(Recorded(*id)->state, AppState::kRunning);
}

TEST_F(LocalStartTest, AnAppTheIdleSupervisorRefusesIsAnErrorAndNotStartedElsewhere) {
  int peer = IdleSupervisor();
  std::thread supervisor([&] {
    (void)ReadRequest(peer);
    Send(peer, std::string(1, kWarmRefused) + "cannot open the store\n");
  });
  auto id = Run(1);
  supervisor.join();
  EXPECT_THAT(id, StatusIs(StatusCode::kUnavailable, HasSubstr("cannot open the store")));
  EXPECT_EQ(fake_->detached.size(), 1u);
}

// The supervisor's linger ends as the caller sends: it shuts its read side, the send fails, and
// the app starts as a new one.
TEST_F(LocalStartTest, ASupervisorWhoseLingerEndedAsTheAppWasSentLeavesItToAFreshStart) {
  int peer = IdleSupervisor();
  ASSERT_EQ(::shutdown(peer, SHUT_RD), 0);
  auto id = Run(2);
  ASSERT_THAT(id, IsOk());
  ASSERT_EQ(fake_->detached.size(), 2u);
  EXPECT_EQ(fake_->detached[1], *id);
  EXPECT_EQ(Received(fake_->peers[1], 1), "y");
  EXPECT_EQ(Recorded(*id)->state, AppState::kRunning);
}

TEST_F(LocalStartTest, ASupervisorGoneMidHandOffKeepsTheAppOnlyIfItRecordedIt) {
  int peer = IdleSupervisor();
  std::thread recorded_then_died([&] {
    if (auto req = ReadRequest(peer)) RecordAsTheSupervisor(*req);
    ::shutdown(peer, SHUT_RDWR);
  });
  auto kept = Run(1);
  recorded_then_died.join();
  ASSERT_THAT(kept, IsOk()) << "its readers find its supervisor dead";
  EXPECT_EQ(Recorded(*kept)->state, AppState::kRunning);

  // A second idle supervisor (the first link was closed: a new start), gone before it recorded
  // anything.
  int peer2 = IdleSupervisor();
  std::optional<std::string> lost_id;
  std::thread died([&] {
    if (auto req = ReadRequest(peer2)) lost_id = req->app_id;
    ::shutdown(peer2, SHUT_RDWR);
  });
  auto lost = Run(1);
  died.join();
  EXPECT_THAT(lost, StatusIs(StatusCode::kUnavailable, HasSubstr("stopped before")));
  ASSERT_TRUE(lost_id);
  EXPECT_FALSE(Recorded(*lost_id)) << "nothing recorded";
}

TEST_F(LocalStartTest, AChangedLaunchContextOrAForkedCallerNeverReusesASupervisor) {
  int peer = IdleSupervisor();
  fake_->context = "context-2";  // say, a new umask
  ASSERT_THAT(Run(1), IsOk());
  EXPECT_EQ(fake_->detached.size(), 2u);
  EXPECT_EQ(Received(peer, 1), "") << "the old link is closed: its supervisor exits";

  int peer2 = fake_->peers[1];
  EXPECT_EQ(Received(peer2, 1), "y");
  Send(peer2, std::string_view(&kWarmIdle, 1));
  fake_->pid = 4343;  // a forked child of the caller
  ASSERT_THAT(Run(1), IsOk());
  EXPECT_EQ(fake_->detached.size(), 3u);
  EXPECT_EQ(Received(peer2, 1), "");
}

}  // namespace
}  // namespace torchx::schedulers::local
