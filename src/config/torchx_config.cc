#include "torchx/config/torchx_config.h"

#include "torchx/specs/option_value.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <ini.h>

#include "core/strings.h"

namespace torchx::config {
namespace {

namespace fs = std::filesystem;

// Debian's inih is built with a 200-byte line buffer and with " ;" starting an inline comment.
// configparser has neither, so the reader below refuses lines inih would mis-read rather than let
// it silently truncate a value.
constexpr size_t kMaxLine = 200;

struct ParseState {
  std::string_view text;
  size_t pos = 0;
  int line = 0;
  std::string origin;
  std::string error;
  std::vector<ConfigEntry>* entries = nullptr;
  bool indented = false;  // the current line starts with whitespace: a continuation line
};

char* ReadLine(char* str, int num, void* stream) {
  auto* st = static_cast<ParseState*>(stream);
  if (st->pos >= st->text.size() || !st->error.empty()) return nullptr;
  size_t eol = st->text.find('\n', st->pos);
  size_t end = eol == std::string_view::npos ? st->text.size() : eol + 1;
  std::string_view line = st->text.substr(st->pos, end - st->pos);
  ++st->line;
  if (line.size() + 1 > static_cast<size_t>(num) || line.size() + 1 > kMaxLine) {
    st->error =
        fmt::format("{}:{}: line longer than {} characters is not supported", st->origin, st->line, kMaxLine - 2);
    return nullptr;
  }
  if (line.find('\0') != std::string_view::npos) {
    st->error = fmt::format("{}:{}: NUL character in config", st->origin, st->line);
    return nullptr;
  }
  std::string_view body = line;
  size_t first = body.find_first_not_of(" \t");
  bool comment_line = first == std::string_view::npos || body[first] == ';' || body[first] == '#';
  if (!comment_line) {
    for (size_t i = 1; i < body.size(); ++i) {
      if (body[i] == ';' && (body[i - 1] == ' ' || body[i - 1] == '\t')) {
        st->error = fmt::format(
            "{}:{}: ' ;' is ambiguous (inline comment or list separator): write lists without "
            "spaces around ';' (a;b;c) and put comments on their own line",
            st->origin, st->line);
        return nullptr;
      }
    }
  }
  st->indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
  std::copy(line.begin(), line.end(), str);
  str[line.size()] = '\0';
  st->pos = end;
  return str;
}

int OnEntry(void* user, const char* section, const char* name, const char* value) {
  auto* st = static_cast<ParseState*>(user);
  if (!name || !value) return 1;
  if (section[0] == '\0') {
    st->error = fmt::format("{}:{}: {}: key before any [section] header", st->origin, st->line, name);
    return 0;
  }
  // inih reports an indented continuation line as the same key again; configparser joins the
  // lines of a multi-line value with "\n".
  if (st->indented && !st->entries->empty() && st->entries->back().section == section &&
      st->entries->back().key == name) {
    st->entries->back().value += "\n";
    st->entries->back().value += value;
    return 1;
  }
  for (const ConfigEntry& e : *st->entries) {
    if (e.section == section && e.key == name) {
      st->error = fmt::format("{}:{}: [{}] {}: duplicate key (first set on line {})", st->origin, st->line, section,
                              name, e.line);
      return 0;
    }
  }
  st->entries->push_back(ConfigEntry{section, name, value, st->origin, st->line});
  return 1;
}

Result<specs::CfgVal> CastConfigValue(const ConfigEntry& e, const specs::RunOpt& opt) {
  return specs::DecodeOptionValue(opt.type, e.value, specs::OptionSyntax::kConfigFile,
                                  fmt::format("{}:{}: [{}] {}", e.file, e.line, e.section, e.key));
}

}  // namespace

Result<std::vector<std::string>> TorchxConfig::FindConfigFiles(const std::string& cwd) {
  if (const char* env = std::getenv(std::string(kConfigEnvVar).c_str())) {
    std::string path(env);
    std::error_code ec;
    if (path.empty() || !fs::is_regular_file(path, ec)) {
      return NotFoundError(
          fmt::format("{}={}: the config file it names does not exist (unset it to use $HOME/{} and ./{})",
                      kConfigEnvVar, path, kConfigFileName, kConfigFileName));
    }
    return std::vector<std::string>{path};
  }
  std::vector<std::string> found;
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("HOME")) dirs.emplace_back(home);
  dirs.push_back(cwd);
  for (const std::string& dir : dirs) {
    fs::path p = fs::path(dir) / kConfigFileName;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      std::string s = p.string();
      // $HOME may be the working directory: read the file once.
      bool dup = std::any_of(found.begin(), found.end(), [&](const std::string& f) {
        std::error_code ec2;
        return fs::equivalent(f, s, ec2);
      });
      if (!dup) found.push_back(s);
    }
  }
  return found;
}

Result<TorchxConfig> TorchxConfig::Load(const std::string& cwd) {
  TORCHX_ASSIGN_OR_RETURN(auto files, FindConfigFiles(cwd));
  return LoadFiles(files);
}

Result<TorchxConfig> TorchxConfig::LoadFiles(const std::vector<std::string>& paths) {
  TorchxConfig merged;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return NotFoundError(fmt::format("{}: cannot read config file", path));
    std::stringstream buf;
    buf << in.rdbuf();
    TORCHX_ASSIGN_OR_RETURN(TorchxConfig one, Parse(buf.str(), path));
    merged.Merge(std::move(one));
  }
  return merged;
}

Result<TorchxConfig> TorchxConfig::Parse(std::string_view text, std::string_view origin) {
  TorchxConfig cfg;
  ParseState st;
  st.text = text;
  st.origin = std::string(origin);
  st.entries = &cfg.entries_;
  int rc = ini_parse_stream(&ReadLine, &st, &OnEntry, &st);
  if (!st.error.empty()) return InvalidArgumentError(st.error);
  if (rc != 0) {
    return InvalidArgumentError(
        fmt::format("{}:{}: malformed line (expected [section], key = value, key: value, or a comment)", origin, rc));
  }
  for (ConfigEntry& e : cfg.entries_) e.value = std::string(internal::Strip(e.value));
  cfg.files_.emplace_back(origin);
  return cfg;
}

void TorchxConfig::Merge(TorchxConfig&& lower) {
  for (ConfigEntry& e : lower.entries_) {
    if (!Get(e.section, e.key)) entries_.push_back(std::move(e));
  }
  for (std::string& f : lower.files_) files_.push_back(std::move(f));
}

const ConfigEntry* TorchxConfig::Get(std::string_view section, std::string_view key) const {
  for (const ConfigEntry& e : entries_) {
    if (e.section == section && e.key == key) return &e;
  }
  return nullptr;
}

std::vector<const ConfigEntry*> TorchxConfig::Section(std::string_view section) const {
  std::vector<const ConfigEntry*> out;
  for (const ConfigEntry& e : entries_) {
    if (e.section == section) out.push_back(&e);
  }
  return out;
}

std::map<std::string, std::map<std::string, std::string, std::less<>>> SchedulerSettings(const TorchxConfig& config) {
  std::map<std::string, std::map<std::string, std::string, std::less<>>> out;
  for (const std::string& section : config.SectionNames()) {
    if (section.find(':') != std::string::npos) continue;
    auto& settings = out[section];
    for (const ConfigEntry* e : config.Section(section)) settings.emplace(e->key, e->value);  // first wins
  }
  return out;
}

std::vector<std::string> TorchxConfig::SectionNames() const {
  std::vector<std::string> out;
  for (const ConfigEntry& e : entries_) {
    if (std::find(out.begin(), out.end(), e.section) == out.end()) out.push_back(e.section);
  }
  return out;
}

Status TorchxConfig::ApplySchedulerDefaults(std::string_view scheduler, const specs::RunOpts& opts, specs::Cfg& cfg,
                                            std::vector<std::string>* unknown) const {
  for (const ConfigEntry* e : Section(scheduler)) {
    const specs::RunOpt* opt = opts.Get(e->key);
    if (!opt) {
      if (unknown) unknown->push_back(fmt::format("{} [{}] {}", e->file, e->section, e->key));
      continue;
    }
    if (cfg.count(e->key)) continue;  // the command line wins
    TORCHX_ASSIGN_OR_RETURN(cfg[e->key], CastConfigValue(*e, *opt));
  }
  return OkStatus();
}

std::vector<std::pair<std::string, std::string>> TorchxConfig::ComponentDefaults(std::string_view name) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ConfigEntry* e : Section(fmt::format("component:{}", name))) {
    out.emplace_back(e->key, e->value);
  }
  return out;
}

std::optional<std::string> TorchxConfig::CliDefault(std::string_view command, std::string_view key) const {
  if (const ConfigEntry* e = Get(fmt::format("cli:{}", command), key)) return e->value;
  return std::nullopt;
}

std::string DumpConfig(const std::vector<std::pair<std::string, specs::RunOpts>>& schedulers, bool all_options) {
  std::string out;
  for (const auto& [name, opts] : schedulers) {
    out += fmt::format("[{}]\n", name);
    for (const auto& [key, opt] : opts.options()) {
      if (opt.is_required) {
        std::string help = opt.help.substr(0, 60);
        out += fmt::format("{} = #FIXME:({}) {}\n", key, specs::CfgTypeName(opt.type), help);
      } else if (all_options) {
        std::string v;
        if (const auto* l = std::get_if<specs::CfgList>(&opt.default_value)) {
          for (size_t i = 0; i < l->size(); ++i) v += (i ? ";" : "") + (*l)[i];
        } else if (const auto* d = std::get_if<specs::CfgDict>(&opt.default_value)) {
          bool first = true;
          for (const auto& [k, val] : *d) {
            v += (first ? "" : ";") + k + ":" + val;
            first = false;
          }
        } else {
          v = specs::CfgValToString(opt.default_value);
        }
        out += fmt::format("{} = {}\n", key, v);
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace torchx::config
