// One replica's log files, as TorchX lays them out: <replica dir>/stdout.log, stderr.log and
// combined.log, where combined.log receives whole lines only, so stdout and stderr lines never
// interleave mid-line. Earlier attempts' logs move to <replica dir>/attempt_<n>/. The three are
// created together with the attempt's first output (or the supervisor's own line about it): a
// replica that prints nothing has none, which `torchx log` reads as empty. Every exec copies and
// closes the supervisor's whole fd table, and on a slow disk a create costs as much as a spawn
// (300 us on the benchmark machine's): a quiet replica costs no more than its two pipes.
#pragma once

#include <string>
#include <string_view>

namespace torchx::schedulers::local {

/// Makes a replica's directory (0700, with any missing parents).
void MakeReplicaDir(const std::string& dir);

class ReplicaLogs {
 public:
  enum class Stream { kStdout, kStderr };

  ReplicaLogs(std::string log_dir, std::string error_file);
  ~ReplicaLogs();
  ReplicaLogs(ReplicaLogs&& other) noexcept;
  ReplicaLogs& operator=(ReplicaLogs&&) = delete;
  ReplicaLogs(const ReplicaLogs&) = delete;
  ReplicaLogs& operator=(const ReplicaLogs&) = delete;

  /// Before attempt `attempt` starts: makes the replica dir; for a retry, moves the previous
  /// attempt's logs (and error file) to attempt_<attempt - 1>/ and removes the error file.
  /// `dir_made`: the replica dir exists already (the supervisor made it ahead, ReplicaDirs).
  void StartAttempt(int attempt, bool dir_made = false);
  /// Creates (truncating) and opens the three files of this attempt, once; Append and
  /// WriteStderrLine call it with the attempt's first output.
  void Create();
  /// Output of the replica's stdout or stderr pipe.
  void Append(Stream stream, std::string_view data);
  /// The stream's pipe is closed: its unterminated last line goes to combined.log.
  void EndStream(Stream stream);
  /// A line of the supervisor's own about this attempt (e.g. why it could not start), written to
  /// stderr.log and combined.log.
  void WriteStderrLine(const std::string& line);
  /// Closes the files (they reopen for appending on further output).
  void CloseFiles();

  const std::string& dir() const { return dir_; }

 private:
  int Fd(int& fd, const char* name);
  void AppendCombined(std::string& partial, std::string_view data);

  std::string dir_;
  std::string error_file_;
  int out_file_ = -1, err_file_ = -1, combined_file_ = -1;
  std::string out_partial_, err_partial_;  // unterminated lines held back from combined.log
  bool created_ = false;
};

}  // namespace torchx::schedulers::local
