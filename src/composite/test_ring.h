// The smallest composite kind there is, for the kernel's own tests: a record of a name and
// children with nothing of their own, its codec and its store.
#pragma once

#include <string>
#include <vector>

#include "composite/record.h"
#include "composite/record_codec_impl.h"
#include "composite/record_store.h"

namespace torchx::composite {

struct Ring : RecordHeader {
  ChildList<ChildRecord> links;
};

struct RingParts {
  static constexpr std::string_view kNoun = "ring";
  static constexpr const char* kChildrenKey = "links";
  static void WriteOwn(const Ring&, RecordJson&) {}
  static Status ReadOwn(const RecordJson&, Ring&) { return OkStatus(); }
  static void WriteChildJson(const ChildRecord& c, RecordJson& j) { WriteChild(c, j); }
  static Status ReadChildJson(const RecordJson& j, ChildRecord& c, const Ring&) { return ReadChild(j, "ring", c); }
};
using RingCodec = CodecOf<Ring, ChildRecord, &Ring::links, RingParts>;

inline std::string RingToJson(const Ring& r) { return RingCodec::ToJson(r); }
inline Result<Ring> RingFromJson(const std::string& text) { return RingCodec::FromJson(text); }

using RingStore = RecordStore<RingCodec>;

/// A ring `ring-1` of `links` links, none started (what the kernel's tests start from).
inline Ring MakeRing(size_t links) {
  Ring r;
  r.id = "ring-1";
  r.name = "ring";
  r.session = "s";
  r.links.resize(links);
  return r;
}

}  // namespace torchx::composite
