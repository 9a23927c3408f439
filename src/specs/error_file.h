// A replica's error file (TORCHELASTIC_ERROR_FILE), read once for every reader (the status text,
// the dashboard's JSON). It is written by the job, not by us, in either of two schemas:
// torchelastic's, nested under "message" ({"message": {"message", "errorCode", "extraInfo":
// {"timestamp"}}}), and the flat one schedulers write ({"message": "...", "errorCode",
// "timestamp"}). Anything else is not structured: its text is the message. Internal: include it
// only in .cc files (it brings nlohmann/json.hpp).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace torchx::specs {

struct ErrorFile {
  bool structured = false;    ///< one of the two schemas; else `message` is the file's text
  nlohmann::json message;     ///< a string
  nlohmann::json error_code;  ///< as written (a number, a string) or null
  nlohmann::json timestamp;   ///< as written (epoch seconds) or null
};

ErrorFile ReadErrorFile(std::string_view text);

}  // namespace torchx::specs
