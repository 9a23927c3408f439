#include "core/pystr.h"

#include <gtest/gtest.h>

namespace torchx::internal {
namespace {

TEST(PyFloatStr, MatchesPythonStr) {
  EXPECT_EQ(PyFloatStr(1.0), "1.0");
  EXPECT_EQ(PyFloatStr(0.1), "0.1");
  EXPECT_EQ(PyFloatStr(-2.5), "-2.5");
  EXPECT_EQ(PyFloatStr(3600.0), "3600.0");
  EXPECT_EQ(PyFloatStr(1e-5), "1e-05");
  EXPECT_EQ(PyFloatStr(0.0001), "0.0001");
  EXPECT_EQ(PyFloatStr(1e16), "1e+16");
  EXPECT_EQ(PyFloatStr(123456789012345.0), "123456789012345.0");
  EXPECT_EQ(PyFloatStr(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(PyFloatStr(1.5e300), "1.5e+300");
  EXPECT_EQ(PyFloatStr(0.0), "0.0");
}

TEST(PyRepr, QuotesLikePython) {
  EXPECT_EQ(PyRepr("abc"), "'abc'");
  EXPECT_EQ(PyRepr("it's"), "\"it's\"");
  EXPECT_EQ(PyRepr("a'b\"c"), "'a\\'b\"c'");
  EXPECT_EQ(PyRepr("a\\b\n"), "'a\\\\b\\n'");
}

TEST(ShlexQuote, MatchesPython) {
  EXPECT_EQ(ShlexQuote(""), "''");
  EXPECT_EQ(ShlexQuote("train.py"), "train.py");
  EXPECT_EQ(ShlexQuote("--lr=0.1"), "--lr=0.1");
  EXPECT_EQ(ShlexQuote("a b"), "'a b'");
  EXPECT_EQ(ShlexQuote("${app_id}"), "'${app_id}'");
  EXPECT_EQ(ShlexQuote("it's"), "'it'\"'\"'s'");
}

}  // namespace
}  // namespace torchx::internal
