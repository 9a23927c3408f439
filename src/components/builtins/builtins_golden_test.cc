// Every builtin against TorchX's own output: tests/golden/components/<case>.json are written by
// tools/gen_component_goldens.py from the reference TorchX, for the argv in cases.jsonl.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/component_source.h"
#include "testing/status_matchers.h"
#include "torchx/components/component.h"
#include "torchx/specs/serialize.h"

namespace torchx::components {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

const std::string kGoldenDir = std::string(TORCHX_SOURCE_DIR) + "/tests/golden/components/";

struct Case {
  std::string name;
  std::vector<std::string> argv;
};

std::vector<Case> LoadCases() {
  std::vector<Case> cases;
  std::istringstream lines(ReadFile(kGoldenDir + "cases.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    cases.push_back({j["name"], j["argv"].get<std::vector<std::string>>()});
  }
  return cases;
}

class BuiltinGoldenTest : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() { unsetenv("LOGLEVEL"); }
};

TEST_P(BuiltinGoldenTest, MatchesTorchX) {
  const Case& c = GetParam();
  auto comp = FindComponent(testing::ListComponentSource(), c.argv[0]);
  ASSERT_THAT(comp, IsOk());
  std::vector<std::string> args(c.argv.begin() + 1, c.argv.end());
  auto parsed = ParseComponentArgs((*comp)->spec(), args);
  ASSERT_THAT(parsed, IsOk());
  auto app = BuildAppDef(**comp, *parsed);
  ASSERT_THAT(app, IsOk());

  std::string golden = ReadFile(kGoldenDir + c.name + ".json");
  ASSERT_FALSE(golden.empty()) << "missing golden " << c.name;
  for (size_t pos; (pos = golden.find("@DEFAULT_IMAGE@")) != std::string::npos;) {
    golden.replace(pos, 15, DefaultImage());
  }
  auto expected = specs::AppDefFromJson(golden);
  ASSERT_THAT(expected, IsOk());
  EXPECT_EQ(specs::AppDefToJson(*app), specs::AppDefToJson(*expected)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Components, BuiltinGoldenTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<Case>& p) { return p.param.name; });

}  // namespace
}  // namespace torchx::components
