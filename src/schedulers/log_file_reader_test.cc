// The log file reader against files in a temporary directory: Next(), NextBatch() and
// NextBlock() hand out the same lines (across refills, with a last line lacking its newline, through the Runner's
// filter), and following drains what was written before the app ended.
#include "schedulers/log_file_reader.h"
#include "schedulers/line_filter.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace torchx::schedulers {
namespace {

std::vector<std::string> ByNext(LogIterator& it) {
  std::vector<std::string> out;
  while (true) {
    auto line = it.Next();
    EXPECT_TRUE(line.ok());
    if (!line.ok() || !*line) return out;
    out.push_back(**line);
  }
}

std::vector<std::string> ByBatch(LogIterator& it, int* batches = nullptr) {
  std::vector<std::string> out;
  while (true) {
    auto more = it.NextBatch([&](std::string_view line) { out.emplace_back(line); });
    EXPECT_TRUE(more.ok());
    if (!more.ok() || !*more) return out;
    if (batches) ++*batches;
  }
}

// NextBlock's views split at their newlines: whole lines, a line without its newline alone.
std::vector<std::string> ByBlock(LogIterator& it, int* blocks = nullptr) {
  std::vector<std::string> out;
  while (true) {
    auto more = it.NextBlock([&](std::string_view block) {
      if (blocks) ++*blocks;
      while (!block.empty()) {
        size_t nl = block.find('\n');
        size_t len = nl == std::string_view::npos ? block.size() : nl + 1;
        EXPECT_TRUE(nl != std::string_view::npos || len == block.size());
        out.emplace_back(block.substr(0, len));
        block.remove_prefix(len);
      }
    });
    EXPECT_TRUE(more.ok());
    if (!more.ok() || !*more) return out;
  }
}

// Lines of varied lengths, 300 KB in all: several refills, lines split across them.
std::string ManyLines(std::vector<std::string>* lines) {
  std::string text;
  for (int i = 0; text.size() < 300000; ++i) {
    std::string line = "line " + std::to_string(i) + std::string(static_cast<size_t>(i % 97), 'x') + "\n";
    lines->push_back(line);
    text += line;
  }
  return text;
}

TEST(LogFileReader, BatchesHandOutTheSameLinesAsNext) {
  testing::ScopedTempDir dir;
  std::vector<std::string> lines;
  std::string path = dir.Write("combined.log", ManyLines(&lines) + "no newline at the end");
  lines.push_back("no newline at the end");
  auto never = [] { return false; };
  auto by_next = MakeLogFileReader(path, false, never);
  EXPECT_EQ(ByNext(*by_next), lines);
  int batches = 0;
  auto by_batch = MakeLogFileReader(path, false, never);
  EXPECT_EQ(ByBatch(*by_batch, &batches), lines);
  EXPECT_LT(batches, 10);  // whole refills at a time, not a line per call
  int blocks = 0;
  auto by_block = MakeLogFileReader(path, false, never);
  EXPECT_EQ(ByBlock(*by_block, &blocks), lines);
  EXPECT_LE(blocks, 5);  // a view per read (128 KiB) of whole lines, then the last line alone
}

TEST(LogFileReader, AVeryLongLineComesInBoundedPiecesWithItsBytesIntact) {
  testing::ScopedTempDir dir;
  std::string progress(3 * (1 << 20) + 5, '#');  // a progress bar that never printed a newline
  std::string path = dir.Write("combined.log", "before\n" + progress + "\nafter\n");
  auto never = [] { return false; };
  for (int how : {0, 1, 2}) {
    auto reader = MakeLogFileReader(path, false, never);
    std::vector<std::string> pieces = how == 0 ? ByNext(*reader) : how == 1 ? ByBatch(*reader) : ByBlock(*reader);
    ASSERT_GE(pieces.size(), 5u);
    std::string joined;
    for (const std::string& p : pieces) {
      EXPECT_LE(p.size(), size_t{2} << 20) << how;  // a block may end an over-long line's last piece
      if (how < 2) EXPECT_LE(p.size(), size_t{1} << 20);
      joined += p;
    }
    EXPECT_EQ(joined, "before\n" + progress + "\nafter\n") << how;
  }
}

// A file of 8 MiB or more, read once, is read ahead on a thread in 1 MiB chunks: lines across
// chunk boundaries, a line longer than the room kept before a chunk (64 KiB) and one longer than
// a chunk come out whole and in order, by every way of reading, and the last line without its newline.
TEST(LogFileReader, ALargeFileReadAheadHandsOutEveryLineIntact) {
  testing::ScopedTempDir dir;
  std::vector<std::string> lines;
  std::string text;
  for (int i = 0; text.size() < (10u << 20); ++i) {
    std::string line = std::to_string(i) + std::string(static_cast<size_t>(i * 7919 % 211), 'a' + i % 26) + "\n";
    if (i == 20000) line = std::string(100 << 10, 'w') + "\n";        // past the 64 KiB headroom
    if (i == 60000) line = std::string((1 << 20) + 300, 'W') + "\n";  // past a whole chunk
    lines.push_back(line);
    text += line;
  }
  lines.push_back("the end, unterminated");
  std::string path = dir.Write("combined.log", text + lines.back());
  std::string expected;
  for (const std::string& l : lines) expected += l;
  auto never = [] { return false; };
  for (int how : {0, 1, 2}) {
    auto reader = MakeLogFileReader(path, false, never);
    std::vector<std::string> got = how == 0 ? ByNext(*reader) : how == 1 ? ByBatch(*reader) : ByBlock(*reader);
    std::string joined;
    for (const std::string& g : got) joined += g;
    EXPECT_EQ(joined.size(), expected.size()) << how;
    EXPECT_TRUE(joined == expected) << how;
    // Lines up to 1 MiB come whole; the longer one in pieces (ByBlock may end one with its newline).
    size_t whole = 0;
    for (const std::string& g : got) whole += g.size() < (1 << 20) && g.find('\n') == g.size() - 1;
    EXPECT_GE(whole, lines.size() - 3) << how;
  }
  // Dropped half-way: the read-ahead thread stops with it.
  auto reader = MakeLogFileReader(path, false, never);
  ASSERT_TRUE(reader->Next().ok());
}

// The Runner's filter over this reader keeps the reader's batching: many kept lines per call.
TEST(LogFileReader, FilteredBatchesKeepTheMatchingLines) {
  testing::ScopedTempDir dir;
  std::vector<std::string> lines;
  std::string text;
  for (int i = 0; i < 200; ++i) text += lines.emplace_back("line " + std::to_string(i) + "\n");
  std::string path = dir.Write("combined.log", text);
  std::vector<std::string> kept;
  for (const std::string& l : lines) {
    if (l.find("line 7") != std::string::npos) kept.push_back(l);
  }
  auto never = [] { return false; };
  auto it = FilterLogLines(MakeLogFileReader(path, false, never), *LineFilter::Compile("line 7"));
  int batches = 0;
  EXPECT_EQ(ByBatch(*it, &batches), kept);
  EXPECT_EQ(batches, 1);
  auto none = FilterLogLines(MakeLogFileReader(path, false, never), *LineFilter::Compile("no such line"));
  EXPECT_TRUE(ByBatch(*none).empty());
  // As the CLI reads: Ready() before each NextBatch. Ready reads ahead in whole batches too.
  auto ready_first = FilterLogLines(MakeLogFileReader(path, false, never), *LineFilter::Compile("line 7"));
  std::vector<std::string> got;
  int calls = 0;
  while (true) {
    EXPECT_TRUE(ready_first->Ready());  // a finished file never blocks
    auto more = ready_first->NextBatch([&](std::string_view l) { got.emplace_back(l); });
    ASSERT_TRUE(more.ok());
    if (!*more) break;
    ++calls;
  }
  EXPECT_EQ(got, kept);
  EXPECT_EQ(calls, 1);
}

TEST(LogFileReader, AMissingFileIsEmptyAndFollowingDrainsTheEnd) {
  testing::ScopedTempDir dir;
  auto never = [] { return false; };
  EXPECT_TRUE(ByBatch(*MakeLogFileReader(dir.path() + "/nope.log", false, never)).empty());
  // Following an app that has already ended: everything written, the unterminated tail too.
  std::string path = dir.Write("combined.log", "a\nb\nc");
  auto ended = [] { return true; };
  auto it = MakeLogFileReader(path, true, ended);
  EXPECT_EQ(ByBatch(*it), (std::vector<std::string>{"a\n", "b\n", "c"}));
}

TEST(LogFileReader, FollowingSeesLinesAppendedBeforeTheAppEnds) {
  testing::ScopedTempDir dir;
  std::string path = dir.Write("combined.log", "first\n");
  int asked = 0;
  // The app "ends" on the second question, after a line was appended on the first.
  auto terminal = [&] {
    if (++asked == 1) {
      std::ofstream(path, std::ios::app) << "second\nthird";
      return false;
    }
    return true;
  };
  auto it = MakeLogFileReader(path, true, terminal);
  EXPECT_EQ(ByBatch(*it), (std::vector<std::string>{"first\n", "second\n", "third"}));
}

TEST(LogFileReader, FollowingGoesOnWithARetriedAttemptsNewFile) {
  testing::ScopedTempDir dir;
  std::string path = dir.Write("combined.log", "first-attempt\npartial");
  int asked = 0;
  // As a retry does: the attempt's file moves to attempt_0/, a new one takes the path; the app
  // ends after the second attempt wrote its line.
  auto terminal = [&] {
    if (++asked == 1) {
      std::filesystem::create_directories(dir.path() + "/attempt_0");
      std::filesystem::rename(path, dir.path() + "/attempt_0/combined.log");
      std::ofstream(path) << "second-attempt\n";
      return false;
    }
    return true;
  };
  auto it = MakeLogFileReader(path, true, terminal);
  EXPECT_EQ(ByBatch(*it), (std::vector<std::string>{"first-attempt\n", "partial\n", "second-attempt\n"}));
}

}  // namespace
}  // namespace torchx::schedulers
