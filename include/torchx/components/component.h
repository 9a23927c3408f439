// Components: typed factories that return an AppDef. A component declares its parameters once
// (ComponentSpec); CLI arguments, `--help`, `.torchxconfig [component:<name>]` defaults and JSON
// arguments all derive from that declaration, so no component parses anything itself.
//
// Argument rules follow TorchX (torchx/specs/builders.py): every parameter is `--name VALUE` or
// `--name=VALUE` (single-letter names also `-x`); bools take a value ("true", any case, is true);
// lists are comma-separated; dicts are `k=v,k2=v2`; an Optional parameter given "" is None; a
// variadic parameter takes everything from the first non-option argument (a leading `--` is
// dropped); a config default makes a required parameter optional; repeating an option is an error.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchx/devices/device.h"
#include "torchx/specs/app_def.h"
#include "torchx/specs/named_resources.h"
#include "torchx/specs/runopts.h"
#include "torchx/status.h"
#include "torchx/value.h"

namespace torchx::components {

/// A parameter's type is an option type: component arguments, runopts and .torchxconfig values
/// share one type and one decoder (specs/option_value.h).
using ParamType = specs::CfgType;

/// "str", "int", "float", "bool", "list", "dict" (as written in declarative component files).
std::string_view ParamTypeName(ParamType t);
Result<ParamType> ParseParamType(std::string_view name);

struct Param {
  std::string name;
  ParamType type = ParamType::kStr;
  /// Optional[T]: None is a valid value.
  bool optional = false;
  /// nullopt: required. A null Value: defaults to None.
  std::optional<Value> default_value;
  std::string help;
};

struct ComponentSpec {
  std::string name;         ///< "dist.ddp", "utils.echo", or a file path
  std::string summary;      ///< one line, for `torchx builtins`
  std::string description;  ///< the rest of the help text
  std::vector<Param> params;
  /// The `*args` parameter (name and help), if the component takes one.
  std::optional<Param> varargs;
  /// Non-empty for a component kept as an alias: the warning each use prints (TorchX's text).
  std::string deprecation = {};
};

/// Parsed, typed, defaulted arguments. Accessors REQUIRE the parameter to exist with that type
/// (the parser guarantees it for declared parameters).
struct ComponentArgs {
  std::map<std::string, Value> values;
  std::vector<std::string> varargs;
  bool help_requested = false;

  const Value& Get(const std::string& name) const;
  std::string Str(const std::string& name) const;
  std::optional<std::string> OptStr(const std::string& name) const;
  std::int64_t Int(const std::string& name) const;
  double Float(const std::string& name) const;
  bool Bool(const std::string& name) const;
  std::optional<std::vector<std::string>> OptList(const std::string& name) const;
  std::optional<std::map<std::string, std::string>> OptDict(const std::string& name) const;
};

/// What a component may ask of its host while it builds, beyond the built-in tables: named
/// resources (`-h`) and device plugins (`-j ...xauto`). The Runner passes the registry's; either
/// may be null (built-in names only; no devices).
struct BuildContext {
  const specs::NamedResourceSource* named_resources = nullptr;
  const devices::DeviceSource* devices = nullptr;
};

/// A component: its declaration and the function from arguments to AppDef.
class Component {
 public:
  virtual ~Component() = default;
  virtual const ComponentSpec& spec() const = 0;
  /// Builds the AppDef. kInvalidArgument (naming the parameter) for arguments that are well typed
  /// but inconsistent, e.g. both --script and -m.
  virtual Result<specs::AppDef> Build(const ComponentArgs& args, const BuildContext& context) const = 0;
  /// Where the component comes from ("builtin", a file path), for messages.
  virtual std::string origin() const { return "builtin"; }
};

using ConfigDefaults = std::vector<std::pair<std::string, std::string>>;

/// Parses component CLI arguments against `spec`. `config_defaults` are `[component:<name>]`
/// values written as CLI strings (they beat declared defaults and make required parameters
/// optional). Errors (kInvalidArgument) name the parameter: unknown option (with "did you mean"),
/// repeated option, missing value, wrong type, missing required parameter, unexpected positional.
Result<ComponentArgs> ParseComponentArgs(const ComponentSpec& spec, const std::vector<std::string>& argv,
                                         const ConfigDefaults& config_defaults = {});

/// Arguments as a JSON object (TorchX's `--stdin` / run_component(component_args=...)): values
/// are taken as typed JSON, without string decoding; `"*"` (or the varargs name) holds a list.
Result<ComponentArgs> ComponentArgsFromJson(const ComponentSpec& spec, std::string_view json,
                                            const ConfigDefaults& config_defaults = {});

/// `torchx run <component> --help`: usage line, description, and each parameter with its help
/// and " (required)" or " (default: X)".
std::string ComponentHelp(const ComponentSpec& spec);

/// A Python-style rendering of the declaration (`def ddp(*script_args: str, ...) -> AppDef:` with
/// its docstring), for `torchx builtins --print`.
std::string ComponentSignature(const ComponentSpec& spec);

/// Build + ValidateAppDef, with errors prefixed by the component's name.
Result<specs::AppDef> BuildAppDef(const Component& component, const ComponentArgs& args,
                                  const BuildContext& context = {});

/// The 11 TorchX builtins, sorted by name: dist.ddp, dist.spmd,
/// utils.{echo,touch,sh,python,binary,copy,booth}, serve.torchserve, metrics.tensorboard.
/// The composition root adds them to the plugin registry (source "builtin").
std::vector<std::shared_ptr<const Component>> BuiltinComponents();

/// The components a name is looked up in (the plugin registry is one), so that finding a
/// component needs no registry of its own.
class ComponentSource {
 public:
  virtual ~ComponentSource() = default;
  /// nullptr for an unknown name.
  virtual std::shared_ptr<const Component> Find(std::string_view name) const = 0;
  /// Sorted.
  virtual std::vector<std::string> Names() const = 0;
};

/// `source.Find(name)`, or kNotFound with "did you mean" and a pointer to `torchx builtins`.
Result<std::shared_ptr<const Component>> FindComponent(const ComponentSource& source, std::string_view name);

/// The default `image` of builtins (TorchX's torchx.IMAGE); $TORCHX_IMAGE overrides it.
std::string DefaultImage();

}  // namespace torchx::components
