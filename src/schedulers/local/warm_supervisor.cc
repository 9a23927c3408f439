// Warm supervisors (see warm_supervisor.h).
#include "schedulers/local/warm_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "schedulers/local/this_host.h"

namespace torchx::schedulers::local {
namespace {

void ReapChildren() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

}  // namespace

AppRecord RunningRecordOf(WarmRequest request) {
  AppRecord rec;
  rec.app_id = std::move(request.app_id);
  rec.session = std::move(request.session);
  rec.name = std::move(request.name);
  rec.appdef_json = std::move(request.appdef_json);
  rec.plan_json = std::move(request.plan_json);
  rec.app_dir = std::move(request.app_dir);
  rec.state = specs::AppState::kRunning;
  rec.created = rec.updated = request.created;
  return rec;
}

std::string LaunchContext() {
  std::string out;
  // The calling thread's: a clone from it inherits its affinity, not the main thread's.
  std::string status = ReadProcFile("/proc/thread-self/status");
  static constexpr std::array<std::string_view, 14> kFields = {
      "Uid:",    "Gid:",    "Groups:",     "Umask:",   "CapInh:",       "CapPrm:",       "CapEff:",
      "CapBnd:", "CapAmb:", "NoNewPrivs:", "Seccomp:", "Cpus_allowed:", "Mems_allowed:", "Seccomp_filters:"};
  size_t pos = 0;
  while (pos < status.size()) {
    size_t eol = status.find('\n', pos);
    if (eol == std::string::npos) eol = status.size();
    std::string_view line(status.data() + pos, eol - pos);
    for (std::string_view f : kFields) {
      if (line.substr(0, f.size()) == f) {
        out.append(line);
        out.push_back('\n');
        break;
      }
    }
    pos = eol + 1;
  }
  for (int r = 0; r < RLIM_NLIMITS; ++r) {
    struct rlimit lim {};
    getrlimit(static_cast<__rlimit_resource>(r), &lim);
    out += std::to_string(lim.rlim_cur) + ' ' + std::to_string(lim.rlim_max) + '\n';
  }
  errno = 0;
  out +=
      "nice " + std::to_string(getpriority(PRIO_PROCESS, 0)) + " sched " + std::to_string(sched_getscheduler(0)) + '\n';
  out += ReadProcFile("/proc/self/oom_score_adj");
  out += ReadProcFile("/proc/self/cgroup");
  char target[128];
  for (const char* ns : {"cgroup", "ipc", "mnt", "net", "pid_for_children", "time_for_children", "user", "uts"}) {
    std::string path = std::string("/proc/thread-self/ns/") + ns;
    ssize_t n = ::readlink(path.c_str(), target, sizeof(target));
    if (n > 0) out.append(target, static_cast<size_t>(n));
    out.push_back('\n');
  }
  return out;
}

int CancelToken(std::string_view app_id) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : app_id) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return static_cast<int>(h & 0x7fffffff);
}

namespace {

void PutField(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += '\n';
  out += field;
}

// One "<length>\n<bytes>" field at `pos`: 1 taken, 0 not all there yet, -1 malformed.
int TakeField(std::string_view text, size_t& pos, std::string_view& field) {
  size_t eol = text.find('\n', pos);
  if (eol == std::string_view::npos) return text.size() - pos > 20 ? -1 : 0;
  std::string_view digits = text.substr(pos, eol - pos);
  size_t n = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n > (size_t{64} << 20)) return -1;
  if (text.size() - (eol + 1) < n) return 0;
  field = text.substr(eol + 1, n);
  pos = eol + 1 + n;
  return 1;
}

}  // namespace

std::vector<std::string> EnvironmentOf(const char* const* env) {
  std::vector<std::string> out;
  for (const char* const* e = env; e && *e; ++e) out.emplace_back(*e);
  return out;
}

std::string EncodeWarmRequest(const WarmRequest& r) {
  std::string env;
  for (const std::string& e : r.env) {
    env += e;
    env.push_back('\0');
  }
  std::string out;
  out.reserve(env.size() + r.appdef_json.size() + r.plan_json.size() + 256);
  for (std::string_view f :
       {std::string_view(r.app_id), std::string_view(r.session), std::string_view(r.name),
        std::string_view(r.appdef_json), std::string_view(r.plan_json), std::string_view(r.app_dir)}) {
    PutField(out, f);
  }
  PutField(out, fmt::format("{:.6f}", r.created));
  PutField(out, env);
  return out;
}

std::optional<std::pair<WarmRequest, size_t>> ParseWarmRequest(std::string_view text, bool& malformed) {
  malformed = false;
  std::array<std::string_view, 8> fields;
  size_t pos = 0;
  for (std::string_view& f : fields) {
    int got = TakeField(text, pos, f);
    if (got < 0) malformed = true;
    if (got <= 0) return std::nullopt;
  }
  WarmRequest r;
  r.app_id = std::string(fields[0]);
  r.session = std::string(fields[1]);
  r.name = std::string(fields[2]);
  r.appdef_json = std::string(fields[3]);
  r.plan_json = std::string(fields[4]);
  r.app_dir = std::string(fields[5]);
  std::string created(fields[6]);
  char* end = nullptr;
  r.created = std::strtod(created.c_str(), &end);
  std::string_view env = fields[7];
  if (r.app_id.empty() || r.app_dir.empty() || created.empty() || end != created.c_str() + created.size() ||
      (!env.empty() && env.back() != '\0')) {
    malformed = true;
    return std::nullopt;
  }
  while (!env.empty()) {
    size_t nul = env.find('\0');
    r.env.emplace_back(env.substr(0, nul));
    env.remove_prefix(nul + 1);
  }
  return std::pair{std::move(r), pos};
}

bool SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string ReadWarmAnswer(int fd) {
  std::string answer;
  char c = 0;
  while (answer.empty() || (answer[0] == kWarmRefused && answer.back() != '\n')) {
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.push_back(c);
  }
  return answer;
}

WarmSupervisors::~WarmSupervisors() {
  for (const Entry& e : entries_) ::close(e.fd);
}

void WarmSupervisors::Add(Entry e) {
  std::lock_guard<std::mutex> hold(mu_);
  if (entries_.size() >= kWarmPoolSize) {
    ::close(entries_.front().fd);
    entries_.erase(entries_.begin());
  }
  entries_.push_back(std::move(e));
}

std::optional<WarmSupervisors::Entry> WarmSupervisors::Claim(const std::string& state_dir,
                                                             const std::string& supervisor, const std::string& context,
                                                             pid_t self) {
  std::lock_guard<std::mutex> hold(mu_);
  std::optional<Entry> claimed;
  for (size_t i = 0; i < entries_.size();) {
    Entry& e = entries_[i];
    bool drop = e.owner != self || e.context != context;
    bool take = false;
    if (!drop && !claimed && e.state_dir == state_dir && e.supervisor == supervisor) {
      char c = 0;
      ssize_t n = ::recv(e.fd, &c, 1, MSG_DONTWAIT);
      if (n == 1 && c == kWarmIdle) {
        // Idle, unless it has gone since it said so (its linger ended): then the link is at EOF.
        ssize_t more = ::recv(e.fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
        take = more < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        drop = !take;
      } else {
        drop = !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));  // else busy with its app
      }
    }
    if (take) {
      claimed = std::move(e);
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (drop) {
      ::close(e.fd);
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return claimed;
}

std::optional<WarmRequest> AwaitNextApp(int link, int linger_ms) {
  if (!SendAll(link, std::string_view(&kWarmIdle, 1))) return std::nullopt;
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&mask, sig);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) return std::nullopt;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } close_sigfd{sigfd};
  ReapChildren();
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::milliseconds(linger_ms);
  std::string text;
  auto take = [&]() -> std::optional<std::optional<WarmRequest>> {  // outer nullopt: not yet
    bool malformed = false;
    auto parsed = ParseWarmRequest(text, malformed);
    if (malformed) return std::optional<WarmRequest>();
    if (!parsed) return std::nullopt;
    if (parsed->second != text.size()) return std::optional<WarmRequest>();  // more than one request
    return std::optional<WarmRequest>(std::move(parsed->first));
  };
  char buf[16384];
  while (true) {
    int wait_ms = -1;
    if (text.empty()) {  // once a request has begun, its end is waited for
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      wait_ms = left > 0 ? static_cast<int>(left) : 0;
    }
    pollfd fds[2] = {{link, POLLIN, 0}, {sigfd, POLLIN, 0}};
    int ready = wait_ms == 0 ? 0 : ::poll(fds, 2, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return std::nullopt;
    if (ready == 0) {
      // The linger is over. Close the door first, then serve what came in before it closed.
      ::shutdown(link, SHUT_RD);
      ssize_t n;
      while ((n = ::recv(link, buf, sizeof(buf), MSG_DONTWAIT)) > 0) text.append(buf, static_cast<size_t>(n));
      if (text.empty()) return std::nullopt;
      auto got = take();
      return got ? *got : std::nullopt;
    }
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo si;
      while (::read(sigfd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGCHLD) continue;
        // A cancel queued for the app that just ended; anything else asks this process to go.
        if (si.ssi_signo == SIGTERM && si.ssi_code == SI_QUEUE) continue;
        return std::nullopt;
      }
      ReapChildren();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::recv(link, buf, sizeof(buf), MSG_DONTWAIT);
      if (n == 0) return std::nullopt;
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) continue;
        return std::nullopt;
      }
      text.append(buf, static_cast<size_t>(n));
      if (auto got = take()) return *got;
    }
  }
}

void ReplaceEnvironment(const std::vector<std::string>& env) {
  static std::vector<std::string> storage;  // putenv keeps the strings themselves
  clearenv();
  storage = env;
  for (std::string& e : storage) {
    if (e.find('=') != std::string::npos) putenv(e.data());
  }
}

}  // namespace torchx::schedulers::local
