#include "composite/journal.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace torchx::composite {

std::string ChildEventLine(const std::string& label, const ChildRecord* before, const ChildRecord& now) {
  std::vector<std::string> parts;
  if (!now.handle.empty() && (!before || before->handle != now.handle)) parts.push_back("submitted as " + now.handle);
  bool phase_changed = !before || before->phase != now.phase;
  bool state_changed = !before || before->state != now.state;
  if (phase_changed && (now.phase == ChildPhase::kSkipped || now.phase == ChildPhase::kRefused)) {
    // The phase says what happened; the kind's msg, as it wrote it, says why.
    std::string phase(ChildPhaseName(now.phase));
    parts.push_back(now.msg.empty() ? phase : fmt::format("{} ({})", phase, now.msg));
  } else if (state_changed && now.state != specs::AppState::kUnsubmitted) {
    std::string state(specs::AppStateName(now.state));
    bool says_why = specs::IsTerminal(now.state) && now.state != specs::AppState::kSucceeded && !now.msg.empty();
    parts.push_back(says_why ? fmt::format("{} ({})", state, now.msg) : state);
  }
  if (parts.empty()) return "";
  return fmt::format("{}: {}", label, fmt::join(parts, "; "));
}

std::string DriverStartedLine(long pid, const std::vector<const ChildRecord*>& children) {
  std::map<std::string, int> counts;  // by what a reader calls it, in name order
  for (const ChildRecord* c : children) {
    std::string what = c->phase == ChildPhase::kWaiting      ? "waiting"
                       : c->phase == ChildPhase::kSubmitting ? "submitting"
                       : c->phase == ChildPhase::kSkipped    ? "not run"
                       : c->phase == ChildPhase::kRefused    ? "refused"
                                                             : std::string(specs::AppStateName(c->state));
    ++counts[what];
  }
  std::vector<std::string> parts;
  for (const auto& [what, n] : counts) parts.push_back(fmt::format("{} {}", n, what));
  return fmt::format("driver started (pid {}): {} {}{}{}", pid, children.size(),
                     children.size() == 1 ? "child" : "children", parts.empty() ? "" : ": ", fmt::join(parts, ", "));
}

std::string JournalLine(double epoch_seconds, const std::string& line) {
  auto whole = static_cast<std::time_t>(epoch_seconds);
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  int millis = static_cast<int>((epoch_seconds - static_cast<double>(whole)) * 1000);
  return fmt::format("{}.{:03d}Z {}", stamp, std::clamp(millis, 0, 999), line);
}

void WriteJournalLine(std::FILE* out, const std::string& line) {
  double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string text = JournalLine(now, line) + "\n";
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
}

}  // namespace torchx::composite
