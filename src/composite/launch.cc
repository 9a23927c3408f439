// The one part of a composite's launch that is the same for every kind: the edge's overrides
// applied to the kind's document.
#include "torchx/composite/launch.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "specs/yaml_reader.h"

namespace torchx::composite {

Result<std::string> DocumentOf(const LaunchRequest& request) {
  using Json = nlohmann::ordered_json;
  Json overrides = Json::parse(request.overrides_json.empty() ? "{}" : request.overrides_json, nullptr, false);
  if (!overrides.is_object()) {
    return InvalidArgumentError(
        fmt::format("{}: the overrides must be a JSON object of the document's keys", request.origin));
  }
  if (overrides.empty()) return request.document;
  TORCHX_ASSIGN_OR_RETURN(Json doc,
                          specs::internal::YamlMappingFromText(request.document, request.origin,
                                                               fmt::format("(what a {} file holds)", request.kind)));
  for (auto& [key, value] : overrides.items()) {
    if (key == "cfg" && value.is_object() && doc.contains("cfg") && doc["cfg"].is_object()) {
      for (auto& [k, v] : value.items()) doc["cfg"][k] = v;  // merged: the edge's options win
    } else {
      doc[key] = value;
    }
  }
  return doc.dump();
}

}  // namespace torchx::composite
