// The one option decoder, side by side for the three places options are written as text.
#include "torchx/specs/option_value.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::specs {
namespace {

using ::testing::HasSubstr;

constexpr OptionSyntax kArg = OptionSyntax::kComponentArg;
constexpr OptionSyntax kCfg = OptionSyntax::kCfgString;
constexpr OptionSyntax kFile = OptionSyntax::kConfigFile;

Result<CfgVal> D(CfgType t, std::string_view text, OptionSyntax s) { return DecodeOptionValue(t, text, s, "opt"); }

TEST(DecodeOptionValue, ComponentBoolsAreTrueOrFalseOptionBoolsTakeTheIniVocabulary) {
  EXPECT_THAT(D(CfgType::kBool, "TRUE", kArg), IsOkAndHolds(CfgVal(true)));
  EXPECT_THAT(D(CfgType::kBool, "yes", kArg), IsOkAndHolds(CfgVal(false)));  // TorchX: only "true" is true
  for (OptionSyntax s : {kCfg, kFile}) {
    EXPECT_THAT(D(CfgType::kBool, "Yes", s), IsOkAndHolds(CfgVal(true)));
    EXPECT_THAT(D(CfgType::kBool, "0", s), IsOkAndHolds(CfgVal(false)));
    EXPECT_THAT(D(CfgType::kBool, "maybe", s),
                StatusIs(StatusCode::kInvalidArgument,
                         "opt: invalid bool value 'maybe', must be one of [true, false, yes, no, on, off, 1, 0]"));
  }
}

TEST(DecodeOptionValue, NumbersMustParseWholeAndComponentIntsFit32Bits) {
  EXPECT_THAT(D(CfgType::kInt, " 42 ", kCfg), IsOkAndHolds(CfgVal(std::int64_t{42})));
  EXPECT_THAT(D(CfgType::kInt, "5000000000", kCfg), IsOkAndHolds(CfgVal(std::int64_t{5000000000})));
  EXPECT_THAT(D(CfgType::kInt, "5000000000", kArg), StatusIs(StatusCode::kInvalidArgument, HasSubstr("32 bits")));
  EXPECT_THAT(D(CfgType::kInt, "4x", kArg),
              StatusIs(StatusCode::kInvalidArgument, "opt: invalid int value '4x', expected an integer"));
  EXPECT_THAT(D(CfgType::kFloat, "0.5", kFile), IsOkAndHolds(CfgVal(0.5)));
  EXPECT_THAT(D(CfgType::kFloat, "", kCfg), StatusIs(StatusCode::kInvalidArgument, HasSubstr("expected a number")));
}

TEST(DecodeOptionValue, ListsSplitAsEachSourceSpellsThem) {
  EXPECT_THAT(D(CfgType::kListStr, "a, b,,c", kArg), IsOkAndHolds(CfgVal(CfgList{"a", "b", "", "c"})));
  EXPECT_THAT(D(CfgType::kListStr, "a;b,,c", kCfg), IsOkAndHolds(CfgVal(CfgList{"a", "b", "c"})));
  EXPECT_THAT(D(CfgType::kListStr, "a,b;c", kFile), IsOkAndHolds(CfgVal(CfgList{"a,b", "c"})));
}

TEST(DecodeOptionValue, DictsAreKeyEqualsValueOnTheCommandLineAndKeyColonValueInCfg) {
  EXPECT_THAT(D(CfgType::kDictStr, "A=1,B=2", kArg), IsOkAndHolds(CfgVal(CfgDict{{"A", "1"}, {"B", "2"}})));
  EXPECT_THAT(D(CfgType::kDictStr, "a:1;b:2", kCfg), IsOkAndHolds(CfgVal(CfgDict{{"a", "1"}, {"b", "2"}})));
  EXPECT_THAT(D(CfgType::kDictStr, "a:1,b", kFile),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("item 'b' is not of the form key:value")));
}

TEST(DecodeOptionValue, NoneOnlyFromConfigFilesAndErrorsSpeakEachSourcesTypeNames) {
  EXPECT_THAT(D(CfgType::kInt, "None", kFile), IsOkAndHolds(CfgVal{}));
  EXPECT_THAT(D(CfgType::kStr, "None", kCfg), IsOkAndHolds(CfgVal(std::string("None"))));
  EXPECT_THAT(D(CfgType::kDictStr, "x", kCfg),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("invalid typing.Dict[str, str] value 'x'")));
  EXPECT_EQ(CfgTypeShortName(CfgType::kListStr), "list");
}

}  // namespace
}  // namespace torchx::specs
