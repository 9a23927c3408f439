#include "core/file_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace torchx::internal {
namespace {

using ::testing::HasSubstr;

TEST(ReadInputFile, ReadsWholeFilesUpToTheLimitAndNamesWhatIsRefused) {
  testing::ScopedTempDir dir;
  dir.Write("small.yaml", "steps: []\n");
  EXPECT_THAT(ReadInputFile(dir.path() + "/small.yaml", "pipeline file"), IsOkAndHolds(std::string("steps: []\n")));
  dir.Write("big.yaml", std::string(100, 'x'));
  EXPECT_THAT(ReadInputFile(dir.path() + "/big.yaml", "sweep file", 100), IsOk());
  EXPECT_THAT(ReadInputFile(dir.path() + "/big.yaml", "sweep file", 99),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("sweep file " + dir.path() + "/big.yaml: larger than")));
  EXPECT_THAT(ReadInputFile(dir.path() + "/missing.yaml", "spec file"),
              StatusIs(StatusCode::kNotFound, HasSubstr("spec file " + dir.path() + "/missing.yaml: cannot be read")));
  // A device with no end is refused at the limit, not read until memory runs out.
  EXPECT_THAT(ReadInputFile("/dev/zero", "spec file", 1 << 20),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("larger than 1 MiB")));
}

}  // namespace
}  // namespace torchx::internal
