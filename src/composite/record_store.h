// A typed store of composite records (pipelines, sweeps, managed jobs) over a DocumentStore: a
// record is its header line and a line per child, and an update writes only what changed (the
// header if it did, each child that differs), so a driver moving one trial of 10,000 writes one
// line. The store keeps the record it last read or wrote: while the files are as it left them, an
// update reads nothing.
//
// `Codec` is the kind's text form:
//   using Record = ...; using Child = ...; static constexpr auto kChildren = &Record::children;
//   static std::string HeaderLine(const Record&);   // every field but the children
//   static std::string ChildLine(const Child&);
//   static Result<Record> FromLines(const RecordLines&);
//   static Result<RecordLines> SplitLegacy(const std::string& text);  // a record written whole
// and a Child compares with == (a child equal to the one read is not written).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "composite/document_store.h"
#include "torchx/status.h"

namespace torchx::composite {

template <typename Codec>
class RecordStore {
 public:
  using Record = typename Codec::Record;

  /// `dir`: where the records live (created on first write); `kind` names them in errors.
  RecordStore(std::string dir, std::string kind)
      : docs_(std::move(dir), std::move(kind), [](const std::string& text) { return Codec::SplitLegacy(text); }) {}

  /// kAlreadyExists for an id in use.
  Status Create(const Record& record) { return docs_.Create(record.id, LinesOf(record)); }

  /// nullopt for an unknown id.
  Result<std::optional<Record>> Get(const std::string& id) const {
    if (cache_ && cache_->id == id && docs_.VersionOf(id) == std::optional(cache_->version)) {
      return std::optional(cache_->record);
    }
    TORCHX_ASSIGN_OR_RETURN(auto lines, docs_.Read(id));
    if (!lines) return std::optional<Record>();
    auto r = Codec::FromLines(*lines);
    if (!r) return r.error().WithContext(docs_.PathOf(id));
    return std::optional(std::move(*r));
  }

  /// Reads, applies `edit` and writes back what changed, all under the lock (nothing written if
  /// `edit` fails). kNotFound for an unknown id. Returns the record as written.
  Result<Record> Update(const std::string& id, const std::function<Status(Record&)>& edit) {
    Record out;
    std::string header;
    auto written = docs_.Update(id,
                                [&](const DocumentStore::Version& now,
                                    const std::function<Result<RecordLines>()>& load) -> Result<RecordPatch> {
                                  if (!cache_ || cache_->id != id || cache_->version != now) {
                                    cache_.reset();
                                    TORCHX_ASSIGN_OR_RETURN(RecordLines lines, load());
                                    auto r = Codec::FromLines(lines);
                                    if (!r) return r.error().WithContext(docs_.PathOf(id));
                                    cache_ = Cached{id, now, std::move(*r), std::move(lines.header)};
                                  }
                                  out = cache_->record;
                                  TORCHX_RETURN_IF_ERROR(edit(out));
                                  RecordPatch patch;
                                  header = Codec::HeaderLine(out);
                                  if (header != cache_->header) patch.header = header;
                                  const auto& before = cache_->record.*Codec::kChildren;
                                  const auto& after = out.*Codec::kChildren;
                                  if (after.size() < before.size()) patch.keep = after.size();
                                  for (size_t i = 0; i < after.size(); ++i) {
                                    if (i >= before.size() || !(after[i] == before[i]))
                                      patch.children.emplace_back(i, Codec::ChildLine(after[i]));
                                  }
                                  return patch;
                                });
    if (!written) {
      cache_.reset();
      return written.error();
    }
    cache_ = Cached{id, *written, out, std::move(header)};
    return out;
  }

  /// Every record, newest first (unreadable records are skipped).
  Result<std::vector<Record>> List() const {
    std::vector<Record> out;
    for (const std::string& id : docs_.Ids()) {
      auto r = Get(id);
      if (r && *r) out.push_back(std::move(**r));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.created > b.created; });
    return out;
  }

  Status Remove(const std::string& id) {
    if (cache_ && cache_->id == id) cache_.reset();
    return docs_.Remove(id);
  }
  const std::string& dir() const { return docs_.dir(); }
  /// What the records are called in errors ("pipeline").
  const std::string& kind() const { return docs_.kind(); }
  /// Creates the directory (0700) if it is missing.
  Status EnsureDir() const { return docs_.EnsureDir(); }

  /// The record as lines (what Create writes).
  static RecordLines LinesOf(const Record& record) {
    RecordLines lines{Codec::HeaderLine(record), {}};
    const auto& children = record.*Codec::kChildren;
    lines.children.reserve(children.size());
    for (const auto& c : children) lines.children.push_back(Codec::ChildLine(c));
    return lines;
  }

 private:
  // The record as this store last read or wrote it, and the version of its files then.
  struct Cached {
    std::string id;
    DocumentStore::Version version;
    Record record;
    std::string header;
  };

  DocumentStore docs_;
  mutable std::optional<Cached> cache_;
};

}  // namespace torchx::composite
