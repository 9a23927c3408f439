#include "core/strings.h"

#include <gtest/gtest.h>

namespace torchx::internal {
namespace {

using V = std::vector<std::string>;

TEST(Strip, LikePython) {
  EXPECT_EQ(Strip("  a b \t\n"), "a b");
  EXPECT_EQ(Strip(" \t "), "");
  EXPECT_EQ(Strip(""), "");
}

TEST(SplitAny, KeepsEmptyPieces) {
  EXPECT_EQ(SplitAny("a,,b;c", ",;"), (V{"a", "", "b", "c"}));
  EXPECT_EQ(SplitAny("", ","), (V{""}));
  EXPECT_EQ(SplitAny("a,", ","), (V{"a", ""}));
}

TEST(SplitWhitespace, DropsEmptyPieces) {
  EXPECT_EQ(SplitWhitespace("  a  b\tc\n"), (V{"a", "b", "c"}));
  EXPECT_TRUE(SplitWhitespace("   ").empty());
}

TEST(StringsTest, Base64UrlEncodeUsesTheUrlAlphabetAndRoundTrips) {
  EXPECT_EQ(Base64UrlEncode(""), "");
  EXPECT_EQ(Base64UrlEncode("hello"), "aGVsbG8=");
  EXPECT_EQ(Base64UrlEncode("{}"), "e30=");
  EXPECT_EQ(Base64UrlEncode("\xfb\xff\xbf"), "-_-_");  // "+/+/" in the standard alphabet
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  std::string std_alphabet = Base64UrlEncode(all);
  for (char& c : std_alphabet) c = c == '-' ? '+' : c == '_' ? '/' : c;
  EXPECT_EQ(Base64Decode(std_alphabet), all);
}

TEST(StringsTest, Base64DecodeReadsPaddedUnpaddedAndWrappedText) {
  EXPECT_EQ(Base64Decode("aGVsbG8="), "hello");
  EXPECT_EQ(Base64Decode("aGVsbG8"), "hello");
  EXPECT_EQ(Base64Decode("aGVs\nbG8h"), "hello!");
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_EQ(Base64Decode("/+8="), std::string("\xff\xef"));
  EXPECT_FALSE(Base64Decode("aGV*bG8="));
  EXPECT_FALSE(Base64Decode("aG=Vs"));
}

}  // namespace
}  // namespace torchx::internal
