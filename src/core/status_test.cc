#include "torchx/status.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx {
namespace {

using ::testing::HasSubstr;

Result<int> Half(int n) {
  if (n % 2) return InvalidArgumentError("n: must be even");
  return n / 2;
}

Result<int> Quarter(int n) {
  TORCHX_ASSIGN_OR_RETURN(int h, Half(n));
  return Half(h);
}

Status CheckEven(int n) {
  TORCHX_RETURN_IF_ERROR(Half(n).status());
  return OkStatus();
}

TEST(Status, DefaultIsOkAndPrintsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(Status, ToStringNamesTheCode) { EXPECT_EQ(NotFoundError("no app").ToString(), "NOT_FOUND: no app"); }

TEST(Status, WithContextPrefixesMessageAndKeepsCode) {
  Status s = InvalidArgumentError("bad").WithContext("role trainer");
  EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument, "role trainer: bad"));
  EXPECT_TRUE(OkStatus().WithContext("x").ok());
}

TEST(Result, HoldsValueOrError) {
  EXPECT_THAT(Half(4), IsOkAndHolds(2));
  EXPECT_THAT(Half(3), StatusIs(StatusCode::kInvalidArgument, HasSubstr("even")));
}

TEST(Result, AssignOrReturnPropagatesFirstError) {
  EXPECT_THAT(Quarter(8), IsOkAndHolds(2));
  EXPECT_THAT(Quarter(6), StatusIs(StatusCode::kInvalidArgument, "n: must be even"));
  EXPECT_THAT(CheckEven(2), IsOk());
  EXPECT_THAT(CheckEven(1), StatusIs(StatusCode::kInvalidArgument, ::testing::_));
}

TEST(Result, OkStatusWithoutValueBecomesInternal) {
  Result<int> r(OkStatus());
  EXPECT_THAT(r, StatusIs(StatusCode::kInternal, HasSubstr("OK status")));
}

TEST(Result, ValueOrFallsBack) {
  EXPECT_EQ(Half(3).value_or(-1), -1);
  EXPECT_EQ(Half(10).value_or(-1), 5);
}

TEST(ResultDeathTest, ReadingValueOfErrorAborts) {
  EXPECT_DEATH({ (void)*Half(3); }, "");
}

}  // namespace
}  // namespace torchx
