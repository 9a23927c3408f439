// A typed store of composite records (pipelines, sweeps, managed jobs): a DocumentStore whose
// documents are one record type, turned into text and back by the record's own functions. Each
// composite's store is this template with its record type and a name for errors.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "composite/document_store.h"
#include "torchx/status.h"

namespace torchx::composite {

/// `Record` has `id` and `created` (epoch seconds); ToJson / FromJson are its text forms.
template <typename Record, std::string (*ToJson)(const Record&), Result<Record> (*FromJson)(const std::string&)>
class RecordStore {
 public:
  /// `dir`: where the documents live (created on first write); `kind` names them in errors.
  RecordStore(std::string dir, std::string kind) : docs_(std::move(dir), std::move(kind)) {}

  /// kAlreadyExists for an id in use.
  Status Create(const Record& record) { return docs_.Create(record.id, ToJson(record)); }

  /// nullopt for an unknown id.
  Result<std::optional<Record>> Get(const std::string& id) const {
    TORCHX_ASSIGN_OR_RETURN(auto text, docs_.Read(id));
    if (!text) return std::optional<Record>();
    auto r = FromJson(*text);
    if (!r) return r.error().WithContext(docs_.PathOf(id));
    return std::optional(std::move(*r));
  }

  /// Reads, applies `edit` and writes back, all under the lock (nothing written if `edit` fails).
  /// kNotFound for an unknown id. Returns the record as written.
  Result<Record> Update(const std::string& id, const std::function<Status(Record&)>& edit) {
    Record out;
    auto written = docs_.Update(id, [&](std::string text) -> Result<std::string> {
      auto r = FromJson(text);
      if (!r) return r.error().WithContext(docs_.PathOf(id));
      TORCHX_RETURN_IF_ERROR(edit(*r));
      out = std::move(*r);
      return ToJson(out);
    });
    if (!written) return written.error();
    return out;
  }

  /// Every record, newest first (unreadable documents are skipped).
  Result<std::vector<Record>> List() const {
    std::vector<Record> out;
    for (const std::string& id : docs_.Ids()) {
      auto r = Get(id);
      if (r && *r) out.push_back(std::move(**r));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.created > b.created; });
    return out;
  }

  Status Remove(const std::string& id) { return docs_.Remove(id); }
  const std::string& dir() const { return docs_.dir(); }
  /// What the records are called in errors ("pipeline").
  const std::string& kind() const { return docs_.kind(); }
  /// Creates the directory (0700) if it is missing.
  Status EnsureDir() const { return docs_.EnsureDir(); }

 private:
  DocumentStore docs_;
};

}  // namespace torchx::composite
