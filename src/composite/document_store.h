// The records of composite jobs (pipelines, sweeps, managed jobs): per id, a header and a list of
// children, each one line of JSON, kept so that a change to one child of 10,000 costs a line, not
// the document:
//   - `<id>.json`, the base: a frame line (`torchx-record 2 <generation> <children>`), the header
//     line, one line per child; replaced atomically (write, fsync, rename, fsync of the directory);
//   - `<id>.journal`, what changed since: a frame line (`torchx-journal 2 <generation>`), then one
//     group per update (`h <header>`, `c <index> <child>` lines, closed by a `.` line), appended
//     (`k <count>` when children are dropped) and fdatasync'd. A group not closed (a writer died mid-append) is not
//     part of the record.
// Once the journal outgrows the base, the next update writes a new base (the next generation)
// and a new journal: a record is rewritten about as often as its whole size has changed.
// Writers take one lock file per directory, so the launcher, a driver and a `cancel` from another
// terminal never lose each other's edits; readers take no lock (a journal of another generation
// than the base they read means a rewrite happened meanwhile: they read again). A record written
// before this form (one JSON document) is read through the caller's splitter and rewritten in
// this form by its first update. Directory 0700, files 0600: another user able to write here
// could rewrite what a composite submits next.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchx/status.h"

namespace torchx::composite {

/// A record as lines of JSON: its header (every field but the children) and each child.
struct RecordLines {
  std::string header;
  std::vector<std::string> children;
};

/// Changes to a record: its new header (nullopt: unchanged), how many children it keeps (nullopt:
/// all; a managed job drops an attempt it never submitted), then children set by index (an index
/// one past the end appends).
struct RecordPatch {
  std::optional<std::string> header;
  std::optional<size_t> keep;
  std::vector<std::pair<size_t, std::string>> children;
  bool empty() const { return !header && !keep && children.empty(); }
  /// Where the editor holds the whole record as patched: its lines, header first, each handed to
  /// `emit` in turn, and how many children it has. A rewrite streams them to the new base instead
  /// of reading the record back. Unset: the store reads it and applies the patch.
  using Emit = std::function<Status(std::string_view line)>;
  std::function<Status(const Emit& emit)> whole;
  size_t whole_children = 0;
};

class DocumentStore {
 public:
  /// Which state of a record's files a reader saw: equal versions hold the same record.
  struct Version {
    ino_t base_inode = 0;
    std::int64_t base_mtime_ns = 0;
    std::int64_t base_size = -1;
    ino_t journal_inode = 0;
    std::int64_t journal_mtime_ns = 0;
    std::int64_t journal_size = -1;
    bool operator==(const Version&) const = default;
  };
  /// Turns a record written before this form (one JSON document) into lines.
  using LegacySplitter = std::function<Result<RecordLines>(const std::string& text)>;

  /// `kind` names the records in errors ("pipeline", "sweep").
  DocumentStore(std::string dir, std::string kind, LegacySplitter legacy)
      : dir_(std::move(dir)), kind_(std::move(kind)), legacy_(std::move(legacy)) {}

  /// kAlreadyExists for an id in use.
  Status Create(const std::string& id, const RecordLines& record);
  /// nullopt for an unknown id.
  Result<std::optional<RecordLines>> Read(const std::string& id) const;
  /// The version of the record's files now (a stat of each); nullopt for an unknown id.
  std::optional<Version> VersionOf(const std::string& id) const;
  /// Under the lock: `edit(version, load)` says what changes (`load` reads the record, for an
  /// editor whose copy is not of `version`); the patch is appended (or the record rewritten), and
  /// nothing is written for an empty patch or an error. kNotFound for an unknown id. Returns the
  /// version written.
  using Editor =
      std::function<Result<RecordPatch>(const Version& now, const std::function<Result<RecordLines>()>& load)>;
  Result<Version> Update(const std::string& id, const Editor& edit);
  /// The ids of every record (any order).
  std::vector<std::string> Ids() const;
  /// Removes the record and its driver's files (`<id>.driver.log`, `<id>.driver.lock`).
  Status Remove(const std::string& id);

  const std::string& dir() const { return dir_; }
  const std::string& kind() const { return kind_; }
  std::string PathOf(const std::string& id) const;
  /// Creates the directory (0700) if it is missing.
  Status EnsureDir() const;

 private:
  struct Loaded;
  Result<std::optional<Loaded>> Load(const std::string& id) const;
  Status WriteBase(const std::string& id, const RecordLines& record, std::uint64_t generation) const;
  Status ResetJournal(const std::string& id, std::uint64_t generation) const;
  std::string JournalOf(const std::string& id) const;

  // What this store last wrote of one record: while its files are as it left them, an update
  // neither reads them nor asks the editor to.
  struct Meta {
    std::string id;
    Version version;
    std::uint64_t generation = 0;
    bool legacy = false;
    bool journal_current = false;
    std::int64_t journal_committed = 0;
  };

  std::string dir_;
  std::string kind_;
  LegacySplitter legacy_;
  std::optional<Meta> meta_;
};

}  // namespace torchx::composite
