#include "torchx/schedulers/stacks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/status_matchers.h"

namespace torchx::schedulers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What `py-spy dump --json` prints: threads, each frame innermost first.
constexpr const char* kDump = R"([
  {"pid": 41, "thread_id": 1, "thread_name": "MainThread", "os_thread_id": 41, "active": false, "owns_gil": false,
   "frames": [{"name": "stuck_here", "filename": "/w/train.py", "short_filename": "train.py", "line": 7,
               "locals": null, "is_entry": false},
              {"name": "<module>", "filename": "/w/train.py", "short_filename": "train.py", "line": 12}]},
  {"pid": 41, "thread_id": 2, "thread_name": "Thread-1", "os_thread_id": 44,
   "frames": [{"name": "wait", "filename": "/usr/lib/python3.11/threading.py", "short_filename": "threading.py",
               "line": 320}]}
])";

TEST(ParsePySpyDump, ThreadsWithFramesInnermostFirstAndTheMainOne) {
  auto threads = ParsePySpyDump(kDump, 41);
  ASSERT_THAT(threads, IsOk());
  ASSERT_EQ(threads->size(), 2u);
  EXPECT_TRUE((*threads)[0].main);
  EXPECT_FALSE((*threads)[1].main);
  EXPECT_THAT((*threads)[0].frames,
              ElementsAre(StackFrame{"stuck_here", "train.py", 7}, StackFrame{"<module>", "train.py", 12}));
}

TEST(ParsePySpyDump, WhatIsNoDumpIsAnError) {
  EXPECT_THAT(ParsePySpyDump("Error: Failed to find python version", 1),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("JSON list")));
  EXPECT_THAT(ParsePySpyDump(R"([{"thread_name": "x"}])", 1),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("frames")));
  EXPECT_THAT(ParsePySpyDump("[]", 1), IsOkAndHolds(::testing::IsEmpty()));
  // Fields of another type are empty, never a throw.
  auto odd = ParsePySpyDump(R"([{"thread_name": 3, "frames": [{"name": 1, "filename": null, "line": "x"}]}])", 1);
  ASSERT_THAT(odd, IsOk());
  EXPECT_EQ((*odd)[0].frames[0], (StackFrame{"", "", 0}));
}

ProcessStack Proc(int pid, int rank, std::vector<StackFrame> frames) {
  ProcessStack p;
  p.role = "train";
  p.replica_id = rank / 2;
  p.pid = pid;
  p.rank = rank;
  p.threads.push_back({"MainThread", pid, true, std::move(frames)});
  return p;
}

// Three ranks wait in a collective (at different lines), one sleeps in stuck_here, an agent
// monitors, a shell has no Python stack.
std::vector<ProcessStack> Hang() {
  StackFrame main_frame{"main", "train.py", 20};
  std::vector<ProcessStack> ps = {
      Proc(10, 0, {{"all_reduce", "torch/distributed/distributed_c10d.py", 2501}, main_frame}),
      Proc(11, 1, {{"all_reduce", "torch/distributed/distributed_c10d.py", 2501}, main_frame}),
      Proc(12, 2, {{"all_reduce", "torch/distributed/distributed_c10d.py", 2502}, main_frame}),
      Proc(13, 3, {{"stuck_here", "train.py", 7}, main_frame}),
  };
  ProcessStack shell;
  shell.role = "train";
  shell.pid = 9;
  shell.command = "sh -c torchrun";
  shell.error = "not a Python process";
  ps.push_back(shell);
  return ps;
}

TEST(GroupStacks, AlikeStacksGroupLargestFirstLinesAside) {
  auto groups = GroupStacks(Hang());
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_THAT(groups[0].members, ElementsAre(0, 1, 2));
  EXPECT_EQ(groups[0].frames.front().function, "all_reduce");
  EXPECT_THAT(groups[1].members, ElementsAre(3));
  EXPECT_EQ(groups[1].frames.front().function, "stuck_here");
}

TEST(FormatStackGroups, EachGroupHeadedByItsCountAndInnermostFrame) {
  std::string out = FormatStackGroups(Hang());
  EXPECT_THAT(out, HasSubstr("3 processes in all_reduce (torch/distributed/distributed_c10d.py:2501)\n"
                             "  train/0 pid 10 rank 0\n"));
  EXPECT_THAT(out, HasSubstr("1 process in stuck_here (train.py:7)\n  train/1 pid 13 rank 3\n"));
  EXPECT_THAT(out, HasSubstr("no stack: train/0 pid 9 (sh -c torchrun): not a Python process"));
  EXPECT_LT(out.find("3 processes"), out.find("1 process in"));
}

TEST(StacksToJson, GroupsAndProcessesAsData) {
  auto j = nlohmann::json::parse(StacksToJson(Hang()));
  ASSERT_EQ(j["groups"].size(), 2u);
  EXPECT_EQ(j["groups"][0]["count"], 3);
  EXPECT_EQ(j["groups"][1]["innermost"]["function"], "stuck_here");
  EXPECT_EQ(j["groups"][1]["members"], nlohmann::json({3}));
  EXPECT_EQ(j["processes"][3]["rank"], 3);
  EXPECT_EQ(j["processes"][4]["error"], "not a Python process");
  EXPECT_TRUE(j["processes"][0]["error"].is_null());
}

}  // namespace
}  // namespace torchx::schedulers
