#include "specs/error_file.h"

#include <string>

#include "core/json_view.h"

namespace torchx::specs {

ErrorFile ReadErrorFile(std::string_view text) {
  torchx::internal::JsonView parsed = torchx::internal::JsonView::Parse(text);
  torchx::internal::JsonView m = parsed["message"];
  auto value = [](const torchx::internal::JsonView& v) { return v.get() ? *v.get() : nlohmann::json(); };
  ErrorFile out;
  if (m.IsObject() && m["message"].IsString()) {
    out = {true, value(m["message"]), value(m["errorCode"]), value(m["extraInfo"]["timestamp"])};
  } else if (m.IsString()) {
    out = {true, value(m), value(parsed["errorCode"]), value(parsed["timestamp"])};
  } else {
    out.message = std::string(text);
  }
  return out;
}

}  // namespace torchx::specs
