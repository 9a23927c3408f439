// App ids: `<name>-<random suffix>` with TorchX's alphabet (no vowels, so no words; no '8'), and
// name normalization for back-ends with naming rules (Kubernetes DNS-1123 labels).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace torchx::specs {

/// First character alphabet (letters only, so ids are valid DNS labels) and the rest.
inline constexpr std::string_view kIdStartChars = "bcdfghjklmnpqrstvwxz";
inline constexpr std::string_view kIdChars = "bcdfghjklmnpqrstvwxz012345679";

/// TorchX's random_id(): `v` written least-significant digit first, the first digit in base 20
/// over kIdStartChars, the rest in base 29 over kIdChars, until v is 0 (so 0 gives "").
std::string EncodeRandomId(std::uint64_t v);
/// EncodeRandomId of 64 bits from the OS's random source.
std::string RandomId();
/// `n` random characters: first from kIdStartChars, then kIdChars. n == 0 -> RandomId().
std::string RandomIdOfLength(size_t n);
/// `{name}-{RandomIdOfLength(n)}`, TorchX's make_unique.
std::string MakeUnique(std::string_view name, size_t n = 0);

/// Lower-cases and maps every run of characters outside [a-z0-9-] to '-', trims leading
/// non-letters and trailing '-', and truncates to `max_len`: a valid RFC 1123 label, as
/// Kubernetes needs for job and pod names. An input with nothing usable gives "app".
std::string NormalizeName(std::string_view name, size_t max_len = 63);

}  // namespace torchx::specs
