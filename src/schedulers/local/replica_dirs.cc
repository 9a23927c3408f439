#include "schedulers/local/replica_dirs.h"

#include <utility>

#include "schedulers/local/replica_logs.h"

namespace torchx::schedulers::local {

ReplicaDirs::ReplicaDirs(std::vector<std::string> dirs) : dirs_(std::move(dirs)), thread_([this] { Run(); }) {}

ReplicaDirs::~ReplicaDirs() { thread_.join(); }

void ReplicaDirs::Run() {
  for (size_t i = 0; i < dirs_.size(); ++i) {
    MakeReplicaDir(dirs_[i]);
    {
      std::lock_guard<std::mutex> lock(mu_);
      made_ = i + 1;
    }
    cv_.notify_all();
  }
}

void ReplicaDirs::WaitFor(size_t i) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return made_ > i; });
}

}  // namespace torchx::schedulers::local
