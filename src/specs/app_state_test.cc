#include "torchx/specs/app_state.h"

#include <cstdlib>
#include <ctime>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "specs/error_message.h"
#include "testing/status_matchers.h"

namespace torchx::specs {
namespace {

using ::testing::HasSubstr;

TEST(AppState, NamesNumbersAndSets) {
  EXPECT_EQ(AppStateName(AppState::kUnsubmitted), "UNSUBMITTED");
  EXPECT_EQ(static_cast<int>(AppState::kUnknown), 7);
  for (int i = 0; i <= 7; ++i) {
    auto s = static_cast<AppState>(i);
    EXPECT_THAT(ParseAppState(AppStateName(s)), IsOkAndHolds(s));
    bool terminal = s == AppState::kSucceeded || s == AppState::kFailed || s == AppState::kCancelled;
    EXPECT_EQ(IsTerminal(s), terminal) << i;
  }
  EXPECT_THAT(ParseAppState("DONE"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("must be one of [UNSUBMITTED")));
}

AppStatus TestStatus() {
  const char* err = R"({"message":{"message":"error","errorCode":-1,"extraInfo":{"timestamp":1293182}}})";
  AppStatus s;
  s.state = AppState::kRunning;
  s.roles = {RoleStatus{"worker",
                        {ReplicaStatus{1, AppState::kRunning, "worker", "localhost", "<NONE>"},
                         ReplicaStatus{0, AppState::kFailed, "worker", "localhost", err}}}};
  return s;
}

class FormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_ = tz ? tz : "";
    had_ = tz != nullptr;
    setenv("TZ", "Europe/London", 1);
    tzset();
  }
  void TearDown() override {
    if (had_)
      setenv("TZ", saved_.c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(FormatTest, MatchesTorchXText) {
  EXPECT_EQ(FormatAppStatus(TestStatus()),
            "AppStatus:\n"
            "    State: RUNNING\n"
            "    Num Restarts: 0\n"
            "    Roles: \n"
            " *worker[0]:FAILED (exitcode: -1)\n"
            "        timestamp: 1970-01-16 00:13:02\n"
            "        hostname: localhost\n"
            "        error_msg: error\n"
            "  worker[1]:RUNNING\n"
            "    Msg: \n"
            "    Structured Error Msg: <NONE>\n"
            "    UI URL: None\n"
            "    ");
}

TEST_F(FormatTest, NoReplyFileAndNonJsonErrorAndFilter) {
  AppStatus s;
  s.state = AppState::kFailed;
  s.ui_url = "http://x";
  s.roles = {RoleStatus{"a", {ReplicaStatus{0, AppState::kCancelled, "a", "h", "<NONE>"}}},
             RoleStatus{"b", {ReplicaStatus{0, AppState::kFailed, "b", "h", "plain text"}}}};
  std::string text = FormatAppStatus(s);
  EXPECT_THAT(text, HasSubstr("\n *a[0]:CANCELLED (no reply file)"));
  EXPECT_THAT(text, HasSubstr("\n *b[0]:FAILED\n    error_msg: plain text\n"));
  EXPECT_THAT(text, HasSubstr("UI URL: http://x"));
  std::string only_b = FormatAppStatus(s, {"b"});
  EXPECT_THAT(only_b, ::testing::Not(HasSubstr("a[0]")));
}

TEST_F(FormatTest, ZeroExitCodeIsNotAvailable) {
  AppStatus s;
  s.roles = {RoleStatus{"r",
                        {ReplicaStatus{0, AppState::kFailed, "r", "h",
                                       R"({"message":{"message":"m","errorCode":0,"extraInfo":{"timestamp":"0"}}})"}}}};
  EXPECT_THAT(FormatAppStatus(s), HasSubstr("FAILED (exitcode: <N/A>)"));
}

TEST_F(FormatTest, FlatErrorFileSchema) {
  AppStatus s;
  s.roles = {RoleStatus{"w",
                        {ReplicaStatus{0, AppState::kFailed, "w", "h",
                                       R"({"message": "Injected: boom", "timestamp": 1293182, "errorCode": 1})"}}}};
  std::string text = FormatAppStatus(s);
  EXPECT_THAT(text, HasSubstr(" *w[0]:FAILED (exitcode: 1)\n        timestamp: 1970-01-16 00:13:02\n"
                              "        hostname: h\n        error_msg: Injected: boom"));
}

TEST_F(FormatTest, MissingTimestampAndCodeAreNotAvailable) {
  for (const char* msg : {R"({"message": "flat"})", R"({"message": {"message": "nested"}})",
                          R"({"message": "bad ts", "timestamp": "soon"})"}) {
    AppStatus s;
    s.roles = {RoleStatus{"w", {ReplicaStatus{0, AppState::kFailed, "w", "h", msg}}}};
    std::string text = FormatAppStatus(s);
    EXPECT_THAT(text, HasSubstr("FAILED (exitcode: <N/A>)")) << msg;
    EXPECT_THAT(text, HasSubstr("timestamp: <N/A>")) << msg;
  }
}

TEST_F(FormatTest, UnrecognizedJsonIsShownAsIs) {
  for (const char* msg : {R"(["not", "a", "dict"])", R"({"error": "no message key"})", R"({"message": {"message": 5}})",
                          R"({"message": null})", R"("just a string")"}) {
    AppStatus s;
    s.roles = {RoleStatus{"w", {ReplicaStatus{0, AppState::kFailed, "w", "h", msg}}}};
    EXPECT_THAT(FormatAppStatus(s), HasSubstr(msg));
  }
}

TEST(AppStatusJson, HostaddrDefaultsToHostname) {
  AppStatus s;
  s.roles = {RoleStatus{"w", {ReplicaStatus{0, AppState::kRunning, "w", "node1"}}}};
  EXPECT_THAT(AppStatusToJson(s), HasSubstr(R"("hostaddr":"node1")"));
  s.roles[0].replicas[0].hostaddr = "10.0.0.1";
  auto back = AppStatusFromJson(AppStatusToJson(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->roles[0].replicas[0].hostaddr, "10.0.0.1");
}

TEST(FormatErrorMessage, ExtractsRpcErrorAndWraps) {
  std::string rpc =
      "RuntimeError('On WorkerInfo(id=1, name=trainer:0:0):\n"
      "RuntimeError(ShardingError('Table of size 715.26GB cannot be added to any rank'))\n"
      "Traceback (most recent call last):\n"
      "..\n"
      "')\n"
      "Traceback (most recent call last):\n"
      "  File \"/dev/shm/uid-0/x/torch/distributed/rpc/internal.py\", line 190, in _run_function\n";
  EXPECT_EQ(internal::FormatErrorMessage(rpc, "", 80),
            "RuntimeError('On WorkerInfo(id=1, name=trainer:0:0):\n"
            "RuntimeError(ShardingError('Table\n"
            " of size 715.26GB cannot be added to any rank'))\n"
            "Traceback (most recent call last):\n"
            "..\n"
            "')");
}

TEST(FormatErrorMessage, KeepsLineBeforeNestedException) {
  EXPECT_EQ(internal::FormatErrorMessage("c10::Error: CUDA error\nException raised from x", "h: "),
            "h: c10::Error: CUDA error");
}

TEST(FormatErrorMessage, ContinuationLinesAreIndented) {
  std::string msg(30, 'a');
  msg += " " + std::string(10, 'b') + " c";
  EXPECT_EQ(internal::FormatErrorMessage(msg, "hdr: ", 20),
            "hdr: " + std::string(30, 'a') + "\n      " + std::string(10, 'b') + " c");
}

TEST(AppStatusJson, MatchesTorchXShape) {
  auto j = nlohmann::json::parse(AppStatusToJson(TestStatus()));
  EXPECT_EQ(j["state"], "RUNNING");
  EXPECT_EQ(j["num_restarts"], 0);
  EXPECT_EQ(j["msg"], "");
  EXPECT_EQ(j["structured_error_msg"], "<NONE>");
  EXPECT_TRUE(j["url"].is_null());
  ASSERT_EQ(j["roles"].size(), 1u);
  EXPECT_EQ(j["roles"][0]["role"], "worker");
  EXPECT_EQ(j["roles"][0]["replicas"][1]["state"], 5);  // replica state as int (TorchX quirk)
  EXPECT_EQ(j["roles"][0]["replicas"][1]["hostname"], "localhost");
  EXPECT_EQ(nlohmann::json::parse(AppStatusToJson(TestStatus(), {"other"}))["roles"].size(), 0u);
}

TEST(AppStatusJson, RoundTrips) {
  AppStatus s = TestStatus();
  s.ui_url = "u";
  s.num_restarts = 2;
  EXPECT_THAT(AppStatusFromJson(AppStatusToJson(s)), IsOkAndHolds(s));
  EXPECT_THAT(AppStatusFromJson("{}"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("state")));
  EXPECT_THAT(AppStatusFromJson(R"({"state": 9})"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("out of range")));
}

}  // namespace
}  // namespace torchx::specs
