// `--mounts` token parsing (TorchX's parse_mounts), with named errors instead of bare KeyErrors.
#include <cstdlib>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/strings.h"
#include "torchx/specs/app_def.h"

namespace torchx::specs {
namespace {

// Canonical key for each accepted spelling, in the order the error message lists them.
const std::vector<std::pair<std::string_view, std::string_view>>& MountKeys() {
  static const std::vector<std::pair<std::string_view, std::string_view>> keys = {
      {"type", "type"},  {"src", "src"},           {"source", "src"},         {"dst", "dst"},   {"destination", "dst"},
      {"target", "dst"}, {"readonly", "readonly"}, {"read_only", "readonly"}, {"perm", "perm"},
  };
  return keys;
}

std::string ValidKeyList() {
  std::vector<std::string_view> names;
  for (const auto& [k, _] : MountKeys()) names.push_back(k);
  return fmt::format("[{}]", fmt::join(names, ", "));
}

std::string ExpandHome(const std::string& path) {
  if (path.empty() || path[0] != '~') return path;
  // Only "~" and "~/..." refer to $HOME; "~user" is left as given.
  if (path.size() > 1 && path[1] != '/') return path;
  const char* home = std::getenv("HOME");
  if (!home) return path;
  return std::string(home) + path.substr(1);
}

}  // namespace

Result<std::vector<Mount>> ParseMounts(const std::vector<std::string>& tokens) {
  std::vector<std::map<std::string, std::string>> groups;
  for (const std::string& token : tokens) {
    auto eq = token.find('=');
    std::string key = token.substr(0, eq);
    std::string val = eq == std::string::npos ? "" : token.substr(eq + 1);
    const std::string_view* canon = nullptr;
    for (const auto& [alias, c] : MountKeys()) {
      if (alias == key) canon = &c;
    }
    if (!canon) {
      return InvalidArgumentError(
          fmt::format("mounts: unknown mount option {}, must be one of {}", key, ValidKeyList()));
    }
    if (*canon == "type") {
      groups.emplace_back();
    } else if (groups.empty()) {
      return InvalidArgumentError(fmt::format("mounts: type must be specified first, got '{}' before any type=", key));
    }
    groups.back()[std::string(*canon)] = val;
  }

  std::vector<Mount> mounts;
  for (size_t i = 0; i < groups.size(); ++i) {
    auto& g = groups[i];
    const std::string& type = g["type"];
    auto require = [&](const char* key) -> Result<std::string> {
      auto it = g.find(key);
      if (it == g.end() || it->second.empty()) {
        return InvalidArgumentError(
            fmt::format("mounts: mount {} (type={}) is missing required option '{}'", i + 1, type, key));
      }
      return it->second;
    };
    bool read_only = g.count("readonly") > 0;
    if (type == "bind") {
      TORCHX_ASSIGN_OR_RETURN(std::string src, require("src"));
      TORCHX_ASSIGN_OR_RETURN(std::string dst, require("dst"));
      mounts.emplace_back(BindMount{ExpandHome(src), dst, read_only});
    } else if (type == "volume") {
      TORCHX_ASSIGN_OR_RETURN(std::string src, require("src"));
      TORCHX_ASSIGN_OR_RETURN(std::string dst, require("dst"));
      mounts.emplace_back(VolumeMount{src, dst, read_only});
    } else if (type == "device") {
      TORCHX_ASSIGN_OR_RETURN(std::string src, require("src"));
      std::string dst = g.count("dst") && !g["dst"].empty() ? g["dst"] : src;
      std::string perm = g.count("perm") ? g["perm"] : "rwm";
      for (char c : perm) {
        if (c != 'r' && c != 'w' && c != 'm') {
          return InvalidArgumentError(
              fmt::format("mounts: mount {} (type=device): perm '{}' has invalid flag '{}', flags must be "
                          "one of r, w, m",
                          i + 1, perm, c));
        }
      }
      mounts.emplace_back(DeviceMount{src, dst, perm});
    } else {
      return InvalidArgumentError(
          fmt::format("mounts: invalid mount type '{}', must be one of [bind, volume, device]", type));
    }
  }
  return mounts;
}

std::vector<DeviceMount> DeviceMountsFor(const std::map<std::string, int>& devices, std::vector<std::string>* unknown) {
  std::vector<DeviceMount> out;
  for (const auto& [name, count] : devices) {
    std::string_view prefix = name == "vpc.amazonaws.com/efa"         ? "/dev/infiniband/uverbs"
                              : name == "aws.amazon.com/neurondevice" ? "/dev/neuron"
                                                                      : "";
    if (prefix.empty()) {
      if (unknown) unknown->push_back(name);
      continue;
    }
    for (int i = 0; i < count; ++i) {
      std::string path = fmt::format("{}{}", prefix, i);
      out.push_back(DeviceMount{path, path, "rwm"});
    }
  }
  return out;
}

Result<std::vector<Mount>> ParseMountsString(std::string_view spec) {
  std::vector<std::string> tokens;
  for (std::string& t : torchx::internal::SplitAny(spec, ",")) {
    if (!t.empty()) tokens.push_back(std::move(t));
  }
  return ParseMounts(tokens);
}

}  // namespace torchx::specs
