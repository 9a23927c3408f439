// Named resources: TorchX's generic (`gpu.small`, `cpu.large`...) and AWS (`aws_p4d.24xlarge`...)
// tables, with their exact values. Plugins add more names through the plugin registry, which
// layers on this built-in table.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/specs/app_def.h"
#include "torchx/status.h"

namespace torchx::specs {

/// A fresh Resource for `name`. "NULL" and "MISSING" give NullResource(), as TorchX.
/// kNotFound for an unknown name: "did you mean `x`?" when one is close, else the full list.
Result<Resource> GetNamedResource(std::string_view name);

/// Every name (built-in and from the installed source), sorted.
std::vector<std::string> NamedResourceNames();
/// The built-in names only, sorted.
std::vector<std::string> BuiltinNamedResourceNames();

/// Where names beyond the built-in table come from (the plugin registry installs one), so that
/// specs stays independent of plugins. `find` returns nullopt for an unknown name.
struct NamedResourceSource {
  std::function<std::optional<Result<Resource>>(std::string_view name)> find;
  std::function<std::vector<std::string>()> names;
};
/// Replaces the extra source (an empty one removes it). Not thread-safe against lookups: call at
/// start-up.
void SetNamedResourceSource(NamedResourceSource source);

/// TorchX's resource(cpu, gpu, memMB, h): `h` (a named resource) wins when non-empty; otherwise
/// values <= 0 take the defaults cpu=2, gpu=0, memMB=1024 (TorchX quirk kept: cpu=0 becomes 2).
Result<Resource> MakeResource(int cpu, int gpu, int memMB, std::string_view h = {});

/// GiB -> memMB as TorchX's AWS table computes it (GiB "taxed" to 96%, truncated).
int AwsMemMB(int gib);

}  // namespace torchx::specs
