// Internal: the pieces of dist.ddp / dist.spmd that have their own rules (and tests).
#pragma once

#include <map>
#include <string>

#include "torchx/devices/device.h"
#include "torchx/specs/named_resources.h"
#include "torchx/status.h"

namespace torchx::components::internal {

/// `-j` of dist.ddp: `MIN:MAXxN` (elastic), `NNxN`, or bare `N` (one node, N processes).
struct NNodes {
  int min_nodes = 1;
  int max_nodes = 1;
  int nproc_per_node = 1;
  std::string nnodes;  ///< what torchrun's --nnodes gets: "MIN:MAX" or "NN"
};
/// `-j`: [MIN:]MAXxNPROC, or NPROC. NPROC may be `auto`: the chip count of the device plugin
/// $PJRT_DEVICE selects among `devices` (an error when null).
Result<NNodes> ParseNNodes(const std::string& j, const devices::DeviceSource* devices = nullptr);

/// `-j` of dist.spmd with host type `h`: bare `N` is N nodes x (GPUs of h); `NxM` as given.
/// Returns "NxM".
Result<std::string> ParseSpmdJ(const std::string& h, const std::string& j,
                               const specs::NamedResourceSource* named_resources = nullptr);

/// `--name`: `exp/run`, `exp/`, `/run`, `run` or `/`; experiment defaults to
/// "default-experiment", run to the script's stem or the module's last component.
struct StructuredName {
  std::string experiment;
  std::string run;
};
Result<StructuredName> ParseStructuredName(const std::string& name, const std::string& m, const std::string& script);

/// What `dist.ddp --debug` adds to the env: PyTorch's usual debugging switches.
const std::map<std::string, std::string>& TorchDebugFlags();

/// Python's Path(p).stem.
std::string PathStem(const std::string& path);

}  // namespace torchx::components::internal
