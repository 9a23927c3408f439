// What the verbs that launch a composite (`pipeline run`, `sweep run`, `composite run`) share: the
// request planned through the one launch entry (torchx::PlanComposite), then printed (--dryrun) or
// launched, its handle printed, and with --wait followed to its end.
#pragma once

#include <string>
#include <string_view>

#include "torchx/composite/launch.h"
#include "torchx/config/torchx_config.h"
#include "torchx/plugins/registry.h"

namespace torchx::cli {

/// The exit code: 0 once launched (with `wait`: once it succeeded), else the error's. With `wait`,
/// Ctrl-C or SIGTERM from the launch on cancels a composite whose children run on this host.
int LaunchCompositeVerb(plugins::PluginRegistry& registry, const config::TorchxConfig& config,
                        const composite::LaunchRequest& request, bool dryrun, bool wait);

/// A document file's text, or the error naming it and what it was to be (`pipeline file`).
Result<std::string> ReadDocument(const std::string& path, std::string_view what);

/// What `pipeline run` and `composite run` take: a kind's file and the options over it.
struct DocumentRunOptions {
  std::string kind;
  std::string file;
  std::string scheduler;
  std::string cfg;
  std::string name;
  bool dryrun = false;
  bool wait = false;
};

/// The file read, `-s` defaulted from `.torchxconfig`'s `[cli:run] scheduler`, `--name` over the
/// file's, then LaunchCompositeVerb.
int RunDocument(const DocumentRunOptions& opts, plugins::PluginRegistry& registry);

}  // namespace torchx::cli
