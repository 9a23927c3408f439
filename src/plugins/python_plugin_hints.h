// Which Python scheduler plugins may be installed, known without starting Python's plugin
// discovery: the `[torchx.schedulers]` entry points of the installed distributions (their
// `entry_points.txt`, read from the interpreter's sys.path) and whether a `torchx_plugins/schedulers`
// package is on that path (its names are known only to Python). The CLI asks this before it
// answers a built-in scheduler's name or the default scheduler, so that a plugin of that name wins
// (TorchX #1448) while a launcher with no scheduler plugins starts no Python.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace torchx::plugins {

struct PythonPluginHints {
  std::set<std::string> scheduler_entry_points;  ///< names under [torchx.schedulers]
  bool plugin_packages = false;                  ///< a torchx_plugins/schedulers directory on the path

  /// Whether Python may register scheduler `name` (empty: any scheduler).
  bool MayHaveScheduler(std::string_view name) const {
    return plugin_packages ||
           (name.empty() ? !scheduler_entry_points.empty() : scheduler_entry_points.contains(std::string(name)));
  }
};

/// The names of `group`'s section in an entry_points.txt (INI: `[group]`, then `name = target`).
std::vector<std::string> EntryPointNames(std::string_view text, std::string_view group);

/// Scans `dirs` (sys.path entries; missing ones skipped): every `*.dist-info` and `*.egg-info`'s
/// entry_points.txt, and `<dir>/torchx_plugins/schedulers`. `entry_points`: false when
/// TORCHX_NO_ENTRYPOINTS is set (Python then skips them too).
PythonPluginHints ScanPythonPluginHints(const std::vector<std::string>& dirs, bool entry_points);

/// The hints for the bridge's interpreter: its sys.path is asked once and kept, with the scan, in
/// `<state dir>/cache/python-plugins.json`, valid while the interpreter, the Python environment
/// variables and each scanned directory's modification time are unchanged. No interpreter: none.
PythonPluginHints CachedPythonPluginHints();

}  // namespace torchx::plugins
