// gMock matchers for Status and Result<T>: IsOk(), IsOkAndHolds(m), StatusIs(code, msg_matcher).
// Tests assert the specific error, never just "not ok".
#pragma once

#include <gmock/gmock.h>

#include <ostream>

#include "torchx/status.h"

namespace torchx {

inline void PrintTo(const Status& s, std::ostream* os) { *os << s.ToString(); }
template <typename T>
void PrintTo(const Result<T>& r, std::ostream* os) {
  *os << (r.has_value() ? std::string("OK (value)") : r.error().ToString());
}

namespace testing_internal {
inline const Status& GetStatus(const Status& s) { return s; }
template <typename T>
Status GetStatus(const Result<T>& r) {
  return r.status();
}
}  // namespace testing_internal

MATCHER(IsOk, "is OK") {
  Status s = testing_internal::GetStatus(arg);
  if (!s.ok()) *result_listener << "status is " << s.ToString();
  return s.ok();
}

MATCHER_P(IsOkAndHolds, matcher, "is OK and holds a matching value") {
  if (!arg.has_value()) {
    *result_listener << "status is " << arg.error().ToString();
    return false;
  }
  return ::testing::ExplainMatchResult(matcher, *arg, result_listener);
}

MATCHER_P2(StatusIs, code, msg_matcher,
           std::string("has code ") + std::string(StatusCodeName(code)) + " and a message that " +
               ::testing::DescribeMatcher<std::string>(msg_matcher)) {
  Status s = testing_internal::GetStatus(arg);
  if (s.code() != code) {
    *result_listener << "status is " << s.ToString();
    return false;
  }
  return ::testing::ExplainMatchResult(msg_matcher, s.message(), result_listener);
}

}  // namespace torchx
