// Where the local supervisor records what its policy decides: the app's row and its replicas'
// rows. An interface so that the policy's output can be recorded by a fake in tests; the real
// one writes the state store (one transaction per call).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "schedulers/local/state_store.h"
#include "torchx/specs/app_state.h"

namespace torchx::schedulers::local {

class SupervisorStore {
 public:
  virtual ~SupervisorStore() = default;
  /// `cause`: why a FAILED or CANCELLED app ended (AppRecord::end_cause); nullopt otherwise.
  virtual void SetAppState(specs::AppState state, int num_restarts, const std::string& msg,
                           const std::string& structured_error, std::optional<FailureCause> cause) = 0;
  virtual void PutReplicas(const std::vector<ReplicaRecord>& replicas) = 0;
  /// The replicas' rows and then the app's state, together: the start (the started replicas and
  /// RUNNING, what the launcher waits for). Default: the two calls above.
  virtual void RecordReplicasAndState(const std::vector<ReplicaRecord>& replicas, specs::AppState state,
                                      int num_restarts, const std::string& msg, const std::string& structured_error) {
    PutReplicas(replicas);
    SetAppState(state, num_restarts, msg, structured_error, std::nullopt);
  }
  /// The app's end: its replicas' last rows and its terminal state, which users and tools wait
  /// for. Default: the two calls above.
  virtual void RecordEnd(const std::vector<ReplicaRecord>& replicas, specs::AppState state, int num_restarts,
                         const std::string& msg, const std::string& structured_error,
                         std::optional<FailureCause> cause) {
    PutReplicas(replicas);
    SetAppState(state, num_restarts, msg, structured_error, cause);
  }
};

/// Writes app `app_id` of a StateStore. A failed write while the app runs is dropped: the
/// supervisor carries on with the app (the next write says more), and never blocks its
/// replicas' pipes or signals on the store. The app's end is different: it is the record users
/// and tools wait for, so RecordEnd retries a failed write, backing off to `max_backoff`, for up
/// to `give_up_after` (a full disk, a store locked past its busy timeout). Until then readers see
/// the app running with its supervisor alive, rather than a supervisor that "died" with the
/// outcome lost; past it (a store gone for good) the write is dropped as before.
class StateStoreWriter final : public SupervisorStore {
 public:
  StateStoreWriter(StateStore& store, std::string app_id,
                   std::chrono::milliseconds max_backoff = std::chrono::seconds(10),
                   std::chrono::milliseconds give_up_after = std::chrono::minutes(30))
      : store_(store), app_id_(std::move(app_id)), max_backoff_(max_backoff), give_up_after_(give_up_after) {}

  /// Rows the store holds already (written by someone else): not written again unless they change.
  void AlreadyWritten(const std::vector<ReplicaRecord>& rows) { Written(rows); }

  void SetAppState(specs::AppState state, int num_restarts, const std::string& msg, const std::string& structured_error,
                   std::optional<FailureCause> cause) override {
    (void)store_.SetAppState(app_id_, state, num_restarts, msg, structured_error, cause).status();
  }
  void PutReplicas(const std::vector<ReplicaRecord>& replicas) override {
    std::vector<ReplicaRecord> rows = Unwritten(replicas);
    if (!rows.empty() && store_.PutReplicas(rows).ok()) Written(rows);
  }
  // One transaction each (the store's PutReplicasAndState).
  void RecordReplicasAndState(const std::vector<ReplicaRecord>& replicas, specs::AppState state, int num_restarts,
                              const std::string& msg, const std::string& structured_error) override {
    std::vector<ReplicaRecord> rows = Unwritten(replicas);
    if (store_.PutReplicasAndState(rows, app_id_, state, num_restarts, msg, structured_error, std::nullopt).ok()) {
      Written(rows);
    }
  }
  // The end carries every replica's last row; most were written as each replica ended, and only
  // the others are written again.
  void RecordEnd(const std::vector<ReplicaRecord>& replicas, specs::AppState state, int num_restarts,
                 const std::string& msg, const std::string& structured_error,
                 std::optional<FailureCause> cause) override {
    std::vector<ReplicaRecord> rows = Unwritten(replicas);
    auto deadline = std::chrono::steady_clock::now() + give_up_after_;
    if (UntilWritten(deadline, [&] {
          return store_.PutReplicasAndState(rows, app_id_, state, num_restarts, msg, structured_error, cause);
        })) {
      Written(rows);
    }
  }

 private:
  template <typename Write>
  bool UntilWritten(std::chrono::steady_clock::time_point deadline, const Write& write) {
    std::chrono::milliseconds backoff(100);
    for (Status s = write(); !s.ok(); s = write()) {
      if (std::chrono::steady_clock::now() >= deadline) {
        std::fprintf(stderr, "torchx-supervisor: %s: gave up recording the app's end: %s\n", app_id_.c_str(),
                     s.message().c_str());
        return false;
      }
      std::fprintf(stderr, "torchx-supervisor: %s: cannot record the app's end yet (retrying): %s\n", app_id_.c_str(),
                   s.message().c_str());
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, max_backoff_);
    }
    return true;
  }

  // The rows that change the store, in order: each compared with the row before it for the same
  // replica, in this batch or else the last one written.
  std::vector<ReplicaRecord> Unwritten(const std::vector<ReplicaRecord>& replicas) const {
    std::vector<ReplicaRecord> out;
    out.reserve(replicas.size());
    std::map<std::pair<std::string, int>, const ReplicaRecord*> in_batch;
    for (const ReplicaRecord& r : replicas) {
      std::pair<std::string, int> key{r.role, r.replica_id};
      const ReplicaRecord* before = nullptr;
      if (auto b = in_batch.find(key); b != in_batch.end()) {
        before = b->second;
      } else if (auto w = written_.find(key); w != written_.end()) {
        before = &w->second;
      }
      if (!before || !(*before == r)) out.push_back(r);
      in_batch[key] = &r;
    }
    return out;
  }
  void Written(const std::vector<ReplicaRecord>& rows) {
    for (const ReplicaRecord& r : rows) written_[{r.role, r.replica_id}] = r;
  }

  StateStore& store_;
  std::string app_id_;
  std::chrono::milliseconds max_backoff_;
  std::chrono::milliseconds give_up_after_;
  std::map<std::pair<std::string, int>, ReplicaRecord> written_;  // each replica's last row in the store
};

}  // namespace torchx::schedulers::local
