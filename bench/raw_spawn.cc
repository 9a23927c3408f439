// The baseline for the fan-out benchmark: spawn N copies of a command at once and wait for all,
// with nothing else (no logs, no state). Usage: raw_spawn N cmd [args...]
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: raw_spawn N cmd [args...]\n");
    return 2;
  }
  int n = std::atoi(argv[1]);
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid;
    if (posix_spawnp(&pid, argv[2], nullptr, nullptr, argv + 2, environ) != 0) return 1;
    pids.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : pids) {
    int status;
    waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  return failed ? 1 : 0;
}
