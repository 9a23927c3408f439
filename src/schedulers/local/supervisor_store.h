// Where the local supervisor records what its policy decides: the app's row and its replicas'
// rows. An interface so that the policy's output can be recorded by a fake in tests; the real
// one writes the state store (one transaction per call).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "schedulers/local/state_store.h"
#include "torchx/specs/app_state.h"

namespace torchx::schedulers::local {

class SupervisorStore {
 public:
  virtual ~SupervisorStore() = default;
  virtual void SetAppState(specs::AppState state, int num_restarts, const std::string& msg,
                           const std::string& structured_error) = 0;
  virtual void PutReplicas(const std::vector<ReplicaRecord>& replicas) = 0;
};

/// Writes app `app_id` of a StateStore. A failed write of a passing state is dropped: the
/// supervisor carries on with the app (the next write says more). The app's end is different:
/// it is the record users and tools wait for, so a failed write of a terminal state (or of the
/// replicas' final rows) is retried, backing off to `max_backoff`, until the store takes it
/// (a full disk, a store locked past its busy timeout). Until then readers see the app running,
/// its supervisor alive, rather than a supervisor that "died" with the outcome lost.
class StateStoreWriter final : public SupervisorStore {
 public:
  StateStoreWriter(StateStore& store, std::string app_id,
                   std::chrono::milliseconds max_backoff = std::chrono::seconds(10))
      : store_(store), app_id_(std::move(app_id)), max_backoff_(max_backoff) {}

  void SetAppState(specs::AppState state, int num_restarts, const std::string& msg,
                   const std::string& structured_error) override {
    auto write = [&] { return store_.SetAppState(app_id_, state, num_restarts, msg, structured_error).status(); };
    if (specs::IsTerminal(state)) {
      UntilWritten(write);
    } else {
      (void)write();
    }
  }
  void PutReplicas(const std::vector<ReplicaRecord>& replicas) override {
    if (replicas.empty()) return;
    bool final = std::all_of(replicas.begin(), replicas.end(),
                             [](const ReplicaRecord& r) { return specs::IsTerminal(r.state); });
    if (final) {
      UntilWritten([&] { return store_.PutReplicas(replicas); });
    } else {
      (void)store_.PutReplicas(replicas);
    }
  }

 private:
  template <typename Write>
  void UntilWritten(const Write& write) {
    std::chrono::milliseconds backoff(100);
    for (Status s = write(); !s.ok(); s = write()) {
      std::fprintf(stderr, "torchx-supervisor: %s: cannot record the app's end yet (retrying): %s\n",
                   app_id_.c_str(), s.message().c_str());
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, max_backoff_);
    }
  }

  StateStore& store_;
  std::string app_id_;
  std::chrono::milliseconds max_backoff_;
};

}  // namespace torchx::schedulers::local
