#include "schedulers/slurm/queue_snapshot.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace torchx::schedulers::slurm {
namespace {

constexpr std::string_view kMagic = "torchx-squeue-snapshot 1";

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

// Line 1: "<magic> <taken_at> <answered_at> ok" or "... error <message>"; then the rows.
std::string SnapshotToText(const QueueSnapshot& snapshot) {
  std::string head = fmt::format("{} {:.6f} {:.6f} ", kMagic, snapshot.taken_at, snapshot.answered_at);
  head += snapshot.error ? "error " + OneLine(*snapshot.error) : std::string("ok");
  return head + "\n" + snapshot.rows;
}

std::optional<QueueSnapshot> SnapshotFromText(std::string_view text) {
  size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  std::string_view head = text.substr(0, nl);
  if (!head.starts_with(kMagic) || head.size() <= kMagic.size() || head[kMagic.size()] != ' ') return std::nullopt;
  head.remove_prefix(kMagic.size() + 1);
  QueueSnapshot s;
  for (double* time : {&s.taken_at, &s.answered_at}) {
    size_t space = head.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    std::string field(head.substr(0, space));
    char* end = nullptr;
    *time = std::strtod(field.c_str(), &end);
    if (field.empty() || end != field.c_str() + field.size()) return std::nullopt;
    head.remove_prefix(space + 1);
  }
  std::string_view outcome = head;
  if (outcome.starts_with("error ")) {
    s.error = std::string(outcome.substr(6));
  } else if (outcome != "ok") {
    return std::nullopt;
  }
  s.rows = std::string(text.substr(nl + 1));
  return s;
}

std::vector<SlurmJob> ParseSnapshotRows(std::string_view text) {
  std::vector<SlurmJob> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() : nl + 1;
    size_t first = line.find('|');
    size_t second = first == std::string_view::npos ? first : line.find('|', first + 1);
    if (second == std::string_view::npos) continue;
    auto rows = ParseSqueueRows(line.substr(second + 1));
    if (!rows) continue;
    std::string_view array_job = line.substr(0, first);
    std::string_view task = line.substr(first + 1, second - first - 1);
    // An array task: "N/A" for a plain job; one index with -r (a range only without it).
    int index = 0;
    auto [p, ec] = std::from_chars(task.data(), task.data() + task.size(), index);
    bool is_task = ec == std::errc() && p == task.data() + task.size();
    for (SlurmJob& job : *rows) {
      if (is_task) job.job_id = fmt::format("{}_{}", array_job, index);
      out.push_back(std::move(job));
    }
  }
  return out;
}

bool SnapshotServes(const SnapshotAsk& ask) {
  if (!ask.taken_at) return false;
  double taken = *ask.taken_at;
  double answered = std::max(ask.answered_at, taken);
  // A snapshot from the future: this host's clock went back since; it cannot be aged.
  if (answered > ask.now + 1) return false;
  if (ask.touched_at && *ask.touched_at >= taken) return false;
  bool settling = ask.touched_at && taken - *ask.touched_at < kSettleSeconds;
  if (ask.now - answered >= (settling ? std::min(ask.interval, kSettlingInterval) : ask.interval)) return false;
  if (ask.answered_from && taken < *ask.answered_from) return false;
  return true;
}

std::string SubmittedId(std::string_view app_id) {
  size_t cut = app_id.find_first_of("_+");
  return std::string(app_id.substr(0, cut));
}

}  // namespace torchx::schedulers::slurm
