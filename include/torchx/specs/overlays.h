// Overlays: fields of a scheduler's request that an AppDef cannot express (a pod's nodeSelector,
// a sidecar), kept in Role/AppDef metadata as `metadata[namespace][kind]` and merged into the
// request the scheduler builds (TorchX HEAD's torchx.specs.overlays).
//
// Merge rules: objects merge key by key, arrays append, anything else is replaced. Keys can carry
// an operator instead: PUT (replace whole), JOIN (merge array items matched on a field, append the
// rest), DEL (remove). While overlays accumulate (`resolve` = false) operator keys are kept as
// they are, the last one for a field replacing earlier ones; applying (`resolve` = true) carries
// them out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "torchx/status.h"

namespace torchx::specs::overlays {

/// The marker set_overlay stamps into `metadata[namespace]`: the nested `{kind: overlay}` form.
inline constexpr std::string_view kFormatKey = "__torchx_overlays__";

std::string Put(std::string_view field);
std::string Join(std::string_view field, std::string_view on);
std::string Del(std::string_view field);
/// The field an (operator) key is about: `__put__:spec` -> `spec`.
std::string FieldOf(std::string_view key);

/// Merges `overlay` into `base` (both JSON objects). kInvalidArgument naming the field for a
/// type clash (an array against a string, ...), a malformed JOIN key, or JOIN on non-objects;
/// `base` may be partly merged then.
Status Apply(nlohmann::ordered_json& base, const nlohmann::ordered_json& overlay, bool resolve = true);

/// Turns every tuple marker left in `v` (a Python tuple or a YAML `!!python/tuple`, kept as
/// `{"__torchx_tuple__": [...]}` so that it can replace a list) into the plain array: for the
/// request after the overlays are applied.
void StripTupleMarkers(nlohmann::ordered_json& v);

/// The overlay of `kind` in a namespace's metadata value (`metadata[namespace]`): `{}` when
/// absent. A nested form (marked) never hands out another kind's overlay; an unmarked object
/// without `kind` is taken whole as a legacy flat overlay when `flat_fallback`, unless it looks
/// nested (several object values).
nlohmann::ordered_json Get(const nlohmann::ordered_json& ns_value, std::string_view kind, bool flat_fallback = true);

/// An overlay kept in a file (`metadata[namespace]` may name one): a path or a file:// URI, JSON
/// or YAML holding an object (`!!python/tuple` sequences kept as tuples). Other URI schemes are refused
/// (kInvalidArgument naming them).
Result<nlohmann::ordered_json> LoadFile(std::string_view uri);

/// kInvalidArgument when the overlay sets a field of `blocklist` (fields set through the Role),
/// naming `overlay_name.field`.
Status Validate(const nlohmann::ordered_json& overlay, const std::vector<std::string>& blocklist,
                std::string_view overlay_name);

}  // namespace torchx::specs::overlays
