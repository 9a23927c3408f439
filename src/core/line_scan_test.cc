// ForEachLine against a plain split: every line that ends with a newline, in order, and the
// unterminated rest, for blocks around the 64-byte steps (newlines at 0, 63, 64, runs of them,
// none at all) and random text.
#include "core/line_scan.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace torchx::internal {
namespace {

struct Split {
  std::vector<std::string> lines;
  std::string rest;
  bool operator==(const Split&) const = default;
};

Split Plain(const std::string& text) {
  Split out;
  size_t at = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', at)) {
    out.lines.push_back(text.substr(at, nl + 1 - at));
    at = nl + 1;
  }
  out.rest = text.substr(at);
  return out;
}

Split Scanned(const std::string& text) {
  Split out;
  const char* rest = ForEachLine(text.data(), text.data() + text.size(),
                                 [&](const char* line, size_t len) { out.lines.emplace_back(line, len); });
  out.rest.assign(rest, static_cast<size_t>(text.data() + text.size() - rest));
  return out;
}

TEST(LineScan, EdgesOfThe64ByteSteps) {
  std::vector<std::string> cases = {"",
                                    "\n",
                                    "no newline",
                                    std::string(64, 'a'),
                                    std::string(63, 'a') + "\n",
                                    std::string(64, 'a') + "\n",
                                    "\n" + std::string(63, 'b') + "\n",
                                    std::string(130, '\n'),
                                    std::string(200, 'x') + "\ntail"};
  for (const std::string& text : cases) EXPECT_TRUE(Scanned(text) == Plain(text)) << text.size();
}

TEST(LineScan, RandomTextSplitsAsAPlainSplitDoes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 500; ++round) {
    std::string text(rng() % 700, 'x');
    for (char& c : text) c = rng() % 9 == 0 ? '\n' : static_cast<char>('a' + rng() % 26);
    EXPECT_TRUE(Scanned(text) == Plain(text)) << round;
  }
}

TEST(LineScan, TheMaskMarksEveryNewlineOfTheBlock) {
  std::string block(64, '.');
  for (int i : {0, 15, 16, 31, 32, 47, 48, 63}) block[static_cast<size_t>(i)] = '\n';
  uint64_t mask = NewlineMask64(block.data());
  for (int i = 0; i < 64; ++i) EXPECT_EQ((mask >> i) & 1, block[static_cast<size_t>(i)] == '\n' ? 1u : 0u) << i;
}

}  // namespace
}  // namespace torchx::internal
