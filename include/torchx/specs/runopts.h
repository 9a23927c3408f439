// runopts: the typed options a scheduler accepts (`-cfg k=v,...`, `.torchxconfig [<scheduler>]`),
// their values (CfgVal), the cfg string grammar, and TorchX's resolution rules and messages.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "torchx/status.h"

namespace torchx::specs {

using CfgList = std::vector<std::string>;
using CfgDict = std::map<std::string, std::string>;
/// TorchX's CfgVal: None | str | int | float | bool | list[str] | dict[str, str].
using CfgVal = std::variant<std::monostate, std::string, std::int64_t, double, bool, CfgList, CfgDict>;
/// A scheduler config: option name -> value.
using Cfg = std::map<std::string, CfgVal>;

enum class CfgType { kStr, kInt, kFloat, kBool, kListStr, kDictStr };

/// Python's name for the type as TorchX prints it: str, int, float, bool, typing.List[str],
/// typing.Dict[str, str].
std::string_view CfgTypeName(CfgType t);
/// Whether `v` holds type `t` (None matches every type, as in TorchX).
bool CfgValIs(const CfgVal& v, CfgType t);
bool CfgValIsNone(const CfgVal& v);
/// Python str() of the value: None, True, 3, 0.5, abc, ['a', 'b'], {'k': 'v'}.
std::string CfgValToString(const CfgVal& v);
/// Python repr(): like str() but strings quoted ('abc').
std::string CfgValRepr(const CfgVal& v);
/// Python repr of a whole cfg dict, `{'k': v, ...}`, or "<EMPTY>" when empty (for messages).
std::string CfgRepr(const Cfg& cfg);

struct RunOpt {
  CfgType type = CfgType::kStr;
  CfgVal default_value;  ///< monostate = None
  bool is_required = false;
  std::string help;
};

/// TorchX's to_dict(): `k=v` pairs separated by ',' or ';'; a value may itself be a ','/';'
/// list (the LAST delimiter before the next '=' separates pairs); '...' or "..." quoted values
/// may hold '=', ',' and ';'; keys and values are stripped. "" -> empty. Errors name the piece
/// that cannot be split. Order of first appearance is kept; a repeated key keeps its last value.
Result<std::vector<std::pair<std::string, std::string>>> CfgStringToPairs(std::string_view s);

/// TorchX's `cases`: "hpc_cluster_uuid" <-> "hpcClusterUuid" (run option names in either spelling).
std::string SnakeToCamel(std::string_view name);
std::string CamelToSnake(std::string_view name);

class RunOpts;

/// A cfg resolved against a scheduler's RunOpts: required options present, every declared option
/// of its declared type, defaults filled (so a declared option reads as None only when it has no
/// default). Only RunOpts::Resolve makes one, so a back-end reading it can trust the types, and a
/// run resolves its options once (the Runner does) however many steps read them.
///
/// The getters are for declared options: reading an undeclared key, or reading a declared one as
/// another type, is a bug in the back-end (not in the user's input) and aborts with both names;
/// each back-end's dry-run tests read every option it declares. Keys the user gave that are not
/// declared pass through in values() (TorchX keeps them), untyped.
class ResolvedCfg {
 public:
  std::optional<std::string> Str(std::string_view key) const;
  std::optional<bool> Bool(std::string_view key) const;
  std::optional<std::int64_t> Int(std::string_view key) const;
  std::optional<double> Float(std::string_view key) const;
  std::optional<CfgList> List(std::string_view key) const;
  std::optional<CfgDict> Dict(std::string_view key) const;

  /// Every value, declared or passed through (what a dry run records and prints).
  const Cfg& values() const { return values_; }

  /// OK when this was resolved against options declaring what `opts` declares (same names and
  /// types); else kInvalidArgument naming `owner` (a scheduler): a caller handed a back-end the
  /// options of another, which its getters would otherwise abort on.
  Status CheckResolvedBy(const RunOpts& opts, std::string_view owner) const;

 private:
  friend class RunOpts;
  ResolvedCfg(Cfg values, std::map<std::string, CfgType, std::less<>> types)
      : values_(std::move(values)), types_(std::move(types)) {}
  /// The value of a declared option read as `type`; nullptr when None.
  const CfgVal* Declared(std::string_view key, CfgType type) const;

  Cfg values_;
  std::map<std::string, CfgType, std::less<>> types_;
};

/// What Resolve does with a key no option declares.
enum class UnknownKeys { kRefuse, kPassThrough };

class RunOpts {
 public:
  /// Adds an option. kInvalidArgument for a required option with a default, or a default of the
  /// wrong type (TorchX raises ValueError / TypeError).
  Status Add(std::string key, CfgType type, std::string help, CfgVal default_value = {}, bool required = false);

  /// nullptr when unknown; a camelCase key finds its snake_case option (`clusterName`).
  const RunOpt* Get(std::string_view key) const;
  /// Options in the order they were added.
  const std::vector<std::pair<std::string, RunOpt>>& options() const { return opts_; }
  size_t size() const { return opts_.size(); }
  bool empty() const { return opts_.empty(); }
  /// Adds (or replaces) every option of `other`.
  void Update(const RunOpts& other);

  /// Fills defaults and checks required options and types. A camelCase key stands for its
  /// snake_case option (two spellings with different values are refused). An unknown key is
  /// refused (UnknownOptionError), as torchx-nightly's runopts.resolve; `unknown` = kPassThrough
  /// keeps it unchecked (its ignore_unknown=True). kInvalidArgument with TorchX's
  /// InvalidRunConfigException text ("Required run option: k, must be provided and not `None`.
  /// Given: {...}" / "Run option: k, must be of type: T, but was: v (t). Given: {...}").
  Result<ResolvedCfg> Resolve(const Cfg& cfg, UnknownKeys unknown = UnknownKeys::kRefuse) const;
  /// The declared option a key names: itself, or the snake_case option of a camelCase key
  /// (TorchX HEAD's aliases); nullptr for an unknown key.
  const std::string* CanonicalKey(std::string_view given) const;
  /// kInvalidArgument "Unknown run option `k`. Valid options are: a, b. Given: {...}. Did you mean
  /// `c`?" (torchx-nightly's text, the options sorted, then the suggestion).
  Status UnknownOptionError(std::string_view key, const Cfg& given) const;

  /// Casts one string to the option's type: bool = "true" (any case) else false; list = split on
  /// ',' or ';' dropping empty items; dict = items split on ','/';', each `k:v` at the first ':';
  /// int / float must parse completely. Errors name the option and the expected form.
  Result<CfgVal> Cast(std::string_view key, const RunOpt& opt, std::string_view value) const;

  /// Parses a `-cfg` string and casts known keys. Unknown keys are dropped; their `k=v` go to
  /// `unknown` (TorchX logs a warning for each) when given.
  Result<Cfg> CfgFromString(std::string_view s, std::vector<std::string>* unknown = nullptr) const;

  /// Parses a JSON object of option values (known keys only; list and dict items coerced to
  /// strings; null kept as None).
  Result<Cfg> CfgFromJson(std::string_view json) const;

  /// TorchX's repr(runopts), as `torchx runopts` prints it.
  std::string Render() const;

 private:
  const RunOpt* Find(std::string_view key) const;
  std::vector<std::pair<std::string, RunOpt>> opts_;
};

/// A runopts table as JSON: [{"name", "type" (CfgTypeName), "help", "default", "required"}], in
/// order. How plugins and the Python package describe their options.
std::string RunOptsToJson(const RunOpts& opts);
/// The inverse; errors name the entry and field (and the valid types).
Result<RunOpts> RunOptsFromJson(std::string_view json);
/// Cfg values as a JSON object (None as null).
std::string CfgToJson(const Cfg& cfg);

}  // namespace torchx::specs
