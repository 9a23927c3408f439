// Python's spellings of values, where TorchX output depends on them: str(float), repr(str) and
// shlex.quote. Components and runopts print values exactly as TorchX does.
#pragma once

#include <string>
#include <string_view>

namespace torchx::internal {

/// Python str(float): shortest round-trip digits, always with a '.' or exponent ("1.0", "0.1",
/// "1e-05", "inf", "nan").
std::string PyFloatStr(double d);

/// Python repr(str): single quotes unless the text has a single quote and no double quote.
std::string PyRepr(std::string_view s);

/// shlex.quote: '' for empty, the text as is when it has only [A-Za-z0-9@%+=:,./_-], else
/// single-quoted with embedded ' written as '"'"'.
std::string ShlexQuote(std::string_view s);

}  // namespace torchx::internal
