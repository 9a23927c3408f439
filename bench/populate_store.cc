// Fills a local-scheduler state directory with N ended apps (2 replicas each), as if they had
// run, for the status/list benchmark. Usage: populate_store STATE_DIR N
#include <cstdio>
#include <cstdlib>
#include <string>

#include "schedulers/local/state_store.h"

using namespace torchx::schedulers::local;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: populate_store STATE_DIR N\n");
    return 2;
  }
  auto store = StateStore::Open(argv[1]);
  if (!store) return 1;
  int n = std::atoi(argv[2]);
  for (int i = 0; i < n; ++i) {
    AppRecord a;
    a.app_id = "bench-" + std::to_string(i);
    a.session = "torchx";
    a.name = "bench";
    a.appdef_json =
        R"({"name":"bench","roles":[{"name":"r","entrypoint":"true","num_replicas":2,"resource":{"cpu":1,"gpu":0,"memMB":1}}]})";
    a.plan_json = "{}";
    a.app_dir = std::string(argv[1]) + "/logs/torchx/" + a.app_id;
    a.state = torchx::specs::AppState::kSucceeded;
    a.created = a.updated = NowSeconds();
    if (!(*store)->InsertApp(a).ok()) return 1;
    std::vector<ReplicaRecord> reps;
    for (int r = 0; r < 2; ++r) {
      ReplicaRecord rec;
      rec.app_id = a.app_id;
      rec.role = "r";
      rec.replica_id = r;
      rec.state = torchx::specs::AppState::kSucceeded;
      rec.exit_code = 0;
      reps.push_back(rec);
    }
    if (!(*store)->PutReplicas(reps).ok()) return 1;
  }
  return 0;
}
