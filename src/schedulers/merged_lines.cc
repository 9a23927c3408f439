#include "schedulers/merged_lines.h"

#include <deque>

namespace torchx::schedulers {
namespace {

class MergedLogIterator : public LogIterator {
 public:
  explicit MergedLogIterator(std::vector<PrefixedLog> logs) : logs_(std::move(logs)), ended_(logs_.size(), false) {}

  Result<std::optional<std::string>> Next() override {
    while (pending_.empty()) {
      TORCHX_ASSIGN_OR_RETURN(bool more, NextBatch([this](std::string_view line) { pending_.emplace_back(line); }));
      if (!more && pending_.empty()) return std::optional<std::string>();
    }
    std::string line = std::move(pending_.front());
    pending_.pop_front();
    return std::optional(std::move(line));
  }

  bool Ready() override {
    if (!pending_.empty()) return true;
    for (size_t i = 0; i < logs_.size(); ++i) {
      if (!ended_[i] && logs_[i].lines->Ready()) return true;
    }
    return false;
  }

  Result<bool> NextBatch(const std::function<void(std::string_view)>& sink) override {
    if (!pending_.empty()) {
      for (const std::string& line : pending_) sink(line);
      pending_.clear();
      return true;
    }
    // Each ready log in turn, starting after the one read last, so none is starved.
    bool read = false;
    for (size_t k = 0; k < logs_.size(); ++k) {
      size_t i = (next_ + k) % logs_.size();
      if (ended_[i] || !logs_[i].lines->Ready()) continue;
      TORCHX_RETURN_IF_ERROR(ReadOne(i, sink));
      read = true;
      next_ = i + 1;
      break;
    }
    if (!read) {  // none ready: wait in the first live one's read
      for (size_t i = 0; i < logs_.size() && !read; ++i) {
        if (ended_[i]) continue;
        TORCHX_RETURN_IF_ERROR(ReadOne(i, sink));
        read = true;
      }
    }
    for (bool e : ended_) {
      if (!e) return true;
    }
    return false;
  }

 private:
  Status ReadOne(size_t i, const std::function<void(std::string_view)>& sink) {
    const std::string& prefix = logs_[i].prefix;
    auto more = logs_[i].lines->NextBatch([&](std::string_view line) {
      line_.assign(prefix);
      line_.append(line);
      sink(line_);
    });
    if (!more) return more.error();
    if (!*more) ended_[i] = true;
    return OkStatus();
  }

  std::vector<PrefixedLog> logs_;
  std::vector<bool> ended_;
  std::deque<std::string> pending_;
  std::string line_;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<LogIterator> MakeMergedLogIterator(std::vector<PrefixedLog> logs) {
  return std::make_unique<MergedLogIterator>(std::move(logs));
}

}  // namespace torchx::schedulers
