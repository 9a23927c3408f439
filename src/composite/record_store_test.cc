// The record store: a change to one child writes a line to the journal, not the record; the
// journal is folded into a new base once it outgrows it; what a writer left half-written, a
// rewrite interrupted between its two files, and a record written whole by an earlier version all
// read as the record; two stores (two processes) see each other's writes.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "composite/test_ring.h"
#include "core/file_text.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::composite {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Slurp(const fs::path& p) {
  auto text = internal::ReadInputFile(p.string(), "record");
  return text ? *text : std::string();
}

ino_t InodeOf(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

class RecordStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_THAT(store_.Create(MakeRing(100)), IsOk()); }
  fs::path Base() const { return fs::path(dir_.path()) / "ring" / "ring-1.json"; }
  fs::path Journal() const { return fs::path(dir_.path()) / "ring" / "ring-1.journal"; }
  Ring Read(RingStore& store) {
    auto r = store.Get("ring-1");
    EXPECT_THAT(r, IsOk());
    return r && *r ? **r : Ring{};
  }
  Status SetMsg(RingStore& store, size_t link, const std::string& msg) {
    return store
        .Update("ring-1",
                [&](Ring& r) {
                  r.links.Mut(link).msg = msg;
                  return OkStatus();
                })
        .status();
  }

  testing::ScopedTempDir dir_;
  RingStore store_{dir_.path() + "/ring", "ring"};
};

TEST_F(RecordStoreTest, AChildsChangeIsOneJournalLineAndTheBaseStays) {
  ino_t base = InodeOf(Base());
  std::string before = Slurp(Base());
  ASSERT_THAT(SetMsg(store_, 7, "seven"), IsOk());
  EXPECT_EQ(InodeOf(Base()), base);
  EXPECT_EQ(Slurp(Base()), before);
  std::string journal = Slurp(Journal());
  EXPECT_THAT(journal, StartsWith("torchx-journal 2 0\nc 7 {"));
  EXPECT_EQ(std::count(journal.begin(), journal.end(), '\n'), 3);  // frame, the child, the group's end
  EXPECT_EQ(Read(store_).links[7].msg, "seven");
  RingStore other(dir_.path() + "/ring", "ring");  // another process reads it the same
  EXPECT_EQ(Read(other).links[7].msg, "seven");
  // Nothing changed: nothing written.
  ASSERT_THAT(store_.Update("ring-1", [](Ring&) { return OkStatus(); }).status(), IsOk());
  EXPECT_EQ(Slurp(Journal()), journal);
  // A header change is its own line; a dropped child is said so.
  ASSERT_THAT(store_
                  .Update("ring-1",
                          [](Ring& r) {
                            r.msg = "note";
                            r.links.resize(99);
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  Ring r = Read(other);
  EXPECT_EQ(r.msg, "note");
  EXPECT_EQ(r.links.size(), 99u);
}

TEST_F(RecordStoreTest, TheJournalIsFoldedIntoANewBaseOnceItOutgrowsIt) {
  std::string msg(2000, 'x');
  for (int i = 0; i < 60; ++i) ASSERT_THAT(SetMsg(store_, static_cast<size_t>(i), msg + std::to_string(i)), IsOk());
  std::string base = Slurp(Base());
  EXPECT_THAT(base, StartsWith("torchx-record 2 1 100\n"));  // the next generation
  EXPECT_LE(fs::file_size(Journal()), fs::file_size(Base()));
  RingStore other(dir_.path() + "/ring", "ring");
  Ring r = Read(other);
  for (int i = 0; i < 60; ++i) EXPECT_EQ(r.links[static_cast<size_t>(i)].msg, msg + std::to_string(i));
  EXPECT_EQ(r.links[60].msg, "");
}

TEST_F(RecordStoreTest, AGroupAWriterDidNotFinishIsNoPartOfTheRecordAndIsRewrittenAway) {
  ASSERT_THAT(SetMsg(store_, 1, "one"), IsOk());
  {
    std::ofstream j(Journal(), std::ios::app);
    j << "c 2 {\"phase\":\"done\",\"handle\":\"\",\"state\":\"FAILED\",\"msg\":\"torn\"}\nc 3 {\"pha";
  }
  RingStore other(dir_.path() + "/ring", "ring");
  Ring r = Read(other);
  EXPECT_EQ(r.links[1].msg, "one");
  EXPECT_EQ(r.links[2].msg, "");
  // Not cut off in place (a reader may be reading there): the record is rewritten.
  ASSERT_THAT(SetMsg(other, 4, "four"), IsOk());
  EXPECT_THAT(Slurp(Base()), StartsWith("torchx-record 2 1 100\n"));
  r = Read(store_);
  EXPECT_EQ(r.links[2].msg, "");
  EXPECT_EQ(r.links[4].msg, "four");
  EXPECT_EQ(Slurp(Journal()).find("torn"), std::string::npos);
}

TEST_F(RecordStoreTest, JunkAfterTheLastClosedGroupIsNotTheRecordsNorAnError) {
  // What a power loss can leave of appends that were not synced.
  ASSERT_THAT(SetMsg(store_, 1, "one"), IsOk());
  {
    std::ofstream j(Journal(), std::ios::app | std::ios::binary);
    j << std::string(5, '\0') << "\n.\n";
  }
  RingStore other(dir_.path() + "/ring", "ring");
  EXPECT_EQ(Read(other).links[1].msg, "one");
  ASSERT_THAT(SetMsg(other, 2, "two"), IsOk());
  Ring r = Read(store_);
  EXPECT_EQ(r.links[1].msg, "one");
  EXPECT_EQ(r.links[2].msg, "two");
}

TEST_F(RecordStoreTest, TwoStoresSeeEachOthersWrites) {
  RingStore other(dir_.path() + "/ring", "ring");
  ASSERT_THAT(SetMsg(store_, 1, "a"), IsOk());
  ASSERT_THAT(SetMsg(other, 2, "b"), IsOk());   // reads the record: its copy is of no version yet
  ASSERT_THAT(SetMsg(store_, 3, "c"), IsOk());  // its copy is older than the files: read again
  Ring r = Read(other);
  EXPECT_EQ(r.links[1].msg, "a");
  EXPECT_EQ(r.links[2].msg, "b");
  EXPECT_EQ(r.links[3].msg, "c");
}

TEST_F(RecordStoreTest, AJournalOfAnOlderGenerationIsSkippedAndReplaced) {
  // A rewrite that stopped between its base and its journal: the base holds everything, and the
  // journal left is the generation before it.
  ASSERT_THAT(SetMsg(store_, 1, "kept"), IsOk());
  std::string msg(4000, 'y');
  for (int i = 0; i < 40; ++i) ASSERT_THAT(SetMsg(store_, 5, msg + std::to_string(i)), IsOk());
  std::string frame = Slurp(Base()).substr(0, Slurp(Base()).find('\n'));
  ASSERT_THAT(frame, StartsWith("torchx-record 2 "));
  int generation = std::stoi(frame.substr(16));
  ASSERT_GE(generation, 1);
  std::ofstream(Journal(), std::ios::trunc)
      << "torchx-journal 2 " << generation - 1
      << "\nc 1 {\"phase\":\"waiting\",\"handle\":\"\",\"state\":\"UNSUBMITTED\",\"msg\":\"stale\"}\n.\n";
  RingStore other(dir_.path() + "/ring", "ring");
  EXPECT_EQ(Read(other).links[1].msg, "kept");
  ASSERT_THAT(SetMsg(other, 2, "after"), IsOk());
  EXPECT_THAT(Slurp(Journal()), StartsWith("torchx-journal 2 " + std::to_string(generation) + "\n"));
  Ring r = Read(store_);
  EXPECT_EQ(r.links[1].msg, "kept");
  EXPECT_EQ(r.links[2].msg, "after");
}

TEST_F(RecordStoreTest, ARecordWrittenWholeReadsAndIsRewrittenInLinesByItsFirstUpdate) {
  Ring whole;
  whole.id = "old-1";
  whole.name = "old";
  whole.links.resize(2);
  whole.links.Mut(1).msg = "from before";
  fs::path path = fs::path(dir_.path()) / "ring" / "old-1.json";
  std::ofstream(path) << RingToJson(whole);
  auto r = store_.Get("old-1");
  ASSERT_THAT(r, IsOk());
  ASSERT_TRUE(*r);
  EXPECT_EQ((*r)->links[1].msg, "from before");
  ASSERT_THAT(store_
                  .Update("old-1",
                          [](Ring& x) {
                            x.links.Mut(0).msg = "now";
                            return OkStatus();
                          })
                  .status(),
              IsOk());
  EXPECT_THAT(Slurp(path), StartsWith("torchx-record 2 1 2\n"));
  RingStore other(dir_.path() + "/ring", "ring");
  auto back = other.Get("old-1");
  ASSERT_THAT(back, IsOk());
  EXPECT_EQ((*back)->links[0].msg, "now");
  EXPECT_EQ((*back)->links[1].msg, "from before");
  // Removed with its journal.
  ASSERT_THAT(store_.Remove("old-1"), IsOk());
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(fs::path(dir_.path()) / "ring" / "old-1.journal"));
}

TEST_F(RecordStoreTest, ABaseCutShortIsAnErrorNamingIt) {
  std::string base = Slurp(Base());
  std::ofstream(Base(), std::ios::trunc) << base.substr(0, base.size() / 2);
  RingStore other(dir_.path() + "/ring", "ring");
  EXPECT_THAT(other.Get("ring-1").status(), StatusIs(StatusCode::kInternal, HasSubstr("not a whole record")));
}

}  // namespace
}  // namespace torchx::composite
