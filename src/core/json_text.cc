#include "core/json_text.h"

#include <nlohmann/json.hpp>

namespace torchx::internal {

void AppendJsonString(std::string& out, std::string_view s) {
  bool plain = true;
  for (unsigned char c : s) {
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
      plain = false;
      break;
    }
  }
  if (plain) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace torchx::internal
