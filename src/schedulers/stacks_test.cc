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

// What `py-spy dump --subprocesses` prints as text (Ray's traceback endpoint): a command line that
// runs over several lines, a parent's section, native frames.
constexpr const char* kTextDump =
    "Process 634: /usr/bin/python3 -c \n"
    "import time\n"
    "stuck_here()\n"
    "\n"
    "Python v3.11.7 (/usr/bin/python3.11)\n"
    "\n"
    "Thread 634 (idle): \"MainThread\"\n"
    "    clock_nanosleep (libc.so.6)\n"
    "    stuck_here (<string>:4)\n"
    "    <module> (<string>:7)\n"
    "Thread 676 (active): \"worker-x\"\n"
    "    Thread.run (threading.py:982)\n"
    "\n"
    "--------------------------------------------------------------------------------\n"
    "Process 677: /usr/bin/python3 train.py\n"
    "Python v3.11.7 (/usr/bin/python3.11)\n"
    "Parent Process 634: /usr/bin/python3 -c \n"
    "import time\n"
    "\n"
    "Thread 0x7F2A (idle): \"MainThread\"\n"
    "    all_reduce (torch/distributed/distributed_c10d.py:2501)\n"
    "    <module> (train.py:9)\n";

TEST(ParsePySpyText, EachProcessWithItsCommandAndThreads) {
  auto procs_or = ParsePySpyText(kTextDump);
  ASSERT_THAT(procs_or, IsOk());
  auto& procs = *procs_or;
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0].pid, 634);
  EXPECT_EQ(procs[0].command, "/usr/bin/python3 -c import time stuck_here()");
  ASSERT_EQ(procs[0].threads.size(), 2u);
  EXPECT_TRUE(procs[0].threads[0].main);
  EXPECT_FALSE(procs[0].threads[1].main);
  EXPECT_EQ(procs[0].threads[1].name, "worker-x");
  EXPECT_THAT(procs[0].threads[0].frames,
              ElementsAre(StackFrame{"clock_nanosleep", "libc.so.6", 0}, StackFrame{"stuck_here", "<string>", 4},
                          StackFrame{"<module>", "<string>", 7}));
  EXPECT_EQ(procs[1].pid, 677);
  EXPECT_EQ(procs[1].command, "/usr/bin/python3 train.py");
  ASSERT_EQ(procs[1].threads.size(), 1u);
  EXPECT_TRUE(procs[1].threads[0].main);  // named MainThread; its id is no OS id
  EXPECT_EQ(procs[1].threads[0].frames.front(),
            (StackFrame{"all_reduce", "torch/distributed/distributed_c10d.py", 2501}));
}

TEST(ParsePySpyText, WhatIsNoDumpIsAnError) {
  EXPECT_THAT(ParsePySpyText("Error: Failed to find python version from target process"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("Process")));
  EXPECT_THAT(ParsePySpyText(""), StatusIs(StatusCode::kInvalidArgument, HasSubstr("py-spy")));
}

TEST(ProcessStacksFromJson, ReadsBackWhatStacksToJsonWrote) {
  auto back_or = ProcessStacksFromJson(StacksToJson(Hang()));
  ASSERT_THAT(back_or, IsOk());
  auto& back = *back_or;
  auto hang = Hang();
  ASSERT_EQ(back.size(), hang.size());
  for (size_t i = 0; i < hang.size(); ++i) {
    EXPECT_EQ(back[i].pid, hang[i].pid);
    EXPECT_EQ(back[i].role, hang[i].role);
    EXPECT_EQ(back[i].rank, hang[i].rank);
    EXPECT_EQ(back[i].error, hang[i].error);
    ASSERT_EQ(back[i].threads.size(), hang[i].threads.size());
    for (size_t t = 0; t < hang[i].threads.size(); ++t) {
      EXPECT_EQ(back[i].threads[t].frames, hang[i].threads[t].frames);
      EXPECT_EQ(back[i].threads[t].main, hang[i].threads[t].main);
    }
  }
  EXPECT_THAT(ProcessStacksFromJson("[1]"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("processes")));
  EXPECT_THAT(ProcessStacksFromJson(R"({"processes": [{"threads": [3]}]})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("thread")));
}

}  // namespace
}  // namespace torchx::schedulers
