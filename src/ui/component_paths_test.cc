#include "ui/component_paths.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::ui {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(NamesComponentFile, PathsAndFilesNotNamesOrModules) {
  EXPECT_TRUE(NamesComponentFile("./train.py:main"));
  EXPECT_TRUE(NamesComponentFile("train.py:main"));
  EXPECT_TRUE(NamesComponentFile("/etc/x:y"));
  EXPECT_TRUE(NamesComponentFile("app.yaml"));
  EXPECT_TRUE(NamesComponentFile("dir/app.json"));
  EXPECT_FALSE(NamesComponentFile("dist.ddp"));
  EXPECT_FALSE(NamesComponentFile("utils.echo"));
  EXPECT_FALSE(NamesComponentFile("my_pkg.components:trainer"));  // an importable module
  EXPECT_TRUE(LoadsComponentCode("my_pkg.components:trainer"));   // which runs, and may be ./my_pkg
  EXPECT_TRUE(LoadsComponentCode("./train.py:main"));
  EXPECT_FALSE(LoadsComponentCode("dist.ddp"));
}

class CheckComponentPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("torchx-component-paths-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "work" / "sub");
    fs::create_directories(root_ / "elsewhere");
    std::ofstream(root_ / "work" / "sub" / "train.py") << "def main(): pass\n";
    std::ofstream(root_ / "elsewhere" / "evil.py") << "import os\n";
    fs::create_symlink(root_ / "elsewhere", root_ / "work" / "escape");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(CheckComponentPathTest, InsideTheRootsOnlyWithSymlinksFollowed) {
  std::vector<fs::path> roots = {root_ / "work"};
  EXPECT_THAT(CheckComponentPath((root_ / "work/sub/train.py").string() + ":main", roots), IsOk());
  EXPECT_THAT(CheckComponentPath((root_ / "work/sub/../sub/train.py").string() + ":main", roots), IsOk());
  EXPECT_THAT(CheckComponentPath("dist.ddp", roots), IsOk());
  EXPECT_THAT(CheckComponentPath("pkg.mod:fn", roots), IsOk());
  EXPECT_THAT(CheckComponentPath((root_ / "elsewhere/evil.py").string() + ":f", roots),
              StatusIs(StatusCode::kPermissionDenied, AllOf(HasSubstr("evil.py"), HasSubstr("--component_dir"))));
  EXPECT_THAT(CheckComponentPath((root_ / "work/../elsewhere/evil.py").string() + ":f", roots),
              StatusIs(StatusCode::kPermissionDenied, HasSubstr("outside")));
  EXPECT_THAT(CheckComponentPath((root_ / "work/escape/evil.py").string() + ":f", roots),
              StatusIs(StatusCode::kPermissionDenied, HasSubstr("outside")));  // a link out of the root
  EXPECT_THAT(CheckComponentPath((root_ / "workshop/x.py").string() + ":f", roots),
              StatusIs(StatusCode::kPermissionDenied, HasSubstr("outside")));  // a sibling sharing the root's prefix
  roots.push_back(root_ / "elsewhere");
  EXPECT_THAT(CheckComponentPath((root_ / "elsewhere/evil.py").string() + ":f", roots), IsOk());
}

TEST_F(CheckComponentPathTest, APathWithAColonIsCheckedAsTheWholeFileTheFinderLoads) {
  // `work/ok:/../../elsewhere/app.yaml` is a file outside (the finder loads a whole name that is a
  // file), not `work/ok` (inside) with a function named after the rest.
  fs::create_directories(root_ / "work" / "ok:");
  std::ofstream(root_ / "elsewhere" / "app.yaml") << "name: x\n";
  std::vector<fs::path> roots = {root_ / "work"};
  std::string sneaky = (root_ / "work" / "ok:").string() + "/../../elsewhere/app.yaml";
  ASSERT_TRUE(fs::is_regular_file(sneaky));
  EXPECT_THAT(CheckComponentPath(sneaky, roots), StatusIs(StatusCode::kPermissionDenied, HasSubstr("outside")));
  std::ofstream(root_ / "work" / "ok:" / "app.yaml") << "name: x\n";
  EXPECT_THAT(CheckComponentPath((root_ / "work" / "ok:" / "app.yaml").string(), roots), IsOk());
}

}  // namespace
}  // namespace torchx::ui
