// Which log lines `torchx log --regex` (and the dashboard's `?regex=`) keeps, for every back-end:
// the Runner wraps a back-end's LogIterator in FilterLogLines when a pattern is given, so no
// back-end filters on its own and the unfiltered path keeps its batching.
//
// The patterns are RE2's (linear time in the line, no recursion: a 1 MiB line or a pattern such
// as `(a|b)*c` costs no stack). TorchX hands the pattern to Python's `re.search`; RE2 takes the
// same syntax but for backreferences (`\1`), lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`), possessive
// and atomic groups, conditionals, `\Z` (RE2 spells it `\z`) and `{,n}` (which RE2 would read as
// text): such a pattern is refused with the reason. Classes such as `\d` and `\w` are ASCII-only
// in RE2. docs/compatibility.md lists the differences.
//
// Thread-safety: a LineFilter is immutable once compiled and may be shared across threads.
#pragma once

#include <memory>
#include <string_view>

#include "torchx/schedulers/scheduler.h"
#include "torchx/status.h"

namespace re2 {
class RE2;
}

namespace torchx::schedulers {

class LineFilter {
 public:
  /// kInvalidArgument naming `regex` (with RE2's reason) for a pattern RE2 cannot compile, or
  /// one longer than kMaxPatternBytes.
  static Result<LineFilter> Compile(std::string_view pattern);

  /// Whether the pattern matches anywhere in `line` (Python's re.search). A trailing newline is
  /// not part of what is matched, so `x$` matches "x\n" as it does in Python.
  bool Matches(std::string_view line) const;

  static constexpr size_t kMaxPatternBytes = 4096;

 private:
  explicit LineFilter(std::shared_ptr<const re2::RE2> re) : re_(std::move(re)) {}
  std::shared_ptr<const re2::RE2> re_;
};

/// The lines of `inner` that `filter` matches. Next/NextBatch block as inner's do while no kept
/// line is ready; Ready() is true only when a kept line can be handed out without blocking.
std::unique_ptr<LogIterator> FilterLogLines(std::unique_ptr<LogIterator> inner, LineFilter filter);

/// The last `n` lines of what `inner` has now, then (when it follows) what it yields after, as
/// `tail -n N [-f]`: lines are read until `inner` ends or would block (Ready() false), keeping
/// only the last n, so a log of any length costs n lines of memory. The Runner applies it for
/// LogOptions::last_lines, after the regex filter (the last n matching lines).
std::unique_ptr<LogIterator> LastLogLines(std::unique_ptr<LogIterator> inner, size_t n);

}  // namespace torchx::schedulers
