// Making the replicas' directories ahead of their spawns, on a thread of its own. A replica's
// directory must exist before it starts (its TORCHELASTIC_ERROR_FILE is there), and on a slow
// disk a mkdir costs as much as a spawn (about 300 us on the benchmark machine's, serialised by
// the parent directory's lock): made in order on this thread, they overlap the supervisor's
// spawns instead of adding to them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace torchx::schedulers::local {

class ReplicaDirs {
 public:
  /// Starts making `dirs` (0700, parents as needed), in order.
  explicit ReplicaDirs(std::vector<std::string> dirs);
  /// Waits for the rest.
  ~ReplicaDirs();
  ReplicaDirs(const ReplicaDirs&) = delete;
  ReplicaDirs& operator=(const ReplicaDirs&) = delete;

  /// Returns once dirs[i] has been made (or could not be: the replica's start then says why).
  void WaitFor(size_t i);

 private:
  void Run();

  std::vector<std::string> dirs_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t made_ = 0;     // dirs_[0, made_) are done
  std::thread thread_;  // last: it starts once the members it uses exist
};

}  // namespace torchx::schedulers::local
