// `.torchxconfig`: INI files that give defaults to schedulers (`[local_cwd]`), components
// (`[component:dist.ddp]`) and CLI verbs (`[cli:run]`).
//
// Lookup (TorchX's rules): if TORCHXCONFIG is set, only that file, which must exist; else
// $HOME/.torchxconfig then ./.torchxconfig, those that exist. The first file that sets a key wins,
// and values given on the command line beat every file. Keys are case-sensitive.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchx/specs/runopts.h"
#include "torchx/status.h"

namespace torchx::config {

inline constexpr std::string_view kConfigFileName = ".torchxconfig";
inline constexpr std::string_view kConfigEnvVar = "TORCHXCONFIG";

/// One `key = value` with where it came from, for error messages.
struct ConfigEntry {
  std::string section;
  std::string key;
  std::string value;
  std::string file;
  int line = 0;
};

class TorchxConfig {
 public:
  /// The files TorchX would read, in precedence order: [$TORCHXCONFIG] or
  /// [$HOME/.torchxconfig, <cwd>/.torchxconfig] (existing ones only). kNotFound when TORCHXCONFIG
  /// names a missing file (or is empty).
  static Result<std::vector<std::string>> FindConfigFiles(const std::string& cwd);
  /// FindConfigFiles + LoadFiles.
  static Result<TorchxConfig> Load(const std::string& cwd);
  /// Parses the files in precedence order (first wins per section/key).
  static Result<TorchxConfig> LoadFiles(const std::vector<std::string>& paths);
  /// Parses INI text; `origin` names it in errors. Errors name origin and line.
  static Result<TorchxConfig> Parse(std::string_view text, std::string_view origin);

  /// Files that contributed, in precedence order.
  const std::vector<std::string>& files() const { return files_; }

  const ConfigEntry* Get(std::string_view section, std::string_view key) const;
  /// Entries of one section in file order.
  std::vector<const ConfigEntry*> Section(std::string_view section) const;
  /// Names of sections, in first-seen order.
  std::vector<std::string> SectionNames() const;

  /// Merges `[<scheduler>]` into `cfg` for keys `cfg` does not already set (the CLI wins),
  /// casting with configparser's rules: `None` -> None; bool from true/false/yes/no/on/off/1/0;
  /// lists split on ';' only; dicts `k:v` split on ';' or ','; others by type. Keys the scheduler
  /// does not declare are skipped and reported in `unknown` ("file [section] key"). Errors name
  /// file, line, section and key.
  Status ApplySchedulerDefaults(std::string_view scheduler, const specs::RunOpts& opts, specs::Cfg& cfg,
                                std::vector<std::string>* unknown = nullptr) const;

  /// `[component:<name>]` entries as CLI-string defaults (name -> value).
  std::vector<std::pair<std::string, std::string>> ComponentDefaults(std::string_view name) const;

  /// `[cli:<command>] <key>`, e.g. ("run", "scheduler").
  std::optional<std::string> CliDefault(std::string_view command, std::string_view key) const;

 private:
  void Merge(TorchxConfig&& lower);  // adds keys this one lacks

  std::vector<ConfigEntry> entries_;
  std::vector<std::string> files_;
};

/// Each scheduler's section (a section named without ':') as key -> value, the first file's value
/// winning: what a Runner hands each back-end it builds (RunnerOptions::scheduler_settings).
std::map<std::string, std::map<std::string, std::string, std::less<>>> SchedulerSettings(const TorchxConfig& config);

/// `torchx configure` output: one `[<scheduler>]` section per scheduler. With `all_options`,
/// every option with its default; otherwise only required ones as `#FIXME:(type) help` (help cut
/// to 60 characters). Lists are written ';'-joined, dicts `k:v;k:v`, None as `None`.
std::string DumpConfig(const std::vector<std::pair<std::string, specs::RunOpts>>& schedulers, bool all_options);

}  // namespace torchx::config
