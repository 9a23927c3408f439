// Several replicas' logs read as one: prefixes, each replica's order, fairness, the end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>

#include "schedulers/merged_lines.h"
#include "testing/status_matchers.h"

namespace torchx::schedulers {
namespace {

using ::testing::ElementsAre;

// A followed log: lines become readable when released; Ready() says whether one is.
class FakeLog : public LogIterator {
 public:
  FakeLog(std::deque<std::string>* lines, bool* ended) : lines_(lines), ended_(ended) {}
  Result<std::optional<std::string>> Next() override {
    if (lines_->empty()) return std::optional<std::string>();  // a real one would block until `ended`
    std::string l = lines_->front();
    lines_->pop_front();
    return std::optional(l);
  }
  bool Ready() override { return !lines_->empty() || *ended_; }

 private:
  std::deque<std::string>* lines_;
  bool* ended_;
};

std::vector<std::string> Drain(LogIterator& it) {
  std::vector<std::string> out;
  while (it.Ready()) {
    auto more = it.NextBatch([&](std::string_view l) { out.emplace_back(l); });
    if (!more.ok() || !*more) break;
  }
  return out;
}

TEST(MergedLines, EachLineGetsItsReplicasPrefixAndEachReplicaKeepsItsOrder) {
  std::vector<PrefixedLog> logs;
  logs.push_back({"a/0 ", MakeLinesIterator({"one\n", "two\n"})});
  logs.push_back({"a/1 ", MakeLinesIterator({"three\n"})});
  auto merged = MakeMergedLogIterator(std::move(logs));
  std::vector<std::string> out;
  while (true) {
    auto line = merged->Next();
    ASSERT_THAT(line, IsOk());
    if (!*line) break;
    out.push_back(**line);
  }
  EXPECT_THAT(out, ElementsAre("a/0 one\n", "a/1 three\n", "a/0 two\n"));  // in turn
}

TEST(MergedLines, AQuietReplicaHoldsNoneOfTheOthersBackAndTheEndIsEveryonesEnd) {
  std::deque<std::string> quiet, busy = {"x\n", "y\n"};
  bool quiet_ended = false, busy_ended = false;
  std::vector<PrefixedLog> logs;
  logs.push_back({"q/0 ", std::make_unique<FakeLog>(&quiet, &quiet_ended)});
  logs.push_back({"b/0 ", std::make_unique<FakeLog>(&busy, &busy_ended)});
  auto merged = MakeMergedLogIterator(std::move(logs));
  EXPECT_TRUE(merged->Ready());
  EXPECT_THAT(Drain(*merged), ElementsAre("b/0 x\n", "b/0 y\n"));
  EXPECT_FALSE(merged->Ready());  // nothing to read without waiting
  quiet.push_back("late\n");
  EXPECT_THAT(Drain(*merged), ElementsAre("q/0 late\n"));
  quiet_ended = busy_ended = true;
  auto more = merged->NextBatch([](std::string_view) {});
  ASSERT_THAT(more, IsOk());
  auto last = merged->NextBatch([](std::string_view) {});
  ASSERT_THAT(last, IsOk());
  EXPECT_FALSE(*more && *last);  // both ended: the merged log ends
}

TEST(MergedLines, NoLogsIsAnEmptyLog) {
  auto merged = MakeMergedLogIterator({});
  auto line = merged->Next();
  ASSERT_THAT(line, IsOk());
  EXPECT_FALSE(line->has_value());
}

}  // namespace
}  // namespace torchx::schedulers
