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
//   static Result<Record> FromLines(RecordLines&);  // empties each child's line once read
//   static Result<RecordLines> SplitLegacy(const std::string& text);  // a record written whole
// and a Child compares with == (a child equal to the one read is not written). The children are a
// ChildList: an update copies a pointer per child, and a child no edit touched is found by pointer.
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

  /// nullopt for an unknown id. The record read is kept (as Update keeps what it wrote) when its
  /// files did not change while it was read: the next Get or Update of that version reads nothing,
  /// and what they answer shares its children.
  Result<std::optional<Record>> Get(const std::string& id) const {
    auto before = docs_.VersionOf(id);
    if (cache_ && cache_->id == id && before == std::optional(cache_->version)) return std::optional(cache_->record);
    cache_.reset();  // stale: let go of before reading (a 10,000-trial record is MiBs)
    TORCHX_ASSIGN_OR_RETURN(auto lines, docs_.Read(id));
    if (!lines) return std::optional<Record>();
    auto r = Codec::FromLines(*lines);
    if (!r) return r.error().WithContext(docs_.PathOf(id));
    if (before && docs_.VersionOf(id) == before) cache_ = Cached{id, *before, *r, std::move(lines->header)};
    return std::optional(std::move(*r));
  }

  /// Reads, applies `edit` and writes back what changed, all under the lock (nothing written if
  /// `edit` fails). kNotFound for an unknown id. Returns the record as written.
  Result<Record> Update(const std::string& id, const std::function<Status(Record&)>& edit) {
    Record out;
    std::string header;
    auto editor = [&](const DocumentStore::Version& now,
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
      return PatchOf(cache_->record, cache_->header, out, header);
    };
    auto written = docs_.Update(id, editor);
    if (!written || !cache_) {
      cache_.reset();
      return written ? InternalError(id + ": the record store lost its copy") : written.error();
    }
    cache_->version = *written;
    cache_->record = out;
    cache_->header = std::move(header);
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
  // What changed from `before` (whose header line is `before_header`) to `after`: its header line
  // (put in `header`) if it differs, the children dropped, each child that differs; and the whole
  // of `after`, a line at a time, for a rewrite.
  static RecordPatch PatchOf(const Record& before, const std::string& before_header, const Record& after,
                             std::string& header) {
    RecordPatch patch;
    header = Codec::HeaderLine(after);
    if (header != before_header) patch.header = header;
    const auto& was = before.*Codec::kChildren;
    const auto& now = after.*Codec::kChildren;
    if (now.size() < was.size()) patch.keep = now.size();
    for (size_t i = 0; i < now.size(); ++i) {
      bool same = i < was.size() && (now.SameChild(i, was, i) || now[i] == was[i]);
      if (!same) patch.children.emplace_back(i, Codec::ChildLine(now[i]));
    }
    patch.whole_children = now.size();
    patch.whole = [&after, &header](const RecordPatch::Emit& emit) -> Status {
      TORCHX_RETURN_IF_ERROR(emit(header));
      for (const auto& c : after.*Codec::kChildren) TORCHX_RETURN_IF_ERROR(emit(Codec::ChildLine(c)));
      return OkStatus();
    };
    return patch;
  }

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

/// A kind's noun as a template argument (`"pipeline"`): what its records are called in errors.
template <size_t N>
struct Noun {
  constexpr Noun(const char (&s)[N]) { std::copy_n(s, N, text); }  // NOLINT(google-explicit-constructor)
  char text[N];
};

/// A kind's store: its records under one directory (created on first write), called `kNoun`.
template <typename Codec, Noun kNoun>
class StoreOf : public RecordStore<Codec> {
 public:
  explicit StoreOf(std::string dir) : RecordStore<Codec>(std::move(dir), kNoun.text) {}
};

}  // namespace torchx::composite
