// Peak RSS of a command, in KiB. A child inherits its parent's RSS high-water mark across exec
// (Linux keeps the larger of the old and new address space's), so a command started straight
// from the benchmark's Python would report Python's size; started from this small process it
// reports its own. Usage: peak_rss cmd [args...]; prints the KiB on stdout, the command's output
// goes to /dev/null.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdio>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: peak_rss cmd [args...]\n");
    return 2;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  if (posix_spawnp(&pid, argv[1], &actions, nullptr, argv + 1, environ) != 0) return 1;
  int status;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) != pid) return 1;
  std::printf("%ld\n", usage.ru_maxrss);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
