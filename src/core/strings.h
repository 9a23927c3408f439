// Small string helpers shared by the parsers (cfg strings, component arguments, config files).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torchx::internal {

/// Without leading and trailing whitespace (space, tab, CR, LF, FF, VT), as Python's str.strip().
std::string_view Strip(std::string_view s);

/// Splits on any of `delims`, keeping empty pieces ("a,,b" -> "a", "", "b"; "" -> one "").
std::vector<std::string> SplitAny(std::string_view s, std::string_view delims);

/// Splits on runs of whitespace, dropping empty pieces, as Python's str.split().
std::vector<std::string> SplitWhitespace(std::string_view s);

/// Standard base64 (RFC 4648, padding optional, whitespace ignored); nullopt on any other byte.
std::optional<std::string> Base64Decode(std::string_view s);

/// Base64 of `s` with the URL-safe alphabet (RFC 4648 section 5, `-` and `_`), padded.
std::string Base64UrlEncode(std::string_view s);

}  // namespace torchx::internal
