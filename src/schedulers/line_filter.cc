#include "schedulers/line_filter.h"

#include <re2/re2.h>

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>

namespace torchx::schedulers {

Result<LineFilter> LineFilter::Compile(std::string_view pattern) {
  if (pattern.size() > kMaxPatternBytes) {
    return InvalidArgumentError(
        fmt::format("regex: the pattern is {} bytes; at most {} are allowed", pattern.size(), kMaxPatternBytes));
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
    if (error_) return *std::exchange(error_, std::nullopt);
    if (kept_) return std::exchange(kept_, std::nullopt);
    if (ended_) return std::optional<std::string>();
    while (true) {
      TORCHX_ASSIGN_OR_RETURN(std::optional<std::string> line, inner_->Next());
      if (!line || filter_.Matches(*line)) return line;
    }
  }

  // True only with a kept line in hand: lines the filter drops must not make a caller wait with
  // its output unflushed.
  bool Ready() override {
    while (!kept_ && inner_->Ready()) {
      auto line = inner_->Next();
      if (!line.ok()) {
        error_ = line.error();
        return true;  // Next answers with the error without blocking
      }
      if (!*line) {
        ended_ = true;
        return true;
      }
      if (filter_.Matches(**line)) kept_ = std::move(*line);
    }
    return kept_.has_value();
  }

  Result<bool> NextBatch(const std::function<void(std::string_view)>& sink) override {
    if (error_) return *std::exchange(error_, std::nullopt);
    if (kept_) {
      sink(*kept_);
      kept_.reset();
      return true;
    }
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
  std::optional<std::string> kept_;  // read ahead by Ready()
  std::optional<Status> error_;      // met by Ready(), answered by the next call
  bool ended_ = false;               // the inner iterator ended while Ready() read ahead
};

}  // namespace

std::unique_ptr<LogIterator> FilterLogLines(std::unique_ptr<LogIterator> inner, LineFilter filter) {
  return std::make_unique<FilteredLines>(std::move(inner), std::move(filter));
}

}  // namespace torchx::schedulers
