// A small app started by the caller of `run` (see detached_start.h).
#include "schedulers/local/detached_start.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>

#include <fmt/format.h>

#include "schedulers/local/process_identity.h"
#include "schedulers/local/process_launcher.h"
#include "schedulers/local/replica_child.h"

extern char** environ;

namespace torchx::schedulers::local {
namespace {

constexpr size_t kStackBytes = 128 * 1024;
constexpr char kRecorded = 'y';

// Everything the helper and the supervisor-to-be read and write: they run in the caller's memory
// on stacks of their own, make system calls only, and report here.
struct Chain {
  // Set by the caller.
  bool fork = false;  // SpawnMode::kFork
  const char* supervisor = nullptr;
  char* const* supervisor_argv = nullptr;
  int recorded_w = -1;  // the supervisor-to-be writes its line here; the caller's commit follows
  int recorded_r = -1;  // kept by the supervisor
  size_t n = 0;
  std::array<ReplicaChildArgs, kDetachedStartMaxReplicas> replicas{};
  std::array<int, kDetachedStartMaxReplicas> out_r{}, err_r{};  // kept by the supervisor
  char* supervisor_stack = nullptr;                             // tops of the stacks
  char* replica_stack = nullptr;
  sigset_t supervisor_mask{};  // what the supervisor blocks (its signalfd's signals)
  // Set by the helper and the supervisor-to-be.
  pid_t supervisor_pid = -1;
  long long supervisor_before = 0, supervisor_after = 0;
  int error = 0;  // errno of a clone, the line's write or the supervisor's exec
  std::array<pid_t, kDetachedStartMaxReplicas> pids{};
  std::array<long long, kDetachedStartMaxReplicas> before{}, after{};
  std::array<char, 1024> line{};  // kDetachedStartMaxReplicas * 4 numbers of at most 11 characters
};

// No formatting library between a clone and an exec: digits by hand.
TORCHX_CHILD_CODE char* PutNumber(char* p, long value) {
  if (value < 0) {
    *p++ = '-';
    value = -value;
  }
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

// A child running fn(arg), its parent resuming once the child has exec'd or exited (SpawnMode).
// The pipe of a fork is close-on-exec: the child's exec or exit closes its end, and the parent's
// read ends then. Its ends are kept clear of 0-2, where the supervisor-to-be puts /dev/null.
// `wait_for_exec` false: the parent reaps the child itself (the caller and its helper), so no
// pipe, whose write end a fork by another of the caller's threads could hold open.
TORCHX_CHILD_CODE pid_t Spawn(bool fork_mode, int (*fn)(void*), char* stack, void* arg, bool wait_for_exec = true) {
  if (!fork_mode) return clone(fn, stack, CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
  if (!wait_for_exec) {
    pid_t pid = fork();
    if (pid == 0) _exit(fn(arg));
    return pid;
  }
  int done[2];
  if (pipe2(done, O_CLOEXEC) != 0) return -1;
  for (int& end : done) {
    if (end > 2) continue;
    int moved = fcntl(end, F_DUPFD_CLOEXEC, 3);
    ::close(end);
    end = moved;
  }
  if (done[0] < 0 || done[1] < 0) {
    int saved = errno;
    for (int end : done) {
      if (end >= 0) ::close(end);
    }
    errno = saved;
    return -1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    ::close(done[0]);
    _exit(fn(arg));
  }
  int saved = errno;
  ::close(done[1]);
  if (pid > 0) {
    char b = 0;
    while (::read(done[0], &b, 1) < 0 && errno == EINTR) {
    }
  }
  ::close(done[0]);
  errno = saved;
  return pid;
}

TORCHX_CHILD_CODE void KillStarted(Chain* c, size_t started) {
  for (size_t i = 0; i < started; ++i) {
    kill(-c->pids[i], SIGKILL);
    kill(c->pids[i], SIGKILL);
    while (waitpid(c->pids[i], nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

[[noreturn]] TORCHX_CHILD_CODE void SupervisorToBeFailed(Chain* c, size_t started) {
  c->error = errno ? errno : EIO;
  KillStarted(c, started);
  _exit(127);
}

// The supervisor-to-be: out of the caller's session and stdio, the replicas started as its
// children, its line written, then the exec. Every signal is blocked (the caller blocked them
// before the first clone) until the supervisor's own mask is set just before the exec.
TORCHX_CHILD_CODE int SupervisorToBe(void* p) {
  auto* c = static_cast<Chain*>(p);
  setsid();
  // A caller's ignored signals (Python ignores SIGPIPE and SIGXFSZ) would stay ignored in the
  // supervisor and, through it, in what it starts.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) SupervisorToBeFailed(c, 0);
  for (int fd = 0; fd <= 2; ++fd) {
    if (devnull != fd && dup2(devnull, fd) < 0) SupervisorToBeFailed(c, 0);
    fcntl(fd, F_SETFD, 0);
  }
  if (devnull > 2) ::close(devnull);
  // Nothing the caller holds open reaches the replicas or the supervisor.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  // The open-file limit the supervisor gives the replicas it starts (Setup), for these too.
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  pid_t self = getpid();
  char* line = c->line.data();
  line = PutNumber(line, static_cast<long>(c->n));
  for (size_t i = 0; i < c->n; ++i) {
    ReplicaChildArgs& r = c->replicas[i];
    r.supervisor = self;
    c->before[i] = BoottimeNs();
    pid_t pid = Spawn(c->fork, &ReplicaChildMain, c->replica_stack, &r);
    c->after[i] = BoottimeNs();
    if (pid < 0) SupervisorToBeFailed(c, i);
    c->pids[i] = pid;
    ::close(r.out_fd);
    ::close(r.err_fd);
    for (long v : {static_cast<long>(pid), static_cast<long>(r.error), static_cast<long>(c->out_r[i]),
                   static_cast<long>(c->err_r[i])}) {
      *line++ = ' ';
      line = PutNumber(line, v);
    }
  }
  *line++ = '\n';
  auto len = static_cast<size_t>(line - c->line.data());
  if (::write(c->recorded_w, c->line.data(), len) != static_cast<ssize_t>(len)) SupervisorToBeFailed(c, c->n);
  fcntl(c->recorded_r, F_SETFD, 0);
  for (size_t i = 0; i < c->n; ++i) {
    fcntl(c->out_r[i], F_SETFD, 0);
    fcntl(c->err_r[i], F_SETFD, 0);
  }
  sigprocmask(SIG_SETMASK, &c->supervisor_mask, nullptr);
  execve(c->supervisor, c->supervisor_argv, environ);
  SupervisorToBeFailed(c, c->n);
}

// The helper: the supervisor-to-be's parent for as long as it takes to exec, then gone, so the
// supervisor is nobody's child but init's (or a subreaper's), as a double fork leaves it.
TORCHX_CHILD_CODE int Helper(void* p) {
  auto* c = static_cast<Chain*>(p);
  c->supervisor_before = BoottimeNs();
  pid_t pid = Spawn(c->fork, &SupervisorToBe, c->supervisor_stack, c);
  c->supervisor_after = BoottimeNs();
  c->supervisor_pid = pid;
  if (pid < 0) c->error = errno;
  _exit(0);
}

// The chain's three stacks, mapped once per process (a thread starting an app holds the lock).
std::mutex& StacksLock() {
  static std::mutex lock;
  return lock;
}
char* Stacks() {
  static char* stacks = [] {
    void* p = mmap(nullptr, 3 * kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }();
  return stacks;
}

// Where the chain reports: the caller's heap when its children share the caller's memory, a
// shared mapping when they are copies of it (kFork).
class ChainMemory {
 public:
  explicit ChainMemory(SpawnMode mode) {
    if (mode == SpawnMode::kCloneVm) {
      chain_ = new Chain();
      return;
    }
    void* p = mmap(nullptr, sizeof(Chain), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    shared_ = true;
    chain_ = new (p) Chain();
    chain_->fork = true;
  }
  ~ChainMemory() {
    if (!chain_) return;
    if (!shared_) {
      delete chain_;
      return;
    }
    chain_->~Chain();
    munmap(chain_, sizeof(Chain));
  }
  ChainMemory(const ChainMemory&) = delete;
  ChainMemory& operator=(const ChainMemory&) = delete;
  Chain* get() const { return chain_; }

 private:
  Chain* chain_ = nullptr;
  bool shared_ = false;
};

// A pipe's ends (or a socket pair's), close-on-exec and clear of stdin/out/err (the
// supervisor-to-be puts /dev/null there).
bool Pipe(int fds[2], bool socket = false) {
  if (socket ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0 : pipe2(fds, O_CLOEXEC) != 0) return false;
  for (int k = 0; k < 2; ++k) {
    if (fds[k] > 2) continue;
    int moved = fcntl(fds[k], F_DUPFD_CLOEXEC, 3);
    ::close(fds[k]);
    fds[k] = moved;
  }
  if (fds[0] >= 0 && fds[1] >= 0) return true;
  for (int k = 0; k < 2; ++k) {
    if (fds[k] >= 0) ::close(fds[k]);
  }
  return false;
}

// The descriptors a start opens, closed on every way out (the supervisor has its own copies).
struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) ::close(fd);
  }
};

}  // namespace

bool StartsDetached(const AppPlan& plan) {
  return !plan.replicas.empty() && plan.replicas.size() <= kDetachedStartMaxReplicas;
}

SpawnMode DefaultSpawnMode() {
#ifdef TORCHX_LAUNCH_WITH_FORK
  return SpawnMode::kFork;
#else
  return SpawnMode::kCloneVm;
#endif
}

void DetachedStart::Commit() {
  if (recorded_fd_ < 0) return;
  char c = kRecorded;
  // A supervisor gone by now is found dead by the next reader of the app; no SIGPIPE for the caller.
  while (::send(recorded_fd_, &c, 1, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

void DetachedStart::Abandon() {
  if (recorded_fd_ < 0) return;
  ::close(recorded_fd_);
  recorded_fd_ = -1;
}

Result<std::unique_ptr<DetachedStart>> StartDetached(const std::string& supervisor, const std::string& state_dir,
                                                     const std::string& app_id, const AppPlan& plan, SpawnMode mode) {
  if (plan.replicas.empty() || plan.replicas.size() > kDetachedStartMaxReplicas) {
    return InvalidArgumentError(fmt::format("local: a detached start takes 1 to {} replicas, not {}",
                                            kDetachedStartMaxReplicas, plan.replicas.size()));
  }
  ChainMemory chain(mode);
  if (!chain.get()) return InternalError(fmt::format("local: cannot map the start's report: {}", strerror(errno)));
  Chain& c = *chain.get();
  c.n = plan.replicas.size();
  Fds opened;
  auto pipe_failed = [] { return InternalError(fmt::format("local: cannot create pipes: {}", strerror(errno))); };
  int recorded[2];  // a socket pair: the commit is sent without a SIGPIPE to fear
  if (!Pipe(recorded, true)) return pipe_failed();
  opened.fds = {recorded[0]};  // the write end is the DetachedStart's, once there is one
  int recorded_w = recorded[1];
  auto close_recorded_w = [&] {
    if (recorded_w >= 0) ::close(recorded_w);
    recorded_w = -1;
  };
  c.recorded_r = recorded[0];
  c.recorded_w = recorded_w;

  CloneLauncher env;  // the replicas' environments, as the supervisor's launcher makes them
  std::deque<ReplicaExec> execs;
  for (size_t i = 0; i < c.n; ++i) {
    const ReplicaPlan& rp = plan.replicas[i];
    int out[2], err[2];
    if (!Pipe(out)) {
      close_recorded_w();
      return pipe_failed();
    }
    opened.fds.insert(opened.fds.end(), {out[0], out[1]});
    if (!Pipe(err)) {
      close_recorded_w();
      return pipe_failed();
    }
    opened.fds.insert(opened.fds.end(), {err[0], err[1]});
    ReplicaExec& exec = execs.emplace_back();
    env.Prepare(rp, exec);
    c.replicas[i] =
        ReplicaChildArgs{exec.path.c_str(), exec.argv.data(), exec.envp.data(), rp.cwd.c_str(), out[1], err[1], 0};
    c.out_r[i] = out[0];
    c.err_r[i] = err[0];
  }
  std::string fd_arg = std::to_string(c.recorded_r);
  std::array<const char*, 6> argv = {supervisor.c_str(), "--adopt",      fd_arg.c_str(),
                                     state_dir.c_str(),  app_id.c_str(), nullptr};
  c.supervisor = supervisor.c_str();
  c.supervisor_argv = const_cast<char* const*>(argv.data());  // execve writes nothing through it
  sigemptyset(&c.supervisor_mask);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&c.supervisor_mask, sig);

  std::lock_guard<std::mutex> hold(StacksLock());
  char* base = Stacks();
  if (!base) {
    close_recorded_w();
    return InternalError(fmt::format("local: cannot map the start's stacks: {}", strerror(errno)));
  }
  c.supervisor_stack = base + 2 * kStackBytes;
  c.replica_stack = base + 3 * kStackBytes;
  // No signal handler of the caller's may run on a child's stack in the caller's memory.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t helper = Spawn(c.fork, &Helper, base + kStackBytes, &c, /*wait_for_exec=*/false);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (helper > 0) {
    while (waitpid(helper, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (helper < 0 || c.supervisor_pid < 0 || c.error != 0) {
    close_recorded_w();
    int why = helper < 0 ? clone_errno : c.error;
    return UnavailableError(fmt::format("local: cannot start {}: {}", supervisor, strerror(why)));
  }
  std::vector<DetachedReplica> replicas(c.n);
  for (size_t i = 0; i < c.n; ++i) {
    replicas[i].pid = c.pids[i];
    replicas[i].identity = NewChildIdentity(c.pids[i], c.before[i], c.after[i]);
    replicas[i].exec_errno = c.replicas[i].error;
  }
  std::string identity = NewChildIdentity(c.supervisor_pid, c.supervisor_before, c.supervisor_after);
  return std::make_unique<DetachedStart>(recorded_w, c.supervisor_pid, std::move(identity), std::move(replicas));
}

std::optional<Adoption> ParseAdoption(std::string_view text) {
  size_t eol = text.find('\n');
  if (eol == std::string_view::npos) return std::nullopt;
  std::string_view line = text.substr(0, eol);
  std::vector<long> numbers;
  while (!line.empty()) {
    size_t space = line.find(' ');
    std::string_view word = line.substr(0, space);
    long v = 0;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc() || end != word.data() + word.size() || word.empty()) return std::nullopt;
    numbers.push_back(v);
    line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
  }
  if (numbers.empty() || numbers[0] < 1 || numbers[0] > static_cast<long>(kDetachedStartMaxReplicas) ||
      numbers.size() != 1 + 4 * static_cast<size_t>(numbers[0])) {
    return std::nullopt;
  }
  Adoption a;
  for (size_t i = 1; i < numbers.size(); i += 4) {
    if (numbers[i] <= 0 || numbers[i + 1] < 0 || numbers[i + 2] < 0 || numbers[i + 3] < 0) return std::nullopt;
    a.replicas.push_back({static_cast<int>(numbers[i]), static_cast<int>(numbers[i + 1]),
                          static_cast<int>(numbers[i + 2]), static_cast<int>(numbers[i + 3])});
  }
  std::string_view rest = text.substr(eol + 1);
  a.recorded = rest.size() == 1 && rest[0] == kRecorded;
  return a;
}

AdoptionReader::~AdoptionReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool AdoptionReader::ReadSome() {
  if (fd_ < 0) return false;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n > 0) {
      text_.append(buf, static_cast<size_t>(n));
      return true;
    }
    if (n == 0 || errno != EINTR) return false;
  }
}

std::optional<std::vector<AdoptedReplica>> AdoptionReader::Replicas() {
  while (text_.find('\n') == std::string::npos) {
    if (!ReadSome()) return std::nullopt;
  }
  auto adoption = ParseAdoption(text_);
  if (!adoption) return std::nullopt;
  return std::move(adoption->replicas);
}

bool AdoptionReader::Committed() {
  // The caller keeps its end open after the commit (a warm supervisor's link): read up to it.
  std::optional<Adoption> adoption;
  while (!(adoption = ParseAdoption(text_)) || !adoption->recorded) {
    if (!ReadSome()) break;
  }
  if (!adoption || !adoption->recorded) {
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  // Not close-on-exec until now (it crossed the supervisor's exec): a replica started later must
  // not inherit it.
  fcntl(fd_, F_SETFD, FD_CLOEXEC);
  return true;
}

void StopAdopted(const std::vector<AdoptedReplica>& replicas) {
  for (const AdoptedReplica& r : replicas) {
    // Our unreaped children: their pids (and so their groups' ids) cannot have been reused.
    kill(-r.pid, SIGKILL);
    kill(r.pid, SIGKILL);
    while (waitpid(r.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    for (int fd : {r.out_fd, r.err_fd}) {
      if (fd >= 0) ::close(fd);
    }
  }
}

}  // namespace torchx::schedulers::local
