// A Ray cluster's nodes as hosts (`torchx hosts -s ray`): the dashboard's node summary (what its
// Cluster page shows: each node's resources, CPU and memory readings, state) read into HostInfo,
// pure and table-tested; ray_scheduler.cc asks for it and puts the gangs' replicas on the nodes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "schedulers/ray/ray_frames.h"
#include "torchx/schedulers/hosts.h"
#include "torchx/status.h"

namespace torchx::schedulers::ray {

struct RayNode {
  std::string node_id;
  HostInfo host;
};

/// GET /nodes?view=summary's answer as nodes, in its order. A host is named by its machine's name,
/// with the node id's first 8 characters where several nodes share a machine; "head" is in the
/// head's groups. CPUs and GPUs are the node's Ray resources; memory and use are the machine's
/// readings. kInvalidArgument for an answer that is no node summary.
Result<std::vector<RayNode>> ParseRayNodes(std::string_view summary_json);

/// Puts each replica of a running gang (`app_id`'s) on its node.
void PlaceGang(const std::string& app_id, const GangStatus& gang, std::vector<RayNode>& nodes);

}  // namespace torchx::schedulers::ray
