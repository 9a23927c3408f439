// The warm supervisor's request, cancel token, launch context and caller-side pool
// (warm_supervisor.h), over real socket pairs where the pool reads them.
#include "schedulers/local/warm_supervisor.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

namespace torchx::schedulers::local {
namespace {

using namespace std::string_literals;

WarmRequest Request() {
  WarmRequest r;
  r.app_id = "app-1";
  r.session = "torchx";
  r.name = "app";
  r.appdef_json = R"({"name": "app", "roles": []})";
  r.plan_json = "{\"line\nbreak\": 1}";
  r.app_dir = "/state/logs/torchx/app-1";
  r.created = 1764000000.25;
  const char* env[] = {"A=1", "PATH=/bin:/usr/bin", "EMPTY=", "MULTI=a\nb", nullptr};
  r.env = EnvironmentOf(env);
  return r;
}

TEST(WarmRequestTest, RoundTripsTheRecordAndTheEnvironment) {
  WarmRequest in = Request();
  std::string wire = EncodeWarmRequest(in);
  bool malformed = true;
  auto parsed = ParseWarmRequest(wire, malformed);
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(malformed);
  EXPECT_EQ(parsed->second, wire.size());
  const WarmRequest& out = parsed->first;
  EXPECT_EQ(out.app_id, in.app_id);
  EXPECT_EQ(out.session, in.session);
  EXPECT_EQ(out.name, in.name);
  EXPECT_EQ(out.appdef_json, in.appdef_json);
  EXPECT_EQ(out.plan_json, in.plan_json);
  EXPECT_EQ(out.app_dir, in.app_dir);
  EXPECT_DOUBLE_EQ(out.created, in.created);
  EXPECT_EQ(out.env, (std::vector<std::string>{"A=1", "PATH=/bin:/usr/bin", "EMPTY=", "MULTI=a\nb"}));
  // Every proper prefix is a request still coming, not a malformed one.
  for (size_t n = 0; n < wire.size(); ++n) {
    EXPECT_FALSE(ParseWarmRequest(wire.substr(0, n), malformed)) << n;
    EXPECT_FALSE(malformed) << n;
  }
  in.env.clear();
  auto empty = ParseWarmRequest(EncodeWarmRequest(in), malformed);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->first.env.empty());
}

TEST(WarmRequestTest, MalformedRequestsAreRefused) {
  bool malformed = false;
  WarmRequest no_id = Request();
  no_id.app_id.clear();
  WarmRequest no_dir = Request();
  no_dir.app_dir.clear();
  for (const std::string& bad : {"x\n"s, "-1\nab"s, "99999999999999\n"s, EncodeWarmRequest(no_id),
                                 EncodeWarmRequest(no_dir), std::string(40, '1')}) {
    EXPECT_FALSE(ParseWarmRequest(bad, malformed)) << bad;
    EXPECT_TRUE(malformed) << bad;
  }
  std::string wire = EncodeWarmRequest(Request());
  std::string unterminated_env = wire.substr(0, wire.size() - 1) + "x";
  EXPECT_FALSE(ParseWarmRequest(unterminated_env, malformed));
  EXPECT_TRUE(malformed) << "an environment entry without its NUL";
}

TEST(CancelTokenTest, StableNonNegativeAndDistinct) {
  EXPECT_EQ(CancelToken("echo-abc123"), CancelToken("echo-abc123"));
  EXPECT_NE(CancelToken("echo-abc123"), CancelToken("echo-abc124"));
  EXPECT_GE(CancelToken("x"), 0);
  EXPECT_GE(CancelToken(""), 0);
}

TEST(LaunchContextTest, ChangesWithWhatAReplicaWouldInherit) {
  std::string before = LaunchContext();
  EXPECT_EQ(before, LaunchContext());
  EXPECT_NE(before.find("Umask:"), std::string::npos);
  EXPECT_NE(before.find("Cpus_allowed:"), std::string::npos);
  mode_t old = ::umask(0077);
  std::string changed = LaunchContext();
  ::umask(old);
  EXPECT_NE(before, changed);
  EXPECT_EQ(before, LaunchContext());
}

// The pool over socket pairs: the test holds the supervisors' ends.
class WarmPoolTest : public ::testing::Test {
 protected:
  int Add(const std::string& state_dir, const std::string& context = "ctx") {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    pool_.Add({fds[0], 1000 + static_cast<int>(ends_.size()), "id", state_dir, "/sup", context, ::getpid()});
    ends_.push_back(fds[1]);
    return fds[1];
  }
  void TearDown() override {
    for (int fd : ends_) ::close(fd);
  }
  static void Idle(int end) { ASSERT_EQ(::send(end, &kWarmIdle, 1, 0), 1); }
  static bool PeerClosed(int end) {
    char c;  // EOF, or a reset when the closed end had unread bytes (an idle byte)
    ssize_t n = ::recv(end, &c, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

  WarmSupervisors pool_;
  std::vector<int> ends_;
};

TEST_F(WarmPoolTest, ClaimsOnlyAnIdleSupervisorOfTheSameStateDirAndContext) {
  int busy = Add("/state");
  int other_dir = Add("/elsewhere");
  int idle = Add("/state");
  Idle(other_dir);
  EXPECT_FALSE(pool_.Claim("/state", "/sup", "ctx", getpid())) << "none is idle yet for /state";
  Idle(idle);
  auto claimed = pool_.Claim("/state", "/sup", "ctx", getpid());
  ASSERT_TRUE(claimed);
  EXPECT_EQ(claimed->pid, 1002);
  EXPECT_FALSE(pool_.Claim("/state", "/sup", "ctx", getpid())) << "claimed once";
  EXPECT_FALSE(pool_.Claim("/state", "/other-sup", "ctx", getpid()));
  EXPECT_FALSE(PeerClosed(busy));
  // A different launch context drops every supervisor made in the old one.
  EXPECT_FALSE(pool_.Claim("/elsewhere", "/sup", "new ctx", getpid()));
  EXPECT_TRUE(PeerClosed(other_dir));
  EXPECT_TRUE(PeerClosed(busy));
  ::close(claimed->fd);
}

TEST_F(WarmPoolTest, ASupervisorGoneSinceItSaidIdleIsDropped) {
  int end = Add("/state");
  Idle(end);
  ::close(end);
  ends_.pop_back();
  EXPECT_FALSE(pool_.Claim("/state", "/sup", "ctx", getpid()));
  int live = Add("/state");
  Idle(live);
  auto claimed = pool_.Claim("/state", "/sup", "ctx", getpid());
  ASSERT_TRUE(claimed);
  ::close(claimed->fd);
}

TEST_F(WarmPoolTest, KeepsAtMostThePoolSizeAndClosesTheOldest) {
  int oldest = Add("/state");
  for (size_t i = 1; i < kWarmPoolSize; ++i) Add("/state");
  EXPECT_FALSE(PeerClosed(oldest));
  Add("/state");
  EXPECT_TRUE(PeerClosed(oldest));
}

// "started" with the idle byte right behind it (an app that ended at once): the answer is the
// first byte alone, and the idle byte is left for the next claim.
TEST(ReadWarmAnswerTest, ReadsNoFurtherThanTheAnswer) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  std::string started{kWarmStarted, kWarmIdle};
  ASSERT_EQ(::send(fds[1], started.data(), started.size(), 0), 2);
  EXPECT_EQ(ReadWarmAnswer(fds[0]), std::string(1, kWarmStarted));
  char c = 0;
  ASSERT_EQ(::recv(fds[0], &c, 1, MSG_DONTWAIT), 1);
  EXPECT_EQ(c, kWarmIdle);
  std::string refused = std::string(1, kWarmRefused) + "no such plan\n";
  ASSERT_EQ(::send(fds[1], refused.data(), refused.size(), 0), static_cast<ssize_t>(refused.size()));
  EXPECT_EQ(ReadWarmAnswer(fds[0]), refused);
  ::close(fds[1]);
  EXPECT_EQ(ReadWarmAnswer(fds[0]), "") << "EOF";
  ::close(fds[0]);
}

// The supervisor's side: it says idle, and a request sent whole is served even when it lands
// just as the linger ends; nothing or a partial request ends the wait.
TEST(AwaitNextAppTest, TakesARequestOrEndsAtTheLingerOrEof) {
  sigset_t mask;  // it blocks the supervisor's signals, as the supervisor has them already
  ::sigprocmask(SIG_SETMASK, nullptr, &mask);
  struct Restore {
    sigset_t* mask;
    ~Restore() { ::sigprocmask(SIG_SETMASK, mask, nullptr); }
  } restore{&mask};
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  WarmRequest req = Request();
  req.app_id = "app-9";
  req.env = {"K=V"};
  std::string wire = EncodeWarmRequest(req);
  ASSERT_EQ(::send(fds[0], wire.data(), wire.size(), 0), static_cast<ssize_t>(wire.size()));
  auto got = AwaitNextApp(fds[1], 0);  // queued before the linger ended: served
  ASSERT_TRUE(got);
  EXPECT_EQ(got->app_id, "app-9");
  EXPECT_EQ(got->env, std::vector<std::string>{"K=V"});
  char c = 0;
  ASSERT_EQ(::recv(fds[0], &c, 1, 0), 1);
  EXPECT_EQ(c, kWarmIdle);
  EXPECT_FALSE(AwaitNextApp(fds[1], 50)) << "nothing came";
  EXPECT_EQ(::send(fds[0], "x", 1, MSG_NOSIGNAL), -1) << "after its linger, the door is shut";
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  ASSERT_EQ(::send(fds[0], wire.data(), 4, 0), 4);
  ::close(fds[0]);
  EXPECT_FALSE(AwaitNextApp(fds[1], 1000)) << "a partial request, then EOF";
  ::close(fds[1]);
}

}  // namespace
}  // namespace torchx::schedulers::local
