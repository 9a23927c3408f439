// TorchX's macros: ${app_id}, ${replica_id}, ${img_root}, ${rank0_env} (and the deprecated
// ${base_img_root}), substituted into a role's args, env values and (nested) metadata strings.
#pragma once

#include <string>
#include <string_view>

#include "torchx/specs/app_def.h"

namespace torchx::specs::macros {

inline constexpr std::string_view kImgRoot = "${img_root}";
inline constexpr std::string_view kBaseImgRoot = "${base_img_root}";
inline constexpr std::string_view kAppId = "${app_id}";
inline constexpr std::string_view kReplicaId = "${replica_id}";
inline constexpr std::string_view kRank0Env = "${rank0_env}";

/// The values a scheduler substitutes for one replica. rank0_env is the *name* of an environment
/// variable that holds the rank-0 host (e.g. TORCHX_RANK0_HOST); the program expands it.
struct Values {
  std::string img_root;
  std::string app_id;
  std::string replica_id;
  std::string rank0_env;

  /// Python string.Template.safe_substitute semantics: `$$` -> `$`; `${name}` and `$name` for the
  /// known names are replaced; unknown placeholders and lone `$` are left as they are.
  std::string Substitute(std::string_view s) const;

  /// A copy of `role` with Substitute applied to every arg, every env value and every string
  /// (recursively, through lists and maps) in metadata. Not to entrypoint, image, env keys,
  /// port_map or mounts, as TorchX.
  Role Apply(const Role& role) const;
};

}  // namespace torchx::specs::macros
