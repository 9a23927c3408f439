// Named resources: TorchX's generic (`gpu.small`, `cpu.large`...) and AWS (`aws_p4d.24xlarge`...)
// tables, with their exact values. Plugins add more names through the plugin registry, which
// callers pass in as a NamedResourceSource.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchx/specs/app_def.h"
#include "torchx/status.h"

namespace torchx::specs {

/// Names beyond the built-in table. The plugin registry is one: it is handed to what resolves
/// names (components, spec files) so that specs stays independent of plugins.
class NamedResourceSource {
 public:
  virtual ~NamedResourceSource() = default;
  /// nullopt for a name the source does not have.
  virtual std::optional<Result<Resource>> Find(std::string_view name) const = 0;
  virtual std::vector<std::string> Names() const = 0;
};

/// A fresh Resource for `name`: "NULL" and "MISSING" give NullResource(), as TorchX; then the
/// built-in table; then `extra` (when given). kNotFound for an unknown name: "did you mean `x`?"
/// when one is close, else the full list.
Result<Resource> GetNamedResource(std::string_view name, const NamedResourceSource* extra = nullptr);

/// Every name (built-in and from `extra`), sorted.
std::vector<std::string> NamedResourceNames(const NamedResourceSource* extra = nullptr);
/// The built-in names only, sorted.
std::vector<std::string> BuiltinNamedResourceNames();

/// TorchX's resource(cpu, gpu, memMB, h): `h` (a named resource) wins when non-empty; otherwise
/// values <= 0 take the defaults cpu=2, gpu=0, memMB=1024 (TorchX quirk kept: cpu=0 becomes 2).
/// Named resources come from GetNamedResource(h, extra).
Result<Resource> MakeResource(int cpu, int gpu, int memMB, std::string_view h = {},
                              const NamedResourceSource* extra = nullptr);

/// GiB -> memMB as TorchX's AWS table computes it (GiB "taxed" to 96%, truncated).
int AwsMemMB(int gib);

}  // namespace torchx::specs
