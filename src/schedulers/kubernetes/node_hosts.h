// A Kubernetes cluster's nodes as hosts (`torchx hosts -s kubernetes`): the Node list (capacity,
// Ready condition, address), metrics-server's node figures (what is in use), and the pods of the
// user's torchx jobs in the namespace placed on their nodes. Pure, table-tested;
// kubernetes_scheduler.cc makes the three reads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchx/schedulers/hosts.h"
#include "torchx/status.h"

namespace torchx::schedulers::kubernetes {

/// `nodes_json`: GET /api/v1/nodes (a NodeList). `node_metrics_json`: GET
/// /apis/metrics.k8s.io/v1beta1/nodes, or empty where the cluster has no metrics API. `pods_json`:
/// the namespace's torchx pods (a PodList); a running pod's replica goes on its node, as an app
/// `<namespace>:<job>`. A node's state is "Ready", "NotReady" or "Unknown", with
/// ",SchedulingDisabled" when cordoned. kInvalidArgument for a NodeList that is none.
Result<std::vector<HostInfo>> HostsFromNodes(std::string_view nodes_json, std::string_view node_metrics_json,
                                             std::string_view pods_json, const std::string& ns);

}  // namespace torchx::schedulers::kubernetes
