// A kind's record codec (record_store.h): its record as a header line and a line per child, and
// as one JSON document (a plan's record), made from what is the kind's own. Declared here, light,
// for the kinds' headers; defined in record_codec_impl.h, which the kind's store source includes
// to instantiate it for its `Parts`:
//   static constexpr std::string_view kNoun = "sweep";        // names the record in errors
//   static constexpr const char* kChildrenKey = "trials";     // the children's key, written whole
//   static void WriteOwn(const Record&, RecordJson&);          // the kind's header fields
//   static Status ReadOwn(const RecordJson&, Record&);
//   static void WriteChildJson(const Child&, RecordJson&);     // WriteChild's fields included
//   static Status ReadChildJson(const RecordJson&, Child&, const Record& header_read);
#pragma once

#include <string>
#include <vector>

#include "composite/child_list.h"
#include "composite/document_store.h"
#include "composite/record_json.h"
#include "torchx/status.h"

namespace torchx::composite {

template <typename R, typename C, ChildList<C> R::*kMember, typename Parts>
struct CodecOf {
  using Record = R;
  using Child = C;
  static constexpr auto kChildren = kMember;

  static std::string HeaderLine(const Record& r);
  static std::string ChildLine(const Child& c);
  /// Empties each child's line once it is read (a 10,000-child record's text and
  /// record are not both whole in memory). The header stays.
  static Result<Record> FromLines(RecordLines& lines);
  /// A record written whole (ToJson's form, and every version's before the journal).
  static Result<RecordLines> SplitLegacy(const std::string& text);
  /// The record as one JSON document, its children under kChildrenKey (a plan's record, tests).
  static std::string ToJson(const Record& r);
  static Result<Record> FromJson(const std::string& text);
};

}  // namespace torchx::composite
