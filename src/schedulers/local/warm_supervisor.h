// Warm supervisors: a supervisor whose app has ended waits a short while for the next app of
// the process that started it, so back-to-back runs from one process (a Python script, a sweep,
// an Ax loop) skip the supervisor's exec, its store connection and its exit.
//
// Only the process that started the supervisor (detached_start.h) can hand it an app: the
// socket pair of that start is their only link, so no other user or process can reach it. The
// supervisor is reused only while the caller's launch context (LaunchContext) is what it was
// when the supervisor was made, since the replicas inherit that context from the supervisor and
// not from the caller. The app's environment comes with each app.
//
// The exchange, on the start's socket pair once the first app is running:
//   supervisor: 'I' (idle: its app has ended), then waits up to kWarmLingerMs
//   caller:     claims an idle supervisor and sends the app's record and its own environment
//               (one send); it records nothing itself
//   supervisor: starts the replicas as its children, inserts the app RUNNING with them and
//               itself in one transaction (as the caller of a detached start does), answers
//               kWarmStarted, and runs the app as an adopted one. Refused (kWarmRefused and why):
//               nothing started, nothing recorded.
// A supervisor whose linger ends shuts its reading side first, then serves a request already
// queued: a caller's send either lands before that (and is served) or fails with EPIPE (and the
// caller starts the app itself, detached_start.h). Nothing is recorded twice or lost.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedulers/local/state_store.h"

namespace torchx::schedulers::local {

/// How long an idle supervisor waits for its caller's next app before it exits.
inline constexpr int kWarmLingerMs = 2000;
/// Idle (or busy) supervisors a caller keeps for one state directory at most.
inline constexpr size_t kWarmPoolSize = 4;
inline constexpr char kWarmIdle = 'I';

/// What a process started now would inherit and a supervisor cannot hand on: ids and groups,
/// umask, CPU affinity, capabilities, no_new_privs, seccomp, resource limits, nice value,
/// cgroup, namespaces. Two equal strings: a replica the warm supervisor starts gets what one
/// started by the caller itself would.
std::string LaunchContext();

/// The value a cancel sends with its SIGTERM (sigqueue) so that a supervisor now running another
/// app ignores a cancel meant for the one it ran before.
int CancelToken(std::string_view app_id);

/// The next app: its record as the caller would insert it (the supervisor inserts it, RUNNING,
/// with its replicas) and the caller's environment.
struct WarmRequest {
  std::string app_id;
  std::string session;
  std::string name;
  std::string appdef_json;
  std::string plan_json;  ///< AppPlanToStoredJson's form
  std::string app_dir;
  double created = 0;
  std::vector<std::string> env;  ///< "KEY=VALUE" each
};

/// The record of the app `request` carries, RUNNING (the supervisor that takes it adds itself).
AppRecord RunningRecordOf(WarmRequest request);

/// The fields, each as "<length>\n<bytes>" (the environment as its entries each ending in a NUL).
std::string EncodeWarmRequest(const WarmRequest& request);
/// The environment block of a request, from `environ`'s form.
std::vector<std::string> EnvironmentOf(const char* const* env);
/// A whole request and its length in `text`; nullopt when `text` holds only part of one.
/// `malformed` set when it can never become one.
std::optional<std::pair<WarmRequest, size_t>> ParseWarmRequest(std::string_view text, bool& malformed);

/// The supervisor's answer once the app is recorded and its replicas started: kWarmStarted, or
/// kWarmRefused followed by the reason and a newline (nothing was started or recorded).
inline constexpr char kWarmStarted = 'y';
inline constexpr char kWarmRefused = 'n';

/// Sends all of `bytes` on the link (no SIGPIPE); false when the other end has gone.
bool SendAll(int fd, std::string_view bytes);

/// The caller's read of that answer on `fd`: "y", "n<why>\n", or what came before EOF. Nothing
/// past it is read: an app that ends at once has its supervisor say idle right after it says
/// started, and that byte is the next claim's.
std::string ReadWarmAnswer(int fd);

/// The caller's side: the supervisors it started that may take another app. Thread-safe (a
/// Python runner schedules without the GIL).
class WarmSupervisors {
 public:
  struct Entry {
    int fd = -1;  ///< the caller's end of the start's socket pair
    int pid = 0;
    std::string identity;  ///< ProcessIdentity's form
    std::string state_dir;
    std::string supervisor;  ///< the executable it runs
    std::string context;     ///< LaunchContext() when it was started
    pid_t owner = 0;         ///< getpid() then: a forked child never uses its parent's
  };

  WarmSupervisors() = default;
  ~WarmSupervisors();  // closes every link: each supervisor exits once its app has ended
  WarmSupervisors(const WarmSupervisors&) = delete;
  WarmSupervisors& operator=(const WarmSupervisors&) = delete;

  /// Keeps `e` (closing the oldest past kWarmPoolSize).
  void Add(Entry e);
  /// An idle supervisor for `state_dir` running `supervisor` whose context is `context`, taken
  /// out of the pool (its idle byte read); links found closed, and those of another context or
  /// owner than `self` (this process's id: a forked child never uses its parent's), are dropped
  /// on the way.
  std::optional<Entry> Claim(const std::string& state_dir, const std::string& supervisor, const std::string& context,
                             pid_t self);

 private:
  std::mutex mu_;
  std::vector<Entry> entries_;
};

/// The supervisor's side: says idle on `link` and waits up to `linger_ms` for the caller's next
/// app. nullopt: none (the wait ended, the caller closed its end or sent something malformed,
/// or a signal other than SIGCHLD or a stale cancel arrived): the supervisor exits. Children
/// that end meanwhile (its watchdogs) are reaped.
std::optional<WarmRequest> AwaitNextApp(int link, int linger_ms);

/// Makes `env` this process's environment (what the launcher hands the replicas).
void ReplaceEnvironment(const std::vector<std::string>& env);

}  // namespace torchx::schedulers::local
