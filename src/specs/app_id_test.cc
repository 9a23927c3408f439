#include "torchx/specs/app_id.h"

#include <set>

#include <gtest/gtest.h>

namespace torchx::specs {
namespace {

TEST(RandomId, MatchesTorchXTestVector) {
  // TorchX's ids_test: os.urandom returning bytes 0..7 (big-endian 0x0001020304050607).
  EXPECT_EQ(EncodeRandomId(0x0001020304050607ULL), "fzfjxlmln9");
  EXPECT_EQ(MakeUnique("test").substr(0, 5), "test-");
}

TEST(RandomId, AlphabetHasNoVowelsAndNoEight) {
  for (int i = 0; i < 200; ++i) {
    std::string id = RandomId();
    ASSERT_FALSE(id.empty());
    EXPECT_NE(kIdStartChars.find(id[0]), std::string_view::npos) << id;
    for (char c : id) EXPECT_NE(kIdChars.find(c), std::string_view::npos) << id;
  }
}

TEST(RandomId, IsRandom) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert(RandomId());
  EXPECT_EQ(ids.size(), 100u);
}

TEST(RandomIdOfLength, HasRequestedLength) {
  std::string id = RandomIdOfLength(6);
  EXPECT_EQ(id.size(), 6u);
  EXPECT_NE(kIdStartChars.find(id[0]), std::string_view::npos);
  EXPECT_EQ(MakeUnique("x", 4).size(), 6u);
}

TEST(NormalizeName, GivesDns1123Labels) {
  EXPECT_EQ(NormalizeName("Trainer_Main"), "trainer-main");
  EXPECT_EQ(NormalizeName("__1abc..def--"), "abc-def");
  EXPECT_EQ(NormalizeName("123"), "app");
  EXPECT_EQ(NormalizeName(std::string(100, 'a')).size(), 63u);
  EXPECT_EQ(NormalizeName("ab" + std::string(70, '-') + "c", 5), "ab-c");  // runs collapse
  EXPECT_EQ(NormalizeName("abcd-efgh", 5), "abcd");                        // no trailing dash after truncation
}

}  // namespace
}  // namespace torchx::specs
