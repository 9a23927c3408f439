// The copy-on-write child list: a copy shares every child, an edit copies only the child edited
// and only while another list shares it, and reading is a vector's. Then the store over it: an
// update copies no child it did not edit, and an edit that fails leaves the store's copy as it was.
#include "composite/child_list.h"

#include <algorithm>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "composite/test_ring.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::composite {
namespace {

struct Item {
  int n = 0;
  std::string s;
  bool operator==(const Item&) const = default;
};

TEST(ChildListTest, ACopySharesEveryChildUntilOneIsEdited) {
  ChildList<Item> a{{1, "one"}, {2, "two"}, {3, "three"}};
  ChildList<Item> b = a;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(b.SameChild(i, a, i));
  b.Mut(1).s = "TWO";
  EXPECT_FALSE(b.SameChild(1, a, 1));
  EXPECT_TRUE(b.SameChild(0, a, 0));
  EXPECT_TRUE(b.SameChild(2, a, 2));
  EXPECT_EQ(a[1].s, "two");  // the other copy never sees the edit
  EXPECT_EQ(b[1].s, "TWO");
  EXPECT_NE(a, b);
}

TEST(ChildListTest, AChildNoOtherListSharesIsEditedInPlace) {
  ChildList<Item> a{{1, "one"}};
  const Item* before = &a[0];
  a.Mut(0).n = 5;
  EXPECT_EQ(&a[0], before);
  {
    ChildList<Item> b = a;  // shared while b lives
    a.Mut(0).n = 6;
    EXPECT_NE(&a[0], before);
    EXPECT_EQ(b[0].n, 5);
  }
  const Item* now = &a[0];
  a.Mut(0).n = 7;  // b is gone: no copy
  EXPECT_EQ(&a[0], now);
}

TEST(ChildListTest, EqualListsCompareEqualWhetherOrNotTheyShare) {
  ChildList<Item> a{{1, "x"}, {2, "y"}};
  ChildList<Item> b{{1, "x"}, {2, "y"}};
  EXPECT_FALSE(a.SameChild(0, b, 0));
  EXPECT_EQ(a, b);
  b.push_back({3, "z"});
  EXPECT_NE(a, b);
  b.resize(2);
  EXPECT_EQ(a, b);
}

TEST(ChildListTest, ReadsLikeAVector) {
  ChildList<Item> a(std::vector<Item>{{3, "c"}, {1, "a"}, {2, "b"}});
  EXPECT_EQ(std::count_if(a.begin(), a.end(), [](const Item& i) { return i.n > 1; }), 2);
  auto it = std::find_if(a.begin(), a.end(), [](const Item& i) { return i.s == "a"; });
  ASSERT_NE(it, a.end());
  EXPECT_EQ(it - a.begin(), 1);
  EXPECT_EQ(it->n, 1);
  EXPECT_EQ(a.rbegin()->s, "b");
  EXPECT_EQ(a.front().n, 3);
  EXPECT_EQ(a.back().n, 2);
  EXPECT_EQ(a.ToVector(), (std::vector<Item>{{3, "c"}, {1, "a"}, {2, "b"}}));
  a.emplace_back(Item{4, "d"});
  a.MutBack().s = "D";
  EXPECT_EQ(a.at(3).s, "D");
  EXPECT_THROW((void)a.at(4), std::out_of_range);
}

class ChildListStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_THAT(store_.Create(MakeRing(1000)), IsOk()); }
  testing::ScopedTempDir dir_;
  RingStore store_{dir_.path() + "/ring", "ring"};
};

TEST_F(ChildListStoreTest, AnUpdateCopiesOnlyTheChildItEdits) {
  auto first = store_.Update("ring-1", [](Ring&) { return OkStatus(); });  // the store reads it once
  ASSERT_THAT(first, IsOk());
  auto second = store_.Update("ring-1", [](Ring& r) {
    r.links.Mut(7).msg = "seven";
    return OkStatus();
  });
  ASSERT_THAT(second, IsOk());
  size_t shared = 0;
  for (size_t i = 0; i < second->links.size(); ++i) shared += second->links.SameChild(i, first->links, i);
  EXPECT_EQ(shared, 999u);  // every link but the one edited is the object the first answer holds
  EXPECT_FALSE(second->links.SameChild(7, first->links, 7));
  EXPECT_EQ(first->links[7].msg, "");  // an answer already given never changes
  auto read = store_.Get("ring-1");
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ((**read).links[7].msg, "seven");
  EXPECT_TRUE((**read).links.SameChild(7, second->links, 7));  // the store's copy, unread
}

TEST_F(ChildListStoreTest, AFailedEditLeavesTheStoresCopyAsItWas) {
  ASSERT_THAT(store_.Update("ring-1", [](Ring&) { return OkStatus(); }), IsOk());
  auto failed = store_.Update("ring-1", [](Ring& r) {
    r.links.Mut(3).msg = "half-made";
    return InvalidArgumentError("no");
  });
  EXPECT_THAT(failed, StatusIs(StatusCode::kInvalidArgument, "no"));
  auto read = store_.Get("ring-1");
  ASSERT_THAT(read, IsOk());
  EXPECT_EQ((**read).links[3].msg, "");
}

}  // namespace
}  // namespace torchx::composite
