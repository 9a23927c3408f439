// The detached driver process of a pipeline sequenced by its driver (any pipeline but one whose
// scheduler sequences every step natively), and the lock that says one is at work: an flock on
// `<id>.driver.lock`, held by the driver for its life (and by the launcher while it submits a
// pipeline its scheduler sequences),
// so "is anyone moving this pipeline?" needs no pid bookkeeping: the kernel drops the lock when
// the process dies, however it dies.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "torchx/status.h"

namespace torchx::composite {

class DriverLock {
 public:
  /// nullopt when another process holds it; an error when the lock file cannot be opened.
  static Result<std::optional<DriverLock>> TryTake(const std::string& pipelines_dir, const std::string& id);
  DriverLock(DriverLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DriverLock& operator=(DriverLock&&) = delete;
  DriverLock(const DriverLock&) = delete;
  ~DriverLock();

 private:
  explicit DriverLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

/// How every driver (pipeline, sweep, managed) starts: its composite's lock taken, and its launcher
/// told (through `ready_fd`) once it holds it, or that another driver does, or why it cannot run.
class DriverStart {
 public:
  /// `kind` and `id` name the composite in messages ("torchx-composite-driver: sweep x: ...").
  DriverStart(std::string kind, std::string id, int ready_fd)
      : kind_(std::move(kind)), id_(std::move(id)), ready_fd_(ready_fd) {}
  /// The lock of composite `id` in `dir`; nullopt when this driver has nothing to do: another
  /// driver holds it (reported ready: that one moves the composite) or it cannot be taken
  /// (reported failed). Then exit with exit_code().
  std::optional<DriverLock> TakeLock(const std::string& dir);
  /// Prints why, tells the launcher the driver failed; returns the exit code (1).
  int Fail(const std::string& why);
  /// Tells the launcher the driver is up.
  void Ready();
  /// Tells the launcher the driver could not start, without a message of its own (the driver's
  /// is in its log already).
  void ReportFailed();
  /// Closes this process's copy of the launcher's pipe without a word (a watchdog's forked child:
  /// the watchdog reports, and a launcher must not wait on a copy it does not hold).
  void Release();
  int exit_code() const { return exit_code_; }
  const std::string& kind() const { return kind_; }
  const std::string& id() const { return id_; }

 private:
  std::string kind_;
  std::string id_;
  int ready_fd_;
  int exit_code_ = 0;
};

/// The driver's watchdog (as a local app's supervisor has one): `drive` runs in a child process,
/// which inherits the lock and the launcher's pipe; while the composite still wants a driver
/// (`wanted`: its record is there and has not ended), a child killed by a signal (kill -9, the OOM
/// killer) is replaced at once, without waiting for a call to read the composite, at most 5
/// times a minute (a driver that crashes each time is left to the next call). Returns the exit
/// code of the child that exited (0: the composite ended or was deleted; 1: its error budget ran
/// out), or 1 after too many deaths. Where there can be no child (fork fails), drives itself.
/// The lock is held while either lives; after a reboot the next call starts a driver.
int RunWatched(DriverStart& start, const std::function<int(DriverStart&)>& drive, const std::function<bool()>& wanted);

/// Whether some process holds pipeline `id`'s lock.
bool DriverRunning(const std::string& pipelines_dir, const std::string& id);

/// `<dir>/<id>.driver.log`: where a composite's driver writes (`torchx log H --driver` reads it).
std::string DriverLogPath(const std::string& dir, const std::string& id);

/// Starts torchx-composite-driver for composite `id` of `state_dir` in its own session, in `cwd`,
/// with default signal dispositions, its output appended to `<pipelines dir>/<id>.driver.log`.
/// Returns once the driver holds the pipeline's lock (or found another driver holding it); an
/// error, with the driver's own message, when it could not start. A driver killed before it said
/// either is no error: the next call that reads the composite starts one again.
/// `kind`: what the driver moves, "pipeline" or "sweep" (one executable drives both: the same
/// composition, the same lock and log files, one more argument).
Status StartDriver(const std::string& state_dir, const std::string& pipelines_dir, const std::string& id,
                   const std::string& cwd, const std::string& kind = "pipeline");

}  // namespace torchx::composite
