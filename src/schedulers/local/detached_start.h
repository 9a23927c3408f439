// A small app started by the caller of `run` itself (LocalScheduler::Schedule, through its
// ProcessStarter), with its supervisor's durability: the caller's thread clones a short-lived helper, which clones the
// supervisor-to-be and exits (so the caller has no zombie to reap and the supervisor no parent
// to die with). The supervisor-to-be, still in the caller's memory, leaves the caller's session,
// starts the replicas as its own children (ReplicaChildMain), writes their pids on a socket pair
// that the caller and the supervisor share, and execs `torchx-supervisor --adopt`. Every clone
// is CLONE_VM | CLONE_VFORK: each parent waits for its child's exec, so the caller resumes with
// the replicas and the supervisor exec'd.
//
// The caller then records the app RUNNING with its replicas and the supervisor in one
// transaction and says so on the same socket (Commit). The supervisor waits for that before it
// reads or writes the store; the socket's end without it (the caller failed to record, or died)
// makes it stop the replicas and exit, so nothing runs that is not recorded.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schedulers/local/app_plan.h"
#include "torchx/status.h"

namespace torchx::schedulers::local {

/// Apps of up to this many replicas are started by the caller; a larger fan-out by its supervisor
/// (the caller would wait for every replica's exec).
inline constexpr size_t kDetachedStartMaxReplicas = 16;

/// Whether `plan` is started this way.
bool StartsDetached(const AppPlan& plan);

/// How the chain's children are made. kCloneVm: each shares its parent's memory and runs on a
/// stack of its own there, and CLONE_VFORK holds the parent until the child's exec (no copy of
/// the caller's memory: the production path). kFork: each is a copy of its parent, which waits
/// for a close-on-exec pipe that the child's exec (or exit) closes, and the chain reports through
/// a shared mapping; ThreadSanitizer follows these children, so a TSan build uses it.
enum class SpawnMode { kCloneVm, kFork };
/// kFork in a ThreadSanitizer build, else kCloneVm.
SpawnMode DefaultSpawnMode();

struct DetachedReplica {
  int pid = 0;           ///< also its process group id
  std::string identity;  ///< ProcessIdentity's form
  int exec_errno = 0;    ///< why its exec failed (it exits with 127), or 0
};

/// The caller's end of a started app, until it says whether the app is recorded. Destroyed
/// without Commit: abandoned.
class DetachedStart {
 public:
  DetachedStart(int recorded_fd, int supervisor_pid, std::string supervisor_identity,
                std::vector<DetachedReplica> replicas)
      : recorded_fd_(recorded_fd),
        supervisor_pid_(supervisor_pid),
        supervisor_identity_(std::move(supervisor_identity)),
        replicas_(std::move(replicas)) {}
  ~DetachedStart() { Abandon(); }
  DetachedStart(const DetachedStart&) = delete;
  DetachedStart& operator=(const DetachedStart&) = delete;

  int supervisor_pid() const { return supervisor_pid_; }
  const std::string& supervisor_identity() const { return supervisor_identity_; }
  /// In the plan's order.
  const std::vector<DetachedReplica>& replicas() const { return replicas_; }

  /// The app is recorded: the supervisor takes over. The socket stays open for TakeLink.
  void Commit();
  /// It is not: the supervisor stops the replicas and exits.
  void Abandon();
  /// After Commit: the caller's end of the socket, a warm supervisor's link (warm_supervisor.h);
  /// closing it lets the supervisor exit once its app has ended.
  int TakeLink() {
    int fd = recorded_fd_;
    recorded_fd_ = -1;
    return fd;
  }

 private:
  int recorded_fd_;
  int supervisor_pid_;
  std::string supervisor_identity_;
  std::vector<DetachedReplica> replicas_;
};

/// Starts app `app_id` of the store in `state_dir` as above: every replica of `plan` (at most
/// kDetachedStartMaxReplicas; their directories already made) and `supervisor` to adopt them.
/// An error means nothing was started.
Result<std::unique_ptr<DetachedStart>> StartDetached(const std::string& supervisor, const std::string& state_dir,
                                                     const std::string& app_id, const AppPlan& plan,
                                                     SpawnMode mode = DefaultSpawnMode());

// The supervisor's end.

struct AdoptedReplica {
  int pid = 0;
  int exec_errno = 0;
  int out_fd = -1;  ///< the read ends of its stdout and stderr pipes
  int err_fd = -1;
};

struct Adoption {
  std::vector<AdoptedReplica> replicas;  ///< in the plan's order
  bool recorded = false;                 ///< the caller committed
};

/// What the socket carried, whole: the supervisor-to-be's line ("<n>" then "<pid> <errno> <out>
/// <err>" for each replica, space-separated, ending in a newline), then the caller's commit.
/// nullopt when the line is missing or malformed.
std::optional<Adoption> ParseAdoption(std::string_view text);

/// The supervisor's reading of the socket (`fd`, closed with it): the supervisor-to-be's line is
/// there from the start, the caller's commit comes later.
class AdoptionReader {
 public:
  explicit AdoptionReader(int fd) : fd_(fd) {}
  ~AdoptionReader();
  AdoptionReader(const AdoptionReader&) = delete;
  AdoptionReader& operator=(const AdoptionReader&) = delete;

  /// The started replicas; nullopt when the socket ends or says something malformed first.
  std::optional<std::vector<AdoptedReplica>> Replicas();
  /// Waits for the caller: whether it committed (false when the socket ended without it, and
  /// the socket is closed then). A committed socket stays open, close-on-exec, as the link a
  /// warm supervisor waits on for the caller's next app (warm_supervisor.h).
  bool Committed();
  /// The socket, after Committed: the caller's to close.
  int TakeLink() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  bool ReadSome();  // false at the end (or an error)
  int fd_;
  std::string text_;
};

/// An abandoned start: each replica's process group killed and the replica reaped.
void StopAdopted(const std::vector<AdoptedReplica>& replicas);

}  // namespace torchx::schedulers::local
