#include "ui/api_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace torchx::ui {
namespace {

TEST(ApiWorkers, AnswersOnItsOwnThreadsAndHandsBackTheResult) {
  ApiWorkers workers(2);
  std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran = workers.Run([] { return std::this_thread::get_id(); });
  EXPECT_NE(ran, caller);
  EXPECT_EQ(workers.Run([] { return std::string("answer"); }), "answer");
  EXPECT_THROW(workers.Run([]() -> int { throw std::runtime_error("boom"); }), std::runtime_error);
  EXPECT_EQ(workers.Run([] { return 7; }), 7);  // a throw does not take a worker down
}

// Many callers (connections) share a few workers: every call is answered, on at most that many
// threads, which is what bounds the shared Runner's per-thread back-end instances.
TEST(ApiWorkers, ManyCallersShareAFewThreads) {
  ApiWorkers workers(3);
  std::mutex mu;
  std::set<std::thread::id> used;
  std::atomic<int> answered{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 40; ++c) {
    callers.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        answered += workers.Run([&] {
          std::lock_guard lock(mu);
          used.insert(std::this_thread::get_id());
          return 1;
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(answered.load(), 1000);
  EXPECT_LE(used.size(), 3u);
}

}  // namespace
}  // namespace torchx::ui
