#include "schedulers/ray/ray_frames.h"

#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers::ray {
namespace {

using Json = nlohmann::json;

std::optional<int> FrameInt(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  long long v = it->get<long long>();
  if (v < -100000 || v > 100000) return std::nullopt;
  return static_cast<int>(v);
}

std::string FrameStr(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void Apply(const Json& s, GangStatus& g) {
  std::string phase = FrameStr(s, "phase");
  if (auto r = FrameInt(s, "restarts")) g.restarts = *r;
  auto failure = [&] {
    g.failed_role = FrameStr(s, "role");
    g.failed_replica = FrameInt(s, "replica");
    g.failed_exit_code = FrameInt(s, "exit_code");
    g.failure_cause = FrameStr(s, "cause");
    g.stderr_tail.clear();
    if (auto it = s.find("stderr_tail"); it != s.end() && it->is_array()) {
      for (const Json& l : *it) {
        if (l.is_string()) g.stderr_tail.push_back(l.get<std::string>());
      }
    }
  };
  if (phase == "pending") {
    g.phase = GangPhase::kPending;
  } else if (phase == "running") {
    g.phase = GangPhase::kRunning;
    g.replicas.clear();
    if (auto it = s.find("replicas"); it != s.end() && it->is_array()) {
      for (const Json& r : *it) {
        if (!r.is_object()) continue;
        g.replicas.push_back({FrameStr(r, "role"), FrameInt(r, "replica").value_or(0), FrameStr(r, "node_id"),
                              FrameStr(r, "host"), FrameStr(r, "hostname"), std::nullopt, FrameInt(r, "pid")});
      }
    }
  } else if (phase == "exited") {
    std::string role = FrameStr(s, "role");
    int replica = FrameInt(s, "replica").value_or(-1);
    for (ReplicaPlace& r : g.replicas) {
      if (r.role == role && r.replica == replica) r.exit_code = FrameInt(s, "exit_code");
    }
  } else if (phase == "restarting") {
    g.phase = GangPhase::kRestarting;
    failure();
  } else if (phase == "succeeded") {
    g.phase = GangPhase::kSucceeded;
  } else if (phase == "failed") {
    g.phase = GangPhase::kFailed;
    failure();
  } else if (phase == "cancelled") {
    g.phase = GangPhase::kCancelled;
  }
}

class ReplicaLineDecoder : public LineDecoder {
 public:
  ReplicaLineDecoder(std::string role, int replica, LogStream stream)
      : role_(std::move(role)), replica_(replica), stream_(stream) {}
  void Feed(std::string_view d, std::vector<std::string>& lines) override {
    buf_.append(d);
    size_t pos = 0;
    for (size_t nl; (nl = buf_.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      Keep(std::string_view(buf_).substr(pos, nl + 1 - pos), lines);
    }
    buf_.erase(0, pos);
  }
  void Flush(std::vector<std::string>& lines) override {
    if (!buf_.empty()) Keep(buf_, lines);
    buf_.clear();
  }

 private:
  void Keep(std::string_view line, std::vector<std::string>& lines) const {
    auto r = ParseReplicaLine(line);
    if (!r || r->role != role_ || r->replica != replica_) return;
    if ((stream_ == LogStream::kStdout && r->is_stderr) || (stream_ == LogStream::kStderr && !r->is_stderr)) return;
    lines.emplace_back(r->text);
  }
  std::string role_;
  int replica_;
  LogStream stream_;
  std::string buf_;
};

}  // namespace

std::optional<ReplicaLine> ParseReplicaLine(std::string_view line) {
  constexpr std::string_view kTag = "\x1eL ";
  if (!line.starts_with(kTag)) return std::nullopt;
  size_t sep = line.find('\x1f');
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view head = line.substr(kTag.size(), sep - kTag.size());  // "<role> <replica> <s>"
  size_t a = head.find(' ');
  size_t b = a == std::string_view::npos ? a : head.find(' ', a + 1);
  if (a == 0 || b == std::string_view::npos || b + 2 != head.size()) return std::nullopt;
  ReplicaLine out;
  out.role = head.substr(0, a);
  std::string_view num = head.substr(a + 1, b - a - 1);
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), out.replica);
  if (ec != std::errc() || p != num.data() + num.size() || out.replica < 0) return std::nullopt;
  char s = head[b + 1];
  if (s != 'o' && s != 'e' && s != 'O' && s != 'E') return std::nullopt;
  out.is_stderr = s == 'e' || s == 'E';
  out.text = line.substr(sep + 1);
  if ((s == 'O' || s == 'E') && out.text.ends_with('\n')) out.text.remove_suffix(1);
  return out;
}

GangStatus ReadGangStatus(std::string_view log) {
  constexpr std::string_view kTag = "\x1eS ";
  GangStatus g;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    std::string_view line = log.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? log.size() : nl + 1;
    if (!line.starts_with(kTag)) continue;
    Json s = Json::parse(line.substr(kTag.size()), nullptr, /*allow_exceptions=*/false);
    if (s.is_object()) Apply(s, g);
  }
  return g;
}

FailureReport ClassifyRayFailure(std::string_view status, std::string_view error_type, std::string_view message,
                                 const GangStatus& gang) {
  if (status == "STOPPED" || gang.phase == GangPhase::kCancelled) {
    return {FailureCause::kCancelled, "the job was stopped (torchx cancel or ray job stop)"};
  }
  if (gang.phase == GangPhase::kFailed && gang.failed_replica) {
    std::string who = fmt::format("{}/{}", gang.failed_role, *gang.failed_replica);
    if (gang.failure_cause == "node_failure") {
      return {FailureCause::kNodeFailure, fmt::format("replica {} lost its Ray node", who)};
    }
    return {FailureCause::kUserError, gang.failed_exit_code
                                          ? fmt::format("replica {} exited with code {}", who, *gang.failed_exit_code)
                                          : fmt::format("replica {} could not start", who)};
  }
  if (gang.phase == GangPhase::kFailed && gang.failure_cause == "node_failure") {
    return {FailureCause::kNodeFailure, "the gang's lost replicas found no node within the reschedule timeout"};
  }
  std::string words =
      fmt::format("{}{}{}", error_type, error_type.empty() ? "" : ": ", ReadableLog(message.substr(0, 300)));
  if (error_type == "JOB_SUPERVISOR_ACTOR_DIED" || error_type == "JOB_SUPERVISOR_ACTOR_START_FAILURE" ||
      error_type == "JOB_SUPERVISOR_ACTOR_START_TIMEOUT" || error_type == "JOB_SUPERVISOR_ACTOR_UNSCHEDULABLE" ||
      error_type == kJobLost) {
    return {FailureCause::kEngineLost, words};
  }
  if (error_type == "RUNTIME_ENV_SETUP_FAILURE") return {FailureCause::kUserError, words};
  return {FailureCause::kUnknown, words};
}

std::string ReadableLog(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view line = text.substr(pos, end - pos);
    pos = end;
    if (line.starts_with("\x1eS ")) continue;
    if (auto r = ParseReplicaLine(line)) {
      out += fmt::format("{}/{} {}", r->role, r->replica, r->text);
      if (!r->text.ends_with('\n') && nl != std::string_view::npos) out += '\n';
      continue;
    }
    out.append(line);
  }
  return out;
}

std::unique_ptr<LineDecoder> MakeReplicaLineDecoder(std::string role, int replica, LogStream stream) {
  return std::make_unique<ReplicaLineDecoder>(std::move(role), replica, stream);
}

}  // namespace torchx::schedulers::ray
