// The one decoder from text to a typed option value, for every place options are written as
// text: component arguments on the command line, `-cfg` strings, and `.torchxconfig` values.
// TorchX spells each a little differently (OptionSyntax says which rules apply: how lists and
// dicts split, what a bool accepts); the rules live here once. The value type is CfgVal and the
// type is CfgType for runopts and component parameters alike.
#pragma once

#include <string_view>

#include "torchx/specs/runopts.h"
#include "torchx/status.h"

namespace torchx::specs {

enum class OptionSyntax {
  /// `torchx run <component> --name VALUE`: bool is "true" (any case) or false; lists split on
  /// ',' with items stripped; dicts are `k=v,k2=v2` (CfgStringToPairs); ints fit in 32 bits.
  kComponentArg,
  /// `-cfg k=v,...`: bool as above; lists split on ',' or ';' dropping empty items; dicts are
  /// `k:v` items split on ',' or ';'; ints are 64-bit.
  kCfgString,
  /// `.torchxconfig` values: as kCfgString, except that "None" is None, bools follow Python's
  /// configparser (true/false, yes/no, on/off, 1/0, any case; anything else is an error) and
  /// lists split on ';' only, keeping items as written.
  kConfigFile,
};

/// "str", "int", "float", "bool", "list", "dict": the short names component declarations use.
std::string_view CfgTypeShortName(CfgType t);

/// Decodes `text` as `type`. kInvalidArgument naming the option: "`name`: invalid <type> value
/// 'text', expected ..." (`name` as the caller's user wrote it: "--cpu", "cfg: option queue").
Result<CfgVal> DecodeOptionValue(CfgType type, std::string_view text, OptionSyntax syntax, std::string_view name);

}  // namespace torchx::specs
