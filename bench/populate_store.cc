// Fills a local-scheduler state directory with N ended apps (2 replicas each), as if they had
// run, for the status/list benchmark, each record the size of a real app's. Usage: populate_store STATE_DIR N
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
    // Records the size of a real two-replica app's (its AppDef and the plan its supervisor runs,
    // with each replica's environment): about 2 KB, where a store's cost lies.
    std::string dir = std::string(argv[1]) + "/logs/torchx/" + a.app_id;
    a.appdef_json =
        R"({"name":"bench","roles":[{"name":"r","image":"ghcr.io/pytorch/torchx:0.7.0","entrypoint":"python",)"
        R"("args":["-m","torch.distributed.run","--nnodes","1","--nproc_per_node","2","train.py","--lr","0.01"],)"
        R"("env":{"LOGLEVEL":"WARNING","TORCHX_JOB_ID":"local_cwd://torchx/${app_id}"},"num_replicas":2,)"
        R"("min_replicas":null,"max_retries":0,"retry_policy":"APPLICATION","resource":{"cpu":4,"gpu":0,)"
        R"("memMB":8192,"capabilities":{},"devices":{},"tags":{}},"port_map":{},"metadata":{},"mounts":[]}],)"
        R"("metadata":{}})";
    a.plan_json = R"({"app_dir":")" + dir + R"(","app_id":")" + a.app_id + R"(","replicas":[)";
    for (int r = 0; r < 2; ++r) {
      std::string rd = dir + "/r/" + std::to_string(r);
      a.plan_json += std::string(r ? "," : "") + R"({"argv":["python","-m","torch.distributed.run","train.py"],)" +
                     R"("cwd":"/home/user/project","env":{"PATH":"/usr/local/sbin:/usr/local/bin:/usr/sbin:)" +
                     R"(/usr/bin:/sbin:/bin:/home/user/.local/bin:/opt/conda/bin","PET_LOG_DIR":")" + dir +
                     R"(/torchelastic/r","TORCHELASTIC_ERROR_FILE":")" + rd + R"(/error.json","TORCHX_JOB_ID":)" +
                     R"("local_cwd://torchx/)" + a.app_id + R"("},"error_file":")" + rd +
                     R"(/error.json","log_dir":")" + rd + R"(","replica_id":)" + std::to_string(r) + R"(,"role":"r"})";
    }
    a.plan_json += "]}";
    a.app_dir = dir;
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
