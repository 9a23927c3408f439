// A followed container log goes on across cuts. The API server or the kubelet may end a
// `follow=true` stream before the container ends (a restart, an idle timeout, a dropped
// connection); the stream is then asked for again from the last line's time, and this drops the
// lines the new stream repeats, so every line reaches the reader once.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace torchx::schedulers::kubernetes {

class LogResume {
 public:
  using Emit = std::function<bool(std::string_view)>;

  /// Bytes of the current stream (lines as the kubelet writes them with `timestamps=true`).
  /// Each whole line not seen before goes to `emit`; a partial last line waits for the rest.
  /// False when `emit` did (the reader is gone).
  bool Feed(std::string_view data, const Emit& emit);
  /// A new stream begins: it starts at the last line's second (the API's `sinceTime` has whole
  /// seconds), so the lines it repeats are skipped. A partial line is dropped: it comes again.
  void Restart();
  /// The query to add to the log URL for the next stream: `&sinceTime=...`, or "" before any line.
  std::string SinceQuery() const;
  /// The log is over: a last line without a newline goes out as it is.
  bool Flush(const Emit& emit);
  /// Whether any line has gone out.
  bool started() const { return !last_key_.empty(); }

 private:
  bool Line(std::string_view line, const Emit& emit);

  std::string partial_;
  std::string last_key_;  ///< the last emitted line's time, normalized to compare as text
  int same_ = 0;          ///< lines emitted with that time
  bool replaying_ = false;
  int to_skip_ = 0;  ///< of the lines with last_key_, those the new stream repeats
};

}  // namespace torchx::schedulers::kubernetes
