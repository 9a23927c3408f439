// The records of composite jobs (pipelines, sweeps): one JSON document per id under a directory,
// replaced atomically (write, fsync, rename, fsync of the directory) under one lock file, so the
// launcher, a driver and a `cancel` from another terminal never see half a record and never lose
// each other's edits. Readers take no lock. Directory 0700, files 0600: another user able to write
// here could rewrite what a composite submits next. The typed stores (PipelineStore, SweepStore)
// are thin wrappers that turn their records into text and back.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "torchx/status.h"

namespace torchx::composite {

class DocumentStore {
 public:
  /// `kind` names the records in errors ("pipeline", "sweep").
  DocumentStore(std::string dir, std::string kind) : dir_(std::move(dir)), kind_(std::move(kind)) {}

  /// kAlreadyExists for an id in use.
  Status Create(const std::string& id, const std::string& text);
  /// nullopt for an unknown id.
  Result<std::optional<std::string>> Read(const std::string& id) const;
  /// Under the lock: reads the document, hands it to `edit` and writes what `edit` returns
  /// (nothing written when `edit` fails). kNotFound for an unknown id. Returns the text written.
  Result<std::string> Update(const std::string& id, const std::function<Result<std::string>(std::string)>& edit);
  /// The ids of every document (any order).
  std::vector<std::string> Ids() const;
  /// Removes the document and its driver's files (`<id>.driver.log`, `<id>.driver.lock`).
  Status Remove(const std::string& id);

  const std::string& dir() const { return dir_; }
  const std::string& kind() const { return kind_; }
  std::string PathOf(const std::string& id) const;
  /// Creates the directory (0700) if it is missing.
  Status EnsureDir() const;

 private:
  Status Write(const std::string& id, const std::string& text) const;
  std::string dir_;
  std::string kind_;
};

}  // namespace torchx::composite
