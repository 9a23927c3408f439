#include "schedulers/line_filter.h"

#include <re2/re2.h>

#include <fmt/format.h>

#include <deque>
#include <optional>
#include <string>
#include <utility>

namespace torchx::schedulers {
namespace {

// Where `{,` follows an atom outside a character class (Python's `{,n}` repeat), or npos.
size_t UnboundedBelowRepeat(std::string_view p) {
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      ++i;  // an escaped character is never a quantifier or a class bracket
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      continue;
    }
    if (c == '[') {
      in_class = true;
      if (i + 1 < p.size() && p[i + 1] == '^') ++i;
      if (i + 1 < p.size() && p[i + 1] == ']') ++i;  // `[]...]`, `[^]...]`: that ] is literal
      continue;
    }
    if (c == '{' && i > 0 && i + 1 < p.size() && p[i + 1] == ',') {
      size_t j = i + 2;
      while (j < p.size() && p[j] >= '0' && p[j] <= '9') ++j;
      if (j > i + 2 && j < p.size() && p[j] == '}') return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

Result<LineFilter> LineFilter::Compile(std::string_view pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return InvalidArgumentError(
        fmt::format("regex: the pattern is {} bytes; at most {} are allowed", pattern.size(), kMaxPatternBytes));
  }
  // Python reads `x{,3}` as "0 to 3 x"; RE2 reads `{,3}` as text. Refused rather than misread.
  if (size_t at = UnboundedBelowRepeat(pattern); at != std::string_view::npos) {
    return InvalidArgumentError(
        fmt::format("regex: invalid pattern '{}': `{{,n}}` at byte {} means 0 to n repeats "
                    "in Python but text in RE2; write `{{0,n}}`",
                    pattern, at));
  }
  RE2::Options options;
  options.set_log_errors(false);  // the reason goes into the Status, not to stderr
  auto re = std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    return InvalidArgumentError(fmt::format("regex: invalid pattern '{}': {}", pattern, re->error()));
  }
  return LineFilter(std::move(re));
}

bool LineFilter::Matches(std::string_view line) const {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  return RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *re_);
}

namespace {

class FilteredLines : public LogIterator {
 public:
  FilteredLines(std::unique_ptr<LogIterator> inner, LineFilter filter)
      : inner_(std::move(inner)), filter_(std::move(filter)) {}

  Result<std::optional<std::string>> Next() override {
    if (!kept_.empty()) {
      std::string line = std::move(kept_.front());
      kept_.pop_front();
      return std::optional<std::string>(std::move(line));
    }
    if (error_) return *std::exchange(error_, std::nullopt);
    if (ended_) return std::optional<std::string>();
    while (true) {
      TORCHX_ASSIGN_OR_RETURN(std::optional<std::string> line, inner_->Next());
      if (!line || filter_.Matches(*line)) return line;
    }
  }

  // True only with a kept line in hand (or the end or an error known): lines the filter drops
  // must not make a caller wait with its output unflushed. Reads ahead in the inner iterator's
  // batches (never one string per line), only while it says a read would not block.
  bool Ready() override {
    while (kept_.empty() && !error_ && !ended_ && inner_->Ready()) {
      auto more = inner_->NextBatch([&](std::string_view line) {
        if (filter_.Matches(line)) kept_.emplace_back(line);
      });
      if (!more.ok()) {
        error_ = more.error();
      } else if (!*more) {
        ended_ = true;
      }
    }
    return !kept_.empty() || error_ || ended_;
  }

  Result<bool> NextBatch(const std::function<void(std::string_view)>& sink) override {
    if (!kept_.empty()) {
      for (const std::string& line : kept_) sink(line);
      kept_.clear();
      return true;
    }
    if (error_) return *std::exchange(error_, std::nullopt);
    if (ended_) return false;
    bool any = false;
    while (!any) {
      TORCHX_ASSIGN_OR_RETURN(bool more, inner_->NextBatch([&](std::string_view line) {
        if (filter_.Matches(line)) {
          sink(line);
          any = true;
        }
      }));
      if (!more) return any;
    }
    return true;
  }

 private:
  std::unique_ptr<LogIterator> inner_;
  LineFilter filter_;
  std::deque<std::string> kept_;  // read ahead by Ready(), handed out first
  std::optional<Status> error_;   // met by Ready(), answered once kept_ is handed out
  bool ended_ = false;            // the inner iterator ended while Ready() read ahead
};

class LastLines final : public LogIterator {
 public:
  LastLines(std::unique_ptr<LogIterator> inner, size_t n) : inner_(std::move(inner)), n_(n) {}

  Result<std::optional<std::string>> Next() override {
    TORCHX_RETURN_IF_ERROR(Fill());
    if (!tail_.empty()) {
      std::string line = std::move(tail_.front());
      tail_.pop_front();
      return std::optional<std::string>(std::move(line));
    }
    if (ended_) return std::optional<std::string>();
    return inner_->Next();
  }

  bool Ready() override { return filled_ ? (!tail_.empty() || ended_ || inner_->Ready()) : true; }

  Result<bool> NextBatch(const std::function<void(std::string_view)>& sink) override {
    TORCHX_RETURN_IF_ERROR(Fill());
    if (!tail_.empty()) {
      for (const std::string& line : tail_) sink(line);
      tail_.clear();
      return true;
    }
    if (ended_) return false;
    return inner_->NextBatch(sink);
  }

 private:
  // Reads what is there now, keeping the last n_ lines.
  Status Fill() {
    if (filled_) return OkStatus();
    filled_ = true;
    do {
      TORCHX_ASSIGN_OR_RETURN(bool more, inner_->NextBatch([&](std::string_view line) {
        if (n_ == 0) return;
        if (tail_.size() == n_) tail_.pop_front();
        tail_.emplace_back(line);
      }));
      if (!more) {
        ended_ = true;
        break;
      }
    } while (inner_->Ready());
    return OkStatus();
  }

  std::unique_ptr<LogIterator> inner_;
  size_t n_;
  std::deque<std::string> tail_;
  bool filled_ = false;
  bool ended_ = false;
};

}  // namespace

std::unique_ptr<LogIterator> LastLogLines(std::unique_ptr<LogIterator> inner, size_t n) {
  return std::make_unique<LastLines>(std::move(inner), n);
}

std::unique_ptr<LogIterator> FilterLogLines(std::unique_ptr<LogIterator> inner, LineFilter filter) {
  return std::make_unique<FilteredLines>(std::move(inner), std::move(filter));
}

}  // namespace torchx::schedulers
