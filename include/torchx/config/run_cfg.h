// A run's scheduler options from everything that may give them, in one precedence: the request's
// own sources (highest first: a pipeline step's `cfg`, then `-cfg`, then the file's `cfg`; the
// CLI's `-cfg`; the dashboard's `cfg` field), then `[<scheduler>]` of .torchxconfig for the keys
// none of them set. The CLI, the dashboard and pipelines all resolve through this function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchx/config/torchx_config.h"
#include "torchx/specs/runopts.h"
#include "torchx/status.h"

namespace torchx::config {

/// One source of options: TorchX's `k=v,k2=v2` string, or a JSON object of typed values.
struct CfgSource {
  enum class Form { kString, kJsonObject };
  Form form = Form::kString;
  std::string text;   ///< the string, or the JSON text (empty: nothing given)
  std::string where;  ///< what errors name: "-cfg", "steps.train.cfg", "field `cfg`"
};

/// What to do with a key the scheduler does not declare.
enum class UnknownOptions {
  kRefuse,  ///< kInvalidArgument naming the source, the key, the valid options, "did you mean"
  kWarn,    ///< skipped, and reported in `warnings`
};

/// Resolves `sources` (highest precedence first) and then .torchxconfig's `[<scheduler>]` into
/// one cfg, each value cast to its option's type. Keys of .torchxconfig the scheduler does not
/// declare are always skipped and reported in `warnings` ("file [section] key"). kInvalidArgument
/// naming the source for a malformed value or (kRefuse) an unknown key.
Result<specs::Cfg> ResolveRunCfg(std::string_view scheduler, const specs::RunOpts& opts,
                                 const std::vector<CfgSource>& sources, const TorchxConfig& config,
                                 UnknownOptions unknown, std::vector<std::string>* warnings = nullptr);

}  // namespace torchx::config
