// Test-only: a slurm scheduler over a FakeCommandRunner and a FakeClock, and squeue rows in the
// form the queue snapshot's squeue prints them. The queue's answers are kept for the refresh
// interval (queue_reader.h): a test that changes an answer moves the clock past it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "schedulers/slurm/slurm_scheduler.h"
#include "testing/fake_clock.h"
#include "testing/fake_command_runner.h"

namespace torchx::schedulers::slurm {

struct FakeSlurm {
  std::shared_ptr<testing::FakeCommandRunner> tools = std::make_shared<testing::FakeCommandRunner>();
  std::shared_ptr<testing::FakeClock> clock = std::make_shared<testing::FakeClock>();
  std::unique_ptr<Scheduler> sched = MakeSlurmScheduler("test", tools, clock);
  void NextRefresh() { clock->Advance(std::chrono::seconds(3)); }
};

/// Rows of `squeue -O <kSqueueFormat>` with the snapshot's array columns first (a plain job's
/// array job is itself, with no task).
inline std::string QueueRows(std::string_view rows) {
  std::string out;
  size_t start = 0;
  while (start < rows.size()) {
    size_t nl = rows.find('\n', start);
    std::string_view line = rows.substr(start, nl - start);
    out += fmt::format("{}|N/A|{}\n", line.substr(0, line.find('|')), line);
    start = nl == std::string_view::npos ? rows.size() : nl + 1;
  }
  return out;
}

}  // namespace torchx::schedulers::slurm
