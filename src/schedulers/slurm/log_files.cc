#include "schedulers/slurm/log_files.h"

#include <chrono>
#include <fstream>
#include <sstream>

namespace torchx::schedulers::slurm {
namespace {

namespace fs = std::filesystem;

std::string ReadWhole(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class FileLines : public LogIterator {
 public:
  FileLines(std::vector<fs::path> files, bool follow, std::function<bool()> finished,
            std::shared_ptr<const Clock> clock)
      : files_(std::move(files)), follow_(follow), finished_(std::move(finished)), clock_(std::move(clock)) {}
  Result<std::optional<std::string>> Next() override {
    while (true) {
      if (!pending_.empty()) {
        std::string line = std::move(pending_.front());
        pending_.erase(pending_.begin());
        return std::optional(std::move(line));
      }
      if (index_ >= files_.size()) return std::optional<std::string>();
      // Whether the app had finished is asked before reading: a file read before the app ended may
      // miss its last writes, so "finished" must not be learnt after the read.
      bool done = !follow_ || finished_();
      std::string text = ReadWhole(files_[index_]);
      std::string fresh = text.size() > offset_ ? text.substr(offset_) : "";
      // Only whole lines while the app may still write; the rest at the end.
      size_t cut = fresh.rfind('\n');
      if (done) {
        cut = fresh.size();
      } else if (cut == std::string::npos) {
        cut = 0;
      } else {
        ++cut;
      }
      std::string take = fresh.substr(0, cut);
      offset_ += take.size();
      for (size_t b = 0; b < take.size();) {
        size_t nl = take.find('\n', b);
        size_t e = nl == std::string::npos ? take.size() : nl + 1;
        pending_.push_back(take.substr(b, e - b));
        b = e;
      }
      if (pending_.empty()) {
        if (done) {
          ++index_;
          offset_ = 0;
        } else {
          clock_->SleepFor(std::chrono::milliseconds(200));
        }
      }
    }
  }

 private:
  std::vector<fs::path> files_;
  bool follow_;
  std::function<bool()> finished_;
  std::shared_ptr<const Clock> clock_;
  std::vector<std::string> pending_;
  size_t index_ = 0;
  size_t offset_ = 0;
};

}  // namespace

std::unique_ptr<LogIterator> MakeReplicaLogLines(std::vector<fs::path> files, bool follow,
                                                 std::function<bool()> finished, std::shared_ptr<const Clock> clock) {
  return std::make_unique<FileLines>(std::move(files), follow, std::move(finished), std::move(clock));
}

}  // namespace torchx::schedulers::slurm
