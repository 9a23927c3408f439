#include "schedulers/streamed_lines.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace torchx::schedulers {
namespace {

class NewlineDecoder : public LineDecoder {
 public:
  void Feed(std::string_view chunk, std::vector<std::string>& lines) override {
    partial_.append(chunk);
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
      lines.push_back(partial_.substr(start, nl + 1 - start));
    }
    partial_.erase(0, start);
  }
  void Flush(std::vector<std::string>& lines) override {
    if (!partial_.empty()) lines.push_back(std::move(partial_));
    partial_.clear();
  }

 private:
  std::string partial_;
};

// Shared by the iterator and the reading thread; whichever ends last frees it.
struct State {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> lines;
  std::unique_ptr<LineDecoder> decoder;
  std::function<bool(const std::string&)> keep;
  bool done = false, abandoned = false;
  Status error;

  // REQUIRES: mu held.
  void Take(std::vector<std::string>& decoded) {
    for (std::string& l : decoded) {
      if (!keep || keep(l)) lines.push_back(std::move(l));
    }
    decoded.clear();
  }
};

class StreamedLinesIterator : public LogIterator {
 public:
  StreamedLinesIterator(StreamProducer producer, std::unique_ptr<LineDecoder> decoder,
                        std::function<bool(const std::string&)> keep)
      : state_(std::make_shared<State>()) {
    state_->decoder = std::move(decoder);
    state_->keep = std::move(keep);
    thread_ = std::thread([producer = std::move(producer), st = state_] {
      std::vector<std::string> decoded;
      Status rc = producer([&](std::string_view d) {
        std::lock_guard lock(st->mu);
        if (st->abandoned) return false;
        st->decoder->Feed(d, decoded);
        st->Take(decoded);
        st->cv.notify_all();
        return true;
      });
      std::lock_guard lock(st->mu);
      st->error = rc;
      st->decoder->Flush(decoded);
      st->Take(decoded);
      st->done = true;
      st->cv.notify_all();
    });
  }
  ~StreamedLinesIterator() override {
    bool finished;
    {
      std::lock_guard lock(state_->mu);
      state_->abandoned = true;
      finished = state_->done;
    }
    // A producer that has finished is joined, so that its last steps and its thread's exit
    // handlers (OpenSSL frees its per-thread state there) are over before the caller goes on,
    // e.g. to exit. One still blocked reading a stream is left to stop at its next data.
    if (finished) {
      thread_.join();
    } else {
      thread_.detach();
    }
  }
  Result<std::optional<std::string>> Next() override {
    std::unique_lock lock(state_->mu);
    state_->cv.wait(lock, [&] { return !state_->lines.empty() || state_->done; });
    if (!state_->lines.empty()) {
      std::string line = std::move(state_->lines.front());
      state_->lines.pop_front();
      return std::optional(std::move(line));
    }
    if (!state_->error.ok()) return state_->error;
    return std::optional<std::string>();
  }
  bool Ready() override {
    std::lock_guard lock(state_->mu);
    return !state_->lines.empty() || state_->done;
  }

 private:
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<LineDecoder> MakeNewlineDecoder() { return std::make_unique<NewlineDecoder>(); }

std::unique_ptr<LogIterator> MakeStreamedLinesIterator(StreamProducer producer, std::unique_ptr<LineDecoder> decoder,
                                                       std::function<bool(const std::string&)> keep) {
  return std::make_unique<StreamedLinesIterator>(std::move(producer), std::move(decoder), std::move(keep));
}

}  // namespace torchx::schedulers
