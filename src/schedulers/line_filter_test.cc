// The one log line filter: Python re.search semantics where RE2 shares them, refusals naming
// `regex` where it does not, linear time on long lines with patterns that make a backtracking
// engine recurse, and the iterator wrapper's Next / Ready / NextBatch contract.
#include "schedulers/line_filter.h"

#include <deque>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/log_lines.h"
#include "testing/status_matchers.h"

namespace torchx::schedulers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::torchx::IsOkAndHolds;
using ::torchx::StatusIs;

bool Matches(const std::string& pattern, std::string_view line) {
  auto filter = LineFilter::Compile(pattern);
  EXPECT_TRUE(filter.ok()) << pattern;
  return filter.ok() && filter->Matches(line);
}

TEST(LineFilter, SearchesAnywhereLikePythonsReSearch) {
  EXPECT_TRUE(Matches("allreduce", "[0]: step 3 allreduce done\n"));
  EXPECT_FALSE(Matches("^allreduce", "[0]: allreduce\n"));
  EXPECT_TRUE(Matches("^out", "out localhost\n"));
  EXPECT_TRUE(Matches("done$", "all done\n"));  // the newline is not part of the line
  EXPECT_TRUE(Matches("line[24]", "line4\n"));
  EXPECT_TRUE(Matches("(?i)ERROR", "an error\n"));
  EXPECT_TRUE(Matches(R"((?P<step>\d+)/\d+)", "step 3/10\n"));
  EXPECT_TRUE(Matches("é", "café\n"));
  EXPECT_TRUE(Matches("x", "no newline at the end x"));
  EXPECT_FALSE(Matches("x", "\n"));
}

TEST(LineFilter, RefusesWhatRe2CannotDoNamingRegex) {
  for (const char* bad : {"(", "a)", "[z-a]", R"((a)\1)", "(?=a)", "(?!a)b", "(?<=a)b", "a*+"}) {
    EXPECT_THAT(LineFilter::Compile(bad), StatusIs(StatusCode::kInvalidArgument, HasSubstr("regex: invalid pattern")))
        << bad;
  }
  // Python's `{,n}` (0 to n): RE2 would match it as text, so it is refused; as text it is fine.
  EXPECT_THAT(LineFilter::Compile("a{,3}b"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("write `{0,n}`")));
  EXPECT_TRUE(Matches("a{0,3}b", "aab"));
  EXPECT_TRUE(Matches(R"(a\{,3})", "a{,3}"));
  EXPECT_TRUE(Matches("[{,3}]", "{"));
  EXPECT_TRUE(Matches("[]{,3}]x", "]x"));
  EXPECT_THAT(LineFilter::Compile(std::string(LineFilter::kMaxPatternBytes + 1, 'a')),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("4096")));
}

// What made std::regex overflow the stack (it recurses per character) or backtrack
// exponentially: each runs in time linear in the line, on a 1 MiB line. No timing is asserted:
// finishing at all, without a crash, is the point.
TEST(LineFilter, PathologicalPatternsOnAOneMebibyteLine) {
  const std::string as(1 << 20, 'a');
  const std::string abs = [] {
    std::string s;
    for (int i = 0; i < (1 << 19); ++i) s += "ab";
    return s;
  }();
  EXPECT_FALSE(Matches("(a|b)*c", abs + "\n"));
  EXPECT_TRUE(Matches("(a|b)*c", abs + "c\n"));
  EXPECT_FALSE(Matches("(a+)+b", as));
  EXPECT_FALSE(Matches("(a*)*$x", as));
  EXPECT_TRUE(Matches("^(a|aa)+$", as + "\n"));
  EXPECT_FALSE(Matches("(.*a){20}z", as));
  EXPECT_TRUE(Matches("a{1000}", as));
}

// A scripted inner iterator: lines, with `blocking` marking where Ready() says a read would wait.
class ScriptedLines : public LogIterator {
 public:
  explicit ScriptedLines(std::vector<std::string> lines, size_t ready_until = SIZE_MAX)
      : lines_(lines.begin(), lines.end()), ready_until_(ready_until) {}
  Result<std::optional<std::string>> Next() override {
    ++reads_;
    if (lines_.empty()) return std::optional<std::string>();
    std::string l = lines_.front();
    lines_.pop_front();
    return std::optional<std::string>(l);
  }
  bool Ready() override { return reads_ < ready_until_; }
  size_t reads_ = 0;

 private:
  std::deque<std::string> lines_;
  size_t ready_until_;
};

TEST(FilterLogLines, NextAndNextBatchKeepTheMatchingLines) {
  std::vector<std::string> lines = {"a 1\n", "b 2\n", "a 3\n", "last a"};
  auto by_next = FilterLogLines(std::make_unique<ScriptedLines>(lines), *LineFilter::Compile("^a"));
  EXPECT_THAT(testing::ReadAllLines(*by_next), IsOkAndHolds(ElementsAre("a 1\n", "a 3\n")));

  auto by_batch = FilterLogLines(std::make_unique<ScriptedLines>(lines), *LineFilter::Compile("a"));
  std::vector<std::string> got;
  while (true) {
    auto more = by_batch->NextBatch([&](std::string_view l) { got.emplace_back(l); });
    ASSERT_TRUE(more.ok());
    if (!*more) break;
  }
  EXPECT_THAT(got, ElementsAre("a 1\n", "a 3\n", "last a"));
}

// Ready() is true only with a kept line in hand: dropped lines that were ready do not make a
// caller (the CLI, the dashboard) wait with its output unflushed.
TEST(FilterLogLines, ReadyReadsAheadPastDroppedLines) {
  auto inner = std::make_unique<ScriptedLines>(std::vector<std::string>{"x\n", "y\n", "keep\n", "z\n"}, 2);
  ScriptedLines* raw = inner.get();
  auto it = FilterLogLines(std::move(inner), *LineFilter::Compile("keep"));
  EXPECT_FALSE(it->Ready());  // x and y were ready and dropped; the next read would wait
  EXPECT_EQ(raw->reads_, 2u);
  auto line = it->Next();  // blocks (here: does not) and finds the kept line
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(**line, "keep\n");

  auto ahead = FilterLogLines(std::make_unique<ScriptedLines>(std::vector<std::string>{"no\n", "keep\n"}),
                              *LineFilter::Compile("keep"));
  EXPECT_TRUE(ahead->Ready());
  std::vector<std::string> got;
  EXPECT_THAT(ahead->NextBatch([&](std::string_view l) { got.emplace_back(l); }), IsOkAndHolds(true));
  EXPECT_THAT(got, ElementsAre("keep\n"));
  EXPECT_TRUE(ahead->Ready());  // the end is known without blocking
  EXPECT_THAT(ahead->NextBatch([&](std::string_view) {}), IsOkAndHolds(false));
}

}  // namespace
}  // namespace torchx::schedulers
