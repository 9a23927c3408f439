// The local supervisor's policy against fakes: a fake launcher whose processes die when signalled
// (unless told to ignore SIGTERM), a fake clock driving the grace timer, and a store that records
// what the policy writes. No real process, no sleep: the whole suite runs in milliseconds. The
// integration tests (tests/integration/local) check the same behaviour against real processes.
#include "schedulers/local/supervisor_policy.h"

#include <signal.h>

#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schedulers/local/failure_cause.h"
#include "schedulers/local/supervisor_store.h"
#include "schedulers/local/watchdog.h"
#include "testing/fake_clock.h"

namespace torchx::schedulers::local {
namespace {

using specs::AppState;
using specs::RetryPolicy;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

struct RoleSpec {
  std::string name;
  int replicas = 1;
  int max_retries = 0;
  RetryPolicy policy = RetryPolicy::kApplication;
};

AppPlan Plan(const std::vector<RoleSpec>& roles, double grace = 10) {
  AppPlan plan;
  plan.app_id = "app";
  plan.app_dir = "/logs/app";
  plan.kill_grace_seconds = grace;
  for (const RoleSpec& role : roles) {
    plan.roles[role.name] = RolePolicy{role.max_retries, role.policy};
    for (int i = 0; i < role.replicas; ++i) {
      ReplicaPlan r;
      r.role = role.name;
      r.replica_id = i;
      r.argv = {"prog"};
      r.log_dir = fmt::format("/logs/app/{}/{}", role.name, i);
      r.error_file = r.log_dir + "/error.json";
      plan.replicas.push_back(std::move(r));
    }
  }
  return plan;
}

using torchx::testing::FakeClock;

std::chrono::nanoseconds Seconds(double s) { return std::chrono::nanoseconds(std::llround(s * 1e9)); }

// Records what the policy asks the store to write.
class FakeStore final : public SupervisorStore {
 public:
  struct App {
    AppState state;
    int num_restarts;
    std::string msg;
    std::string structured_error;
    std::optional<FailureCause> cause;
  };
  void SetAppState(AppState state, int num_restarts, const std::string& msg, const std::string& err,
                   std::optional<FailureCause> cause) override {
    apps.push_back({state, num_restarts, msg, err, cause});
  }
  void PutReplicas(const std::vector<ReplicaRecord>& rows) override {
    if (rows.empty()) return;
    ++transactions;
    for (const ReplicaRecord& r : rows) replicas[{r.role, r.replica_id}] = r;
  }
  const ReplicaRecord& Replica(const std::string& role, int id) { return replicas.at({role, id}); }

  std::vector<App> apps;
  std::map<std::pair<std::string, int>, ReplicaRecord> replicas;
  int transactions = 0;
};

// Processes that exist only in memory. A signal other than an ignored SIGTERM makes the process
// die; its exit is reported when the test lets time pass (Settle), as a SIGCHLD would be.
class FakeLauncher {
 public:
  struct Process {
    size_t replica;
    bool alive = true;
    bool dying = false;
  };

  // Configuration, per replica, of its next start.
  std::map<size_t, std::string> fail_next;        // no process: OnSpawnFailed(why)
  std::map<size_t, std::string> exec_error_next;  // exec fails: exits with 127
  std::set<size_t> ignore_sigterm;

  int Launch(size_t replica) {
    int pid = next_pid_++;
    procs_[pid] = Process{replica};
    current_[replica] = pid;
    return pid;
  }
  void Signal(size_t replica, int sig) {
    auto cur = current_.find(replica);
    if (cur == current_.end()) return;
    Process& p = procs_.at(cur->second);
    if (!p.alive || p.dying) return;  // a dead leader's leftovers: nothing to model
    if (sig == SIGTERM && ignore_sigterm.count(replica)) return;
    Die(cur->second, -sig);
  }
  void Die(int pid, int code) {
    procs_.at(pid).dying = true;
    exits_.emplace_back(pid, code);
  }
  // The replica's current process exits now; false if it is not running.
  bool Exit(size_t replica) {
    auto cur = current_.find(replica);
    if (cur == current_.end() || !procs_.at(cur->second).alive) return false;
    procs_.at(cur->second).alive = false;
    return true;
  }
  // The next reported exit of a process that died: (replica, code).
  std::optional<std::pair<size_t, int>> NextExit() {
    while (!exits_.empty()) {
      auto [pid, code] = exits_.front();
      exits_.pop_front();
      Process& p = procs_.at(pid);
      if (!p.alive) continue;
      p.alive = false;
      return std::pair{p.replica, code};
    }
    return std::nullopt;
  }
  bool Alive(size_t replica) const {
    auto cur = current_.find(replica);
    return cur != current_.end() && procs_.at(cur->second).alive;
  }
  int Pid(size_t replica) const { return current_.at(replica); }

 private:
  int next_pid_ = 100;
  std::map<int, Process> procs_;
  std::map<size_t, int> current_;
  std::deque<std::pair<int, int>> exits_;
};

std::string SignalName(int sig) { return sig == SIGTERM ? "TERM" : sig == SIGKILL ? "KILL" : std::to_string(sig); }

// Carries the policy's actions out against the fakes, the way supervisor.cc does against the OS,
// and keeps a readable trace of them.
class Sim {
 public:
  explicit Sim(AppPlan plan) : plan_(std::move(plan)), policy_("app", plan_) {}

  void Start() {
    Apply(policy_.Start());
    store.PutReplicas(policy_.TakeReplicaRecords());
    Apply(policy_.OnLaunched());
    EndBatch();
  }
  // Replica `i`'s process exits by itself with `code`.
  void Exit(size_t i, int code, std::string structured_error = "<NONE>",
            std::chrono::file_clock::time_point written = std::chrono::file_clock::time_point::max()) {
    ASSERT_TRUE(launcher.Exit(i)) << "replica " << i << " is not running";
    Apply(policy_.OnExited(ReplicaExit{i, code, std::move(structured_error), written}));
    EndBatch();
  }
  void Cancel(int sig = SIGTERM) {
    Apply(policy_.OnCancel(sig));
    EndBatch();
  }
  // Reports the exits of the processes that the policy's signals killed.
  void Settle() {
    while (auto exit = launcher.NextExit()) Apply(policy_.OnExited(ReplicaExit{exit->first, exit->second}));
    EndBatch();
  }
  // Lets `seconds` pass on the fake clock; fires the grace timer if it is due.
  void Advance(double seconds) {
    clock.Advance(Seconds(seconds));
    if (grace_deadline_ && *grace_deadline_ <= clock.Now()) {
      grace_deadline_.reset();
      trace_.push_back("grace expired");
      Apply(policy_.OnGraceExpired());
    }
    EndBatch();
  }

  std::vector<std::string> TakeTrace() { return std::exchange(trace_, {}); }
  bool finished() const { return finish_.has_value(); }
  const action::Finish& finish() const { return *finish_; }
  bool grace_armed() const { return grace_deadline_.has_value(); }
  const SupervisorPolicy& policy() const { return policy_; }

  FakeClock clock;
  FakeLauncher launcher;
  FakeStore store;

 private:
  std::string Label(size_t i) const { return ReplicaLabel(plan_.replicas[i]); }

  void Apply(const SupervisorActions& actions) {
    for (const SupervisorAction& a : actions) {
      if (const auto* spawn = std::get_if<action::Spawn>(&a)) {
        size_t i = spawn->replica;
        trace_.push_back(fmt::format("spawn {} attempt {}", Label(i), spawn->attempt));
        if (auto fail = launcher.fail_next.find(i); fail != launcher.fail_next.end()) {
          std::string why = fail->second;
          launcher.fail_next.erase(fail);
          Apply(policy_.OnSpawnFailed(i, why));
          continue;
        }
        int pid = launcher.Launch(i);
        std::string exec_error;
        if (auto e = launcher.exec_error_next.find(i); e != launcher.exec_error_next.end()) {
          exec_error = e->second;
          launcher.exec_error_next.erase(e);
          launcher.Die(pid, 127);
        }
        Apply(policy_.OnSpawned(i, pid, fmt::format("boot:{}", pid), exec_error));
      } else if (const auto* sig = std::get_if<action::Signal>(&a)) {
        trace_.push_back(fmt::format("signal {} {}", Label(sig->replica), SignalName(sig->signal)));
        launcher.Signal(sig->replica, sig->signal);
      } else if (const auto* arm = std::get_if<action::ArmGrace>(&a)) {
        trace_.push_back(fmt::format("arm grace {}s", arm->seconds));
        grace_deadline_ = clock.Now() + Seconds(arm->seconds);
      } else if (std::holds_alternative<action::DisarmGrace>(a)) {
        trace_.push_back("disarm grace");
        grace_deadline_.reset();
      } else if (const auto* rec = std::get_if<action::RecordApp>(&a)) {
        trace_.push_back(fmt::format("app {} {} '{}'", specs::AppStateName(rec->state), rec->num_restarts, rec->msg));
        store.SetAppState(rec->state, rec->num_restarts, rec->msg, rec->structured_error, std::nullopt);
      } else if (const auto* fin = std::get_if<action::Finish>(&a)) {
        trace_.push_back(
            fmt::format("finish {} {} '{}'", specs::AppStateName(fin->state), fin->num_restarts, fin->msg));
        EXPECT_FALSE(finish_) << "finished twice";
        finish_ = *fin;
        store.PutReplicas(fin->replicas);
        store.SetAppState(fin->state, fin->num_restarts, fin->msg, fin->structured_error, fin->cause);
      }
    }
  }

  // As the supervisor's loop does after each batch of events: one store transaction, then the
  // end of the app once nothing is left running.
  void EndBatch() {
    store.PutReplicas(policy_.TakeReplicaRecords());
    if (policy_.ShouldFinish()) Apply(policy_.Finish());
  }

  AppPlan plan_;
  SupervisorPolicy policy_;
  std::vector<std::string> trace_;
  std::optional<std::chrono::steady_clock::time_point> grace_deadline_;
  std::optional<action::Finish> finish_;
};

TEST(SupervisorPolicy, StartsEveryReplicaAndRecordsRunning) {
  Sim sim(Plan({{"a", 2}, {"b", 1}}));
  sim.Start();
  EXPECT_THAT(sim.TakeTrace(),
              ElementsAre("spawn a/0 attempt 0", "spawn a/1 attempt 0", "spawn b/0 attempt 0", "app RUNNING 0 ''"));
  EXPECT_EQ(sim.store.transactions, 1);
  const ReplicaRecord& a1 = sim.store.Replica("a", 1);
  EXPECT_EQ(a1.app_id, "app");
  EXPECT_EQ(a1.state, AppState::kRunning);
  EXPECT_EQ(a1.pid, sim.launcher.Pid(1));
  EXPECT_EQ(a1.proc_start, fmt::format("boot:{}", a1.pid));
  EXPECT_EQ(a1.attempt, 0);
  EXPECT_FALSE(a1.exit_code);
}

TEST(SupervisorPolicy, SucceedsOnceEveryReplicaHasSucceeded) {
  Sim sim(Plan({{"r", 2}}));
  sim.Start();
  sim.TakeTrace();
  sim.Exit(0, 0);
  EXPECT_FALSE(sim.finished());
  EXPECT_EQ(sim.store.Replica("r", 0).state, AppState::kSucceeded);
  sim.Exit(1, 0);
  ASSERT_TRUE(sim.finished());
  // Nothing is running, so no grace timer; the leftovers of both groups are killed at the end.
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("signal r/0 KILL", "signal r/1 KILL", "finish SUCCEEDED 0 ''"));
  EXPECT_EQ(sim.store.apps.back().state, AppState::kSucceeded);
  EXPECT_EQ(sim.store.apps.back().cause, std::nullopt);
  for (const ReplicaRecord& r : sim.finish().replicas) {
    EXPECT_EQ(r.state, AppState::kSucceeded);
    EXPECT_EQ(r.exit_code, 0);
  }
}

TEST(SupervisorPolicy, ReplicaPolicyRestartsOnlyTheFailedReplica) {
  Sim sim(Plan({{"r", 2, 1, RetryPolicy::kReplica}}));
  sim.Start();
  sim.TakeTrace();
  sim.Exit(1, 3);
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("app RUNNING 1 'restarting after r/1 exited with code 3 (restart 1)'",
                                           "arm grace 10s", "disarm grace", "signal r/1 KILL", "spawn r/1 attempt 1"));
  EXPECT_TRUE(sim.launcher.Alive(0));
  EXPECT_EQ(sim.store.Replica("r", 1).attempt, 1);
  EXPECT_EQ(sim.store.Replica("r", 1).state, AppState::kRunning);
  EXPECT_EQ(sim.store.Replica("r", 1).pid, sim.launcher.Pid(1));
  sim.Exit(0, 0);
  sim.Exit(1, 0);
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().state, AppState::kSucceeded);
  EXPECT_EQ(sim.finish().num_restarts, 1);
}

TEST(SupervisorPolicy, RolePolicyStopsTheRoleAndRestartsItOnceAllAreDown) {
  Sim sim(Plan({{"a", 2, 1, RetryPolicy::kRole}, {"b", 1}}));
  sim.Start();
  sim.TakeTrace();
  sim.Exit(0, 1);
  // a/1 is asked to stop; nothing restarts until it is down, and b is left alone.
  EXPECT_THAT(sim.TakeTrace(),
              ElementsAre("signal a/1 TERM", "app RUNNING 1 'restarting after a/0 exited with code 1 (restart 1)'",
                          "arm grace 10s"));
  sim.Settle();
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("disarm grace", "signal a/0 KILL", "spawn a/0 attempt 1", "signal a/1 KILL",
                                           "spawn a/1 attempt 1"));
  EXPECT_EQ(sim.store.Replica("a", 1).attempt, 1);
  EXPECT_EQ(sim.store.Replica("b", 0).attempt, 0);
  EXPECT_TRUE(sim.launcher.Alive(2));
  for (size_t i = 0; i < 3; ++i) sim.Exit(i, 0);
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().state, AppState::kSucceeded);
}

TEST(SupervisorPolicy, ApplicationPolicyRestartsEverything) {
  Sim sim(Plan({{"a", 1, 2}, {"b", 2}}));
  sim.Start();
  sim.TakeTrace();
  sim.Exit(0, 4);
  EXPECT_THAT(sim.TakeTrace(),
              ElementsAre("signal b/0 TERM", "signal b/1 TERM",
                          "app RUNNING 1 'restarting after a/0 exited with code 4 (restart 1)'", "arm grace 10s"));
  sim.Settle();
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("disarm grace", "signal a/0 KILL", "spawn a/0 attempt 1", "signal b/0 KILL",
                                           "spawn b/0 attempt 1", "signal b/1 KILL", "spawn b/1 attempt 1"));
}

TEST(SupervisorPolicy, ApplicationRestartForgetsEarlierSuccesses) {
  Sim sim(Plan({{"a", 1, 1}, {"b", 1}}));
  sim.Start();
  sim.Exit(1, 0);  // b succeeds first
  sim.Exit(0, 3);  // then a fails: b is down already, so both restart at once
  EXPECT_EQ(sim.store.Replica("b", 0).attempt, 1);
  sim.TakeTrace();
  sim.Exit(0, 0);
  // b's first success must not count for its second attempt: nothing is stopped yet.
  EXPECT_THAT(sim.TakeTrace(), IsEmpty());
  EXPECT_FALSE(sim.finished());
  sim.Exit(1, 0);
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().state, AppState::kSucceeded);
}

TEST(SupervisorPolicy, RetriesExhaustedFailsWithTheExitMessage) {
  Sim sim(Plan({{"r", 1, 2}}));
  sim.Start();
  sim.Exit(0, 2);
  sim.Exit(0, 2);
  EXPECT_FALSE(sim.finished());
  sim.TakeTrace();
  sim.Exit(0, 2);
  ASSERT_TRUE(sim.finished());
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("signal r/0 KILL", "finish FAILED 2 'r/0 exited with code 2'"));
  EXPECT_EQ(sim.store.apps.back().cause, FailureCause::kUserError);
  EXPECT_EQ(sim.store.Replica("r", 0).state, AppState::kFailed);
  EXPECT_EQ(sim.store.Replica("r", 0).exit_code, 2);
  EXPECT_EQ(sim.store.Replica("r", 0).attempt, 2);
}

TEST(SupervisorPolicy, FailureStopsTheOthersAndEndsOnlyWhenAllAreGone) {
  Sim sim(Plan({{"a", 1}, {"b", 1}}, 3));
  sim.launcher.ignore_sigterm.insert(1);
  sim.Start();
  sim.TakeTrace();
  sim.Exit(0, 9);
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("signal b/0 TERM", "arm grace 3s"));
  EXPECT_FALSE(sim.finished());
  EXPECT_EQ(sim.store.apps.back().state, AppState::kRunning);
  sim.Advance(3);
  sim.Settle();
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().state, AppState::kFailed);
  EXPECT_EQ(sim.finish().msg, "a/0 exited with code 9");
  EXPECT_EQ(sim.store.Replica("b", 0).state, AppState::kFailed);  // killed, not cancelled
  EXPECT_EQ(sim.store.Replica("b", 0).exit_code, -SIGKILL);
}

TEST(SupervisorPolicy, MaxRetriesCountPerRole) {
  Sim sim(Plan({{"a", 1, 1}, {"b", 1, 1}}));
  sim.Start();
  sim.Exit(0, 1);  // a's one retry
  sim.Settle();
  sim.Exit(1, 1);  // b's one retry: a's use does not count against it
  sim.Settle();
  EXPECT_FALSE(sim.finished());
  EXPECT_EQ(sim.policy().num_restarts(), 2);
  sim.Exit(0, 1);
  sim.Settle();
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().state, AppState::kFailed);
  EXPECT_EQ(sim.finish().msg, "a/0 exited with code 1");
  EXPECT_EQ(sim.finish().num_restarts, 2);
}

TEST(SupervisorPolicy, CancelStopsEveryReplicaAndKillsAtGraceExpiry) {
  Sim sim(Plan({{"r", 2}}, 5));
  sim.launcher.ignore_sigterm.insert(1);
  sim.Start();
  sim.TakeTrace();
  sim.Cancel(SIGTERM);
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("signal r/0 TERM", "signal r/1 TERM", "arm grace 5s"));
  sim.Settle();
  EXPECT_EQ(sim.store.Replica("r", 0).state, AppState::kCancelled);
  EXPECT_EQ(sim.store.Replica("r", 0).exit_code, -SIGTERM);
  EXPECT_FALSE(sim.finished());
  sim.Advance(4.9);
  EXPECT_THAT(sim.TakeTrace(), IsEmpty()) << "no SIGKILL before the grace period is over";
  sim.Advance(0.1);
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("grace expired", "signal r/1 KILL"));
  sim.Settle();
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().state, AppState::kCancelled);
  EXPECT_EQ(sim.finish().msg, "cancelled (signal 15)");
  EXPECT_EQ(sim.finish().cause, FailureCause::kCancelled);
  for (const ReplicaRecord& r : sim.finish().replicas) EXPECT_EQ(r.state, AppState::kCancelled);
}

TEST(SupervisorPolicy, CancelMessageNamesTheSignal) {
  Sim sim(Plan({{"r", 1}}));
  sim.Start();
  sim.Cancel(SIGINT);
  sim.Cancel(SIGTERM);  // a second stop request changes nothing
  sim.Settle();
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().msg, "cancelled (signal 2)");
}

TEST(SupervisorPolicy, CancelWhileWaitingForARestartNeverRestarts) {
  Sim sim(Plan({{"r", 2, 3}}, 2));
  sim.launcher.ignore_sigterm.insert(1);
  sim.Start();
  sim.Exit(0, 1);  // r/1 is asked to stop for the restart, and ignores it
  sim.TakeTrace();
  sim.Cancel();
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("signal r/1 TERM", "arm grace 2s"));
  sim.Advance(2);
  sim.Settle();
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("grace expired", "signal r/1 KILL", "signal r/0 KILL", "signal r/1 KILL",
                                           "finish CANCELLED 1 'cancelled (signal 15)'"));
  EXPECT_EQ(sim.store.Replica("r", 0).state, AppState::kFailed);  // it failed before the cancel
  EXPECT_EQ(sim.store.Replica("r", 1).state, AppState::kCancelled);
  EXPECT_EQ(sim.store.Replica("r", 1).attempt, 0);
}

TEST(SupervisorPolicy, RestartWaitsForAReplicaIgnoringSigtermUntilGraceExpires) {
  Sim sim(Plan({{"a", 2, 1, RetryPolicy::kRole}}, 10));
  sim.launcher.ignore_sigterm.insert(1);
  sim.Start();
  sim.Exit(0, 1);
  sim.TakeTrace();
  sim.Settle();
  sim.Advance(9.999);
  EXPECT_THAT(sim.TakeTrace(), IsEmpty());
  EXPECT_TRUE(sim.launcher.Alive(1));
  sim.Advance(0.001);
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("grace expired", "signal a/1 KILL"));
  sim.Settle();
  EXPECT_THAT(sim.TakeTrace(), ElementsAre("disarm grace", "signal a/0 KILL", "spawn a/0 attempt 1", "signal a/1 KILL",
                                           "spawn a/1 attempt 1"));
  EXPECT_FALSE(sim.grace_armed());
}

TEST(SupervisorPolicy, ExecFailureExitsWith127AndNamesTheSpawnError) {
  Sim sim(Plan({{"r", 1}}));
  sim.launcher.exec_error_next[0] = "cannot start `prog` in /w: No such file or directory";
  sim.Start();
  EXPECT_EQ(sim.store.apps.back().state, AppState::kRunning);
  sim.Settle();
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().state, AppState::kFailed);
  EXPECT_EQ(sim.finish().msg, "r/0: cannot start `prog` in /w: No such file or directory");
  EXPECT_EQ(sim.finish().cause, FailureCause::kUserError);
  EXPECT_EQ(sim.store.Replica("r", 0).exit_code, 127);
}

TEST(SupervisorPolicy, SpawnFailureIsAnExitWith127) {
  Sim sim(Plan({{"r", 2}}));
  sim.launcher.fail_next[1] = "cannot start a process: Resource temporarily unavailable";
  sim.Start();
  // r/0 is stopped; the app never was RUNNING.
  EXPECT_THAT(sim.TakeTrace(),
              ElementsAre("spawn r/0 attempt 0", "spawn r/1 attempt 0", "signal r/0 TERM", "arm grace 10s"));
  EXPECT_THAT(sim.store.apps, IsEmpty());
  EXPECT_EQ(sim.store.Replica("r", 1).state, AppState::kFailed);
  EXPECT_EQ(sim.store.Replica("r", 1).exit_code, 127);
  EXPECT_EQ(sim.store.Replica("r", 1).pid, 0);
  sim.Settle();
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().msg, "r/1: cannot start a process: Resource temporarily unavailable");
}

TEST(SupervisorPolicy, SpawnFailureOfTheOnlyReplicaEndsTheApp) {
  Sim sim(Plan({{"r", 1}}));
  sim.launcher.fail_next[0] = "cannot create pipes: Too many open files";
  sim.Start();
  ASSERT_TRUE(sim.finished());
  EXPECT_THAT(sim.TakeTrace(),
              ElementsAre("spawn r/0 attempt 0", "finish FAILED 0 'r/0: cannot create pipes: Too many open files'"));
}

TEST(SupervisorPolicy, SpawnErrorIsTheRestartReasonAndIsForgottenAfterIt) {
  Sim sim(Plan({{"r", 1, 1}}));
  sim.launcher.exec_error_next[0] = "cannot start `prog` in /w: Permission denied";
  sim.Start();
  sim.Settle();
  EXPECT_EQ(sim.store.apps.back().msg,
            "restarting after r/0: cannot start `prog` in /w: Permission denied (restart 1)");
  sim.Exit(0, 5);
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().msg, "r/0 exited with code 5");
}

TEST(SupervisorPolicy, AppStructuredErrorIsTheEarliestReplicaError) {
  Sim sim(Plan({{"a", 1}, {"b", 1}}));
  sim.Start();
  auto t0 = std::chrono::file_clock::now();
  sim.Exit(0, 1, "late", t0 + std::chrono::seconds(2));
  sim.Exit(1, 1, "early", t0 + std::chrono::seconds(1));  // b had written its error file before a did
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.finish().structured_error, "early");
  EXPECT_EQ(sim.store.Replica("a", 0).structured_error_msg, "late");
}

TEST(SupervisorPolicy, CancelledReplicasKeepNoStructuredError) {
  Sim sim(Plan({{"r", 1}}));
  sim.Start();
  sim.Cancel();
  sim.Exit(0, 1, "boom");  // it exits on the SIGTERM, having written an error file
  ASSERT_TRUE(sim.finished());
  EXPECT_EQ(sim.store.Replica("r", 0).structured_error_msg, "<NONE>");
  EXPECT_EQ(sim.finish().structured_error, "<NONE>");
}

TEST(SupervisorPolicy, OneStoreTransactionPerBatch) {
  Sim sim(Plan({{"r", 3}}));
  sim.Start();
  sim.Cancel();
  int before = sim.store.transactions;
  sim.Settle();  // three exits in one batch, then the final rows
  EXPECT_EQ(sim.store.transactions, before + 2);
}

TEST(WatchdogLog, ReadsReplicaGroupsAndDoneAcrossSplitReads) {
  WatchdogLog log;
  std::string text = WatchdogReplicaLine(120, "b:77") + "\n" + WatchdogReplicaLine(121, "b:78") + "\n";
  log.Feed(text.substr(0, 5));
  EXPECT_THAT(log.groups(), IsEmpty());
  log.Feed(text.substr(5));
  EXPECT_THAT(log.groups(), ElementsAre(Pair(120, "b:77"), Pair(121, "b:78")));
  EXPECT_FALSE(log.done());
  log.Feed("do");
  EXPECT_FALSE(log.done());
  log.Feed("ne\n");
  EXPECT_TRUE(log.done());
}

TEST(WatchdogLog, ALaterAttemptReplacesTheGroupAndJunkIsIgnored) {
  WatchdogLog log;
  log.Feed("120 b:1\nnonsense\n120 b:2\n");
  EXPECT_THAT(log.groups(), ElementsAre(Pair(120, "b:2")));
  log.Feed("done");  // no newline yet: not done
  EXPECT_FALSE(log.done());
}

// A managed job's view of local_cwd's ends: the recorded cause, whatever the message says (the
// watchdog's and a reader's sentences for a dead supervisor differ; neither is read back).
TEST(ClassifyLocalEnd, ReadsTheRecordedCauseNotTheMessage) {
  AppRecord app;
  app.state = AppState::kFailed;
  struct Case {
    std::string msg;
    FailureCause cause;
  };
  for (const Case& c : std::vector<Case>{
           {std::string(kSupervisorDiedWatchdog), FailureCause::kSupervisorLost},
           {"the app's supervisor (pid 42) died unexpectedly; its replicas were stopped",
            FailureCause::kSupervisorLost},
           {std::string(kSupervisorNeverStarted), FailureCause::kSupervisorLost},
           {std::string(kHostRebooted), FailureCause::kNodeFailure},
           {"any words at all", FailureCause::kSupervisorLost},
           {"trainer/0 exited with code 3", FailureCause::kUserError},
       }) {
    app.msg = c.msg;
    app.end_cause = c.cause;
    FailureReport report = ClassifyLocalEnd(app, {});
    EXPECT_EQ(report.cause, c.cause) << c.msg;
    EXPECT_EQ(report.reason, c.msg);
  }
  // The same sentences with no cause recorded (a record from before causes were): unknown.
  app.end_cause.reset();
  app.msg = std::string(kSupervisorDiedWatchdog);
  EXPECT_EQ(ClassifyLocalEnd(app, {}).cause, FailureCause::kUnknown);
}

// A record from before causes were recorded: its replicas' exit codes (the kernel's facts) still
// tell a user's exit from a kill.
TEST(ClassifyLocalEnd, OlderRecordsReadTheExitCodes) {
  AppRecord app;
  app.state = AppState::kFailed;
  ReplicaRecord r;
  r.role = "trainer";
  r.state = AppState::kFailed;
  r.exit_code = 3;
  FailureReport report = ClassifyLocalEnd(app, {r});
  EXPECT_EQ(report.cause, FailureCause::kUserError);
  EXPECT_EQ(report.reason, "trainer/0 exited with code 3");
  r.exit_code = -9;
  report = ClassifyLocalEnd(app, {r});
  EXPECT_EQ(report.cause, FailureCause::kUnknown);
  EXPECT_EQ(report.reason, "trainer/0 was killed by signal 9 (not by the launcher)");
  app.state = AppState::kCancelled;
  EXPECT_EQ(ClassifyLocalEnd(app, {r}).cause, FailureCause::kCancelled);
}

// What the supervisor records at each end: the cause comes with the state, from the exit code.
TEST(ClassifyLocalEnd, SignalledReplicaReadsInWords) {
  AppRecord app;
  app.state = AppState::kFailed;
  app.end_cause = CauseOfReplicaExit(-9);
  app.msg = "trainer/0 exited with code -9";
  ReplicaRecord r;
  r.role = "trainer";
  r.state = AppState::kFailed;
  r.exit_code = -9;
  FailureReport report = ClassifyLocalEnd(app, {r});
  EXPECT_EQ(report.cause, FailureCause::kUnknown);
  EXPECT_EQ(report.reason, "trainer/0 was killed by signal 9 (not by the launcher)");
  EXPECT_EQ(CauseOfReplicaExit(1), FailureCause::kUserError);
  EXPECT_EQ(CauseOfReplicaExit(127), FailureCause::kUserError);
}

}  // namespace
}  // namespace torchx::schedulers::local
