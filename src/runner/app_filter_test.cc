#include "torchx/runner/app_filter.h"

#include <gtest/gtest.h>

namespace torchx::runner {
namespace {

using specs::AppState;

TEST(AppFilter, StatesNameAndSinceEachNarrowAndAnUnknownTimeIsKept) {
  schedulers::ListAppResponse train{"train-x1", AppState::kFailed, "", "Train", 100.0, 0};
  schedulers::ListAppResponse untimed{"echo-y2", AppState::kRunning, "", "echo", std::nullopt, 0};
  struct Case {
    AppFilter filter;
    bool train, untimed;
  };
  const Case cases[] = {
      {{}, true, true},
      {{{AppState::kFailed}, "", std::nullopt}, true, false},
      {{{AppState::kSucceeded, AppState::kRunning}, "", std::nullopt}, false, true},
      {{{}, "TRAIN", std::nullopt}, true, false},  // any case
      {{{}, "x1", std::nullopt}, true, false},     // the id too
      {{{}, "", 100.0}, true, true},               // at the time counts; no time: kept
      {{{}, "", 100.5}, false, true},
      {{{AppState::kFailed}, "train", 50.0}, true, false},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(Matches(cases[i].filter, train), cases[i].train);
    EXPECT_EQ(Matches(cases[i].filter, untimed), cases[i].untimed);
  }
}

TEST(AppFilter, MemberHandlesAreTheSubmittedMembersOfEveryListedComposite) {
  schedulers::ListAppResponse pipeline;
  pipeline.app_handle = "pipeline://s/flow-1";
  schedulers::MemberApp prepare, train, evaluate;
  prepare.app_handle = "local_cwd://s/prepare-1";
  train.app_handle = "slurm://s/12";
  // evaluate is waiting: no handle yet
  pipeline.members = {prepare, train, evaluate};
  schedulers::ListAppResponse plain;
  plain.app_handle = "local_cwd://s/other-1";
  EXPECT_EQ(MemberHandles({plain, pipeline}), (std::set<std::string>{"local_cwd://s/prepare-1", "slurm://s/12"}));
  EXPECT_TRUE(MemberHandles({plain}).empty());
}

}  // namespace
}  // namespace torchx::runner
