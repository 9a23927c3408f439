// The local supervisor's own guard. Forked first, it holds the read end of a pipe whose write
// end only the supervisor has; the supervisor sends "<pgid> <identity>" for each replica it
// starts and "done" when it has finished. EOF without "done" means the supervisor was killed:
// the watchdog kills every replica process group (children of the replicas included, which
// PDEATHSIG alone does not reach) and records the app as FAILED, so nothing outlives a lost
// supervisor.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace torchx::schedulers::local {

/// The watchdog's reading of the supervisor's messages; pure, so the protocol is testable.
class WatchdogLog {
 public:
  /// Bytes as read from the pipe, split anywhere.
  void Feed(std::string_view bytes);
  /// Whether the supervisor said it has finished.
  bool done() const { return done_; }
  /// The replica process groups it has been told about: pgid -> leader identity.
  const std::map<int, std::string>& groups() const { return groups_; }

 private:
  std::string buf_;
  std::map<int, std::string> groups_;
  bool done_ = false;
};

/// The supervisor's lines to its watchdog.
std::string WatchdogReplicaLine(int pgid, const std::string& identity);
inline constexpr std::string_view kWatchdogDoneLine = "done";

/// The supervisor's end of the watchdog.
class Watchdog {
 public:
  Watchdog() = default;
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Forks the watchdog for app `app_id` of the store in `state_dir`. `ready_fd` is closed in the
  /// watchdog (the launcher must see EOF if the supervisor fails). Without a watchdog (no pipe or
  /// fork) the supervisor still runs: readers detect its loss themselves.
  void Start(const std::string& state_dir, const std::string& app_id, int ready_fd);
  bool started() const { return fd_ >= 0; }
  void ReplicaStarted(int pgid, const std::string& identity);
  /// From Hold() to Flush(), replicas are told in batches of kBatchLines: starting many replicas
  /// wakes the watchdog a few times rather than once per replica. A replica not yet told when
  /// the supervisor is killed still dies with it (PDEATHSIG), only its children are not reached.
  void Hold();
  void Flush();
  void Done();
  /// Lets the guard go (after Done: it exits at the pipe's end).
  void Close();

  static constexpr int kBatchLines = 64;

 private:
  void Tell(std::string_view text);
  int fd_ = -1;
  bool held_ = false;
  std::string pending_;
  int pending_lines_ = 0;
};

}  // namespace torchx::schedulers::local
