#include "torchx/specs/app_state.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "specs/error_file.h"
#include "specs/error_message.h"

namespace torchx::specs {
namespace {

constexpr AppState kAllStates[] = {
    AppState::kUnsubmitted, AppState::kSubmitted, AppState::kPending,   AppState::kRunning,
    AppState::kSucceeded,   AppState::kFailed,    AppState::kCancelled, AppState::kUnknown,
};

bool RoleSelected(const std::string& role, const std::vector<std::string>& filter) {
  return filter.empty() || std::find(filter.begin(), filter.end(), role) != filter.end();
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// An RPC worker failure embeds the useful part as `Type('On WorkerInfo(...):\n...\n')`: keep
// just that span, as TorchX does.
std::string ExtractRpcError(const std::string& msg) {
  const std::string marker = "('On WorkerInfo(";
  size_t at = msg.find(marker);
  if (at == std::string::npos) return msg;
  size_t eol = msg.find('\n', at);
  if (eol == std::string::npos || eol < at + marker.size() + 3) return msg;
  if (msg.compare(eol - 2, 2, "):") != 0) return msg;
  size_t close = msg.rfind("\n')");
  if (close == std::string::npos || close < eol) return msg;
  size_t start = at;
  while (start > 0 && IsWordChar(msg[start - 1])) --start;
  return msg.substr(start, close + 3 - start);
}

// A C++ error nested as text ("<msg>\nException raised from ...") is reduced to the line before.
std::string ExtractEmbeddedError(const std::string& msg) {
  size_t pos = 0;
  while ((pos = msg.find("\nException", pos)) != std::string::npos) {
    size_t line_start = msg.rfind('\n', pos == 0 ? 0 : pos - 1);
    line_start = (line_start == std::string::npos || line_start >= pos) ? 0 : line_start + 1;
    if (pos > line_start) return msg.substr(line_start, pos - line_start);
    ++pos;
  }
  return msg;
}

}  // namespace

// TorchX's word wrap: break at the first space once a line has `width` characters; continuation
// lines are indented to the header's width.
std::string internal::FormatErrorMessage(std::string msg, std::string header, size_t width) {
  msg = ExtractEmbeddedError(ExtractRpcError(msg));
  std::vector<std::string> lines;
  size_t length = 0;
  for (size_t i = 0; i <= msg.size(); ++i) {
    if (i == msg.size() || (msg[i] == ' ' && length >= width)) {
      lines.push_back(header + msg.substr(i - length, length));
      header.assign(header.size(), ' ');
      length = 0;
    }
    ++length;
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += lines[i];
  }
  return out;
}

namespace {

// "<N/A>" where the error file has no usable timestamp (missing, not a number, out of range).
std::string LocalTime(const nlohmann::json& v) {
  long long seconds = 0;
  if (v.is_number()) {
    double d = v.get<double>();
    if (!(d > -1e15 && d < 1e15)) return "<N/A>";
    seconds = static_cast<long long>(d);
  } else if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    char* end = nullptr;
    errno = 0;
    seconds = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE) return "<N/A>";
  } else {
    return "<N/A>";
  }
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (!localtime_r(&t, &tm)) return "<N/A>";
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// TorchX prints "<N/A>" for any falsy error code (missing, null, 0, "").
std::string ExitCode(const nlohmann::json& v) {
  if (v.is_null() || v == 0 || v == "" || v == false) return "<N/A>";
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string FormatReplica(const ReplicaStatus& r) {
  std::string data;
  if (r.structured_error_msg != "<NONE>") {
    // The job wrote it (specs/error_file.h): anything but its two schemas is shown as it is.
    ErrorFile err = ReadErrorFile(r.structured_error_msg);
    if (err.structured) {
      data = fmt::format("{} (exitcode: {})\n        timestamp: {}\n        hostname: {}\n    {}",
                         AppStateName(r.state), ExitCode(err.error_code), LocalTime(err.timestamp), r.hostname,
                         internal::FormatErrorMessage(err.message.get<std::string>(), "    error_msg: "));
    } else {
      // Deliberate difference: TorchX returns the raw text alone here, without the
      // "<mark><role>[<id>]:" header or a newline, so it runs into the previous replica's line.
      data = fmt::format("{}\n{}", AppStateName(r.state),
                         internal::FormatErrorMessage(r.structured_error_msg, "    error_msg: "));
    }
  } else {
    data = std::string(AppStateName(r.state));
    if (r.state == AppState::kFailed || r.state == AppState::kCancelled) data += " (no reply file)";
  }
  return fmt::format("\n {}{}[{}]:{}", r.id == 0 ? '*' : ' ', r.role, r.id, data);
}

}  // namespace

std::string_view AppStateName(AppState s) {
  switch (s) {
    case AppState::kUnsubmitted:
      return "UNSUBMITTED";
    case AppState::kSubmitted:
      return "SUBMITTED";
    case AppState::kPending:
      return "PENDING";
    case AppState::kRunning:
      return "RUNNING";
    case AppState::kSucceeded:
      return "SUCCEEDED";
    case AppState::kFailed:
      return "FAILED";
    case AppState::kCancelled:
      return "CANCELLED";
    case AppState::kUnknown:
      return "UNKNOWN";
  }
  return "UNKNOWN";
}

Result<AppState> ParseAppState(std::string_view name) {
  for (AppState s : kAllStates) {
    if (AppStateName(s) == name) return s;
  }
  return InvalidArgumentError(
      fmt::format("state: invalid value '{}', must be one of [UNSUBMITTED, SUBMITTED, PENDING, RUNNING, "
                  "SUCCEEDED, FAILED, CANCELLED, UNKNOWN]",
                  name));
}

bool IsTerminal(AppState s) { return s == AppState::kSucceeded || s == AppState::kFailed || s == AppState::kCancelled; }

std::string FormatAppStatus(const AppStatus& status, const std::vector<std::string>& filter_roles) {
  std::string roles;
  for (const RoleStatus& role : status.roles) {
    if (!RoleSelected(role.role, filter_roles)) continue;
    std::vector<ReplicaStatus> replicas = role.replicas;
    std::stable_sort(replicas.begin(), replicas.end(),
                     [](const ReplicaStatus& a, const ReplicaStatus& b) { return a.id < b.id; });
    for (const ReplicaStatus& r : replicas) roles += FormatReplica(r);
  }
  return fmt::format(
      "AppStatus:\n    State: {}\n    Num Restarts: {}\n    Roles: {}\n    Msg: {}\n"
      "    Structured Error Msg: {}\n    UI URL: {}\n    ",
      AppStateName(status.state), status.num_restarts, roles, status.msg, status.structured_error_msg,
      status.ui_url.value_or("None"));
}

std::string AppStatusToJson(const AppStatus& status, const std::vector<std::string>& filter_roles, int indent) {
  nlohmann::ordered_json roles = nlohmann::ordered_json::array();
  for (const RoleStatus& role : status.roles) {
    if (!RoleSelected(role.role, filter_roles)) continue;
    nlohmann::ordered_json replicas = nlohmann::ordered_json::array();
    for (const ReplicaStatus& r : role.replicas) {
      replicas.push_back({{"id", r.id},
                          {"state", static_cast<int>(r.state)},
                          {"role", r.role},
                          {"hostname", r.hostname},
                          {"structured_error_msg", r.structured_error_msg},
                          {"hostaddr", r.hostaddr.empty() ? r.hostname : r.hostaddr}});
    }
    roles.push_back({{"role", role.role}, {"replicas", std::move(replicas)}});
  }
  nlohmann::ordered_json j = {
      {"state", AppStateName(status.state)},
      {"num_restarts", status.num_restarts},
      {"roles", std::move(roles)},
      {"msg", status.msg},
      {"structured_error_msg", status.structured_error_msg},
      {"url", status.ui_url ? nlohmann::ordered_json(*status.ui_url) : nlohmann::ordered_json()},
  };
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<AppStatus> AppStatusFromJson(std::string_view json) {
  auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("app status: not a JSON object");
  }
  auto state_of = [](const nlohmann::json& v, std::string_view field) -> Result<AppState> {
    if (v.is_number_integer()) {
      int n = v.get<int>();
      if (n < 0 || n > 7) {
        return InvalidArgumentError(fmt::format("{}: state {} out of range 0..7", field, n));
      }
      return static_cast<AppState>(n);
    }
    if (v.is_string()) return ParseAppState(v.get<std::string>());
    return InvalidArgumentError(fmt::format("{}: state must be a name or an int", field));
  };
  try {
    AppStatus s;
    TORCHX_ASSIGN_OR_RETURN(s.state, state_of(j.at("state"), "app status.state"));
    s.num_restarts = j.value("num_restarts", 0);
    s.msg = j.value("msg", std::string());
    s.structured_error_msg = j.value("structured_error_msg", std::string("<NONE>"));
    if (j.contains("url") && j["url"].is_string()) s.ui_url = j["url"].get<std::string>();
    for (const auto& rj : j.value("roles", nlohmann::json::array())) {
      RoleStatus role{rj.at("role").get<std::string>(), {}};
      for (const auto& pj : rj.value("replicas", nlohmann::json::array())) {
        ReplicaStatus r;
        r.id = pj.at("id").get<int>();
        TORCHX_ASSIGN_OR_RETURN(r.state, state_of(pj.at("state"), "replica.state"));
        r.role = pj.value("role", role.role);
        r.hostname = pj.value("hostname", std::string());
        r.structured_error_msg = pj.value("structured_error_msg", std::string("<NONE>"));
        if (pj.contains("hostaddr") && pj["hostaddr"].is_string() && pj["hostaddr"] != r.hostname) {
          r.hostaddr = pj["hostaddr"].get<std::string>();
        }
        role.replicas.push_back(std::move(r));
      }
      s.roles.push_back(std::move(role));
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(fmt::format("app status: {}", e.what()));
  }
}

}  // namespace torchx::specs
