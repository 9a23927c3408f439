// Followed logs from an engine that streams them over one long response (container engines, the
// Kubernetes API server): a thread reads the stream, a decoder turns bytes into lines as they
// arrive, and Next() hands them out, blocking while none is ready.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/schedulers/scheduler.h"

namespace torchx::schedulers {

/// Bytes to lines, across arbitrary chunk boundaries.
class LineDecoder {
 public:
  virtual ~LineDecoder() = default;
  virtual void Feed(std::string_view chunk, std::vector<std::string>& lines) = 0;
  /// The stream ended: whatever is left (a last line without its newline).
  virtual void Flush(std::vector<std::string>& lines) = 0;
};

/// Splits plain text on '\n', keeping the newline.
std::unique_ptr<LineDecoder> MakeNewlineDecoder();

/// Reads the stream: calls on_data with each chunk (on_data returns false once the reader is
/// gone) until the stream ends; an error ends the iteration with it.
using StreamProducer = std::function<Status(const std::function<bool(std::string_view)>& on_data)>;

/// `keep` filters lines (regex, time window); null keeps all. The producer's thread outlives the
/// iterator until its stream next delivers data or ends.
std::unique_ptr<LogIterator> MakeStreamedLinesIterator(StreamProducer producer, std::unique_ptr<LineDecoder> decoder,
                                                       std::function<bool(const std::string&)> keep);

}  // namespace torchx::schedulers
