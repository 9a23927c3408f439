// Where the local supervisor records what its policy decides: the app's row and its replicas'
// rows. An interface so that the policy's output can be recorded by a fake in tests; the real
// one writes the state store (one transaction per call).
#pragma once

#include <string>
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

/// Writes app `app_id` of a StateStore. A failed write is dropped: the supervisor carries on
/// with the app, and readers detect a supervisor that is gone.
class StateStoreWriter final : public SupervisorStore {
 public:
  StateStoreWriter(StateStore& store, std::string app_id) : store_(store), app_id_(std::move(app_id)) {}

  void SetAppState(specs::AppState state, int num_restarts, const std::string& msg,
                   const std::string& structured_error) override {
    (void)store_.SetAppState(app_id_, state, num_restarts, msg, structured_error).status();
  }
  void PutReplicas(const std::vector<ReplicaRecord>& replicas) override {
    if (!replicas.empty()) (void)store_.PutReplicas(replicas);
  }

 private:
  StateStore& store_;
  std::string app_id_;
};

}  // namespace torchx::schedulers::local
