// The text form of what every composite record shares (record.h), written and read once for every
// kind: a kind's parts (record_codec.h) add only their own fields. A record is stored as a header
// line and a line per child (document_store.h), and whole, as one JSON object, in a plan.
//
// Reading accepts what earlier versions wrote: a managed attempt's `reason` (now `msg`), a
// pipeline record's pretty-printed form, records without the children's times.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "composite/record.h"
#include "torchx/status.h"

namespace torchx::composite {

using RecordJson = nlohmann::ordered_json;

/// The record's text: the header's fields, then what `fill` adds (the kind's own fields and its
/// children), on one line.
std::string WriteRecord(const RecordHeader& header, const std::function<void(RecordJson&)>& fill);

/// Parses `text`, reads the header into `header`, then hands the document to `fill` for the rest.
/// A malformed document, or an error from `fill`, names `kind`'s record ("sweep record: ...").
Status ReadRecord(const std::string& text, std::string_view kind, RecordHeader& header,
                  const std::function<Status(const RecordJson&)>& fill);

/// A child's shared fields, added to `out` (its kind adds its own before or after).
void WriteChild(const ChildRecord& child, RecordJson& out);
/// A child's shared fields from `in` (one element of the kind's children array).
Status ReadChild(const RecordJson& in, std::string_view kind, ChildRecord& child);

/// Epoch seconds or null, as every record writes an optional time.
RecordJson OptionalNumber(const std::optional<double>& v);
/// The number under `key`, nullopt where it is missing or null.
std::optional<double> NumberAt(const RecordJson& j, const char* key);

}  // namespace torchx::composite
