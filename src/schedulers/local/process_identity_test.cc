#include "schedulers/local/process_identity.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

extern char** environ;

namespace torchx::schedulers::local {
namespace {

pid_t SpawnSleep() {
  pid_t pid = 0;
  char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
  EXPECT_EQ(posix_spawnp(&pid, "sleep", nullptr, nullptr, argv, environ), 0);
  return pid;
}

void Stop(pid_t pid) {
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
}

// The identity worked out from the clock around the start is the one /proc gives, whether it
// comes from the clock (the two readings in one tick) or from /proc (readings a tick apart).
TEST(NewChildIdentity, IsTheIdentityProcGives) {
  for (int i = 0; i < 20; ++i) {
    long long before = BoottimeNs();
    pid_t pid = SpawnSleep();
    long long after = BoottimeNs();
    EXPECT_EQ(NewChildIdentity(pid, before, after), ProcessIdentity(pid));
    EXPECT_EQ(NewChildIdentity(pid, before, after + 1000000000LL), ProcessIdentity(pid));
    EXPECT_EQ(NewChildIdentity(pid, -1, after), ProcessIdentity(pid));
    Stop(pid);
  }
}

}  // namespace
}  // namespace torchx::schedulers::local
