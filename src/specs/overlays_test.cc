#include "torchx/specs/overlays.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/status_matchers.h"

namespace torchx::specs::overlays {
namespace {

using Json = nlohmann::ordered_json;
using ::testing::HasSubstr;

Json Applied(Json base, const Json& overlay, bool resolve = true) {
  Status s = Apply(base, overlay, resolve);
  EXPECT_TRUE(s.ok()) << s.message();
  return base;
}

TEST(Overlays, DictsMergeListsAppendPrimitivesReplace) {
  Json base = {{"spec", {{"cpu", "500m"}}}, {"tags", {"prod"}}, {"replicas", 1}};
  EXPECT_EQ(Applied(base, {{"spec", {{"memory", "1Gi"}}}, {"tags", {"gpu"}}, {"replicas", "3"}}),
            Json({{"spec", {{"cpu", "500m"}, {"memory", "1Gi"}}}, {"tags", {"prod", "gpu"}}, {"replicas", "3"}}));
}

TEST(Overlays, PutReplacesDelRemovesJoinMergesByKey) {
  Json base = {{"containers", Json::array({{{"name", "main"}, {"image", "v1"}}, {{"name", "old"}}})}, {"drop", 1}};
  EXPECT_EQ(Applied(base, {{Put("containers"), Json::array({{{"name", "only"}}})}}),
            Json({{"drop", 1}, {"containers", Json::array({{{"name", "only"}}})}}));  // re-added last, as in Python
  EXPECT_EQ(Applied(base, {{Del("drop"), nullptr}}).contains("drop"), false);
  Json joined = Applied(
      base, {{Join("containers", "name"), Json::array({{{"name", "main"}, {"memory", "1Gi"}}, {{"name", "side"}}})}});
  EXPECT_EQ(
      joined["containers"],
      Json::array({{{"name", "main"}, {"image", "v1"}, {"memory", "1Gi"}}, {{"name", "old"}}, {{"name", "side"}}}));
}

TEST(Overlays, JoinMergesIntoTheLastOfDuplicateKeysAndMarkersStrip) {
  Json base = {{"c", Json::array({{{"name", "x"}, {"v", 1}}, {{"name", "x"}, {"v", 2}}})}};
  Json joined = Applied(base, {{Join("c", "name"), Json::array({{{"name", "x"}, {"w", 3}}})}});
  EXPECT_EQ(joined["c"][0], Json({{"name", "x"}, {"v", 1}}));
  EXPECT_EQ(joined["c"][1], Json({{"name", "x"}, {"v", 2}, {"w", 3}}));
  Json nested = {{"a", {{"b", {{"__torchx_tuple__", Json::array({1})}}}}}};
  StripTupleMarkers(nested);
  EXPECT_EQ(nested, Json({{"a", {{"b", Json::array({1})}}}}));
}

TEST(Overlays, AccumulationKeepsOperatorsLastOneWins) {
  Json stored = Json::object();
  ASSERT_THAT(Apply(stored, {{"tolerations", Json::array({1})}}, false), IsOk());
  ASSERT_THAT(Apply(stored, {{Put("tolerations"), Json::array({2})}}, false), IsOk());
  EXPECT_EQ(stored, Json({{Put("tolerations"), Json::array({2})}}));
  EXPECT_EQ(Applied({{"tolerations", Json::array({0})}}, stored), Json({{"tolerations", Json::array({2})}}));
}

TEST(Overlays, TuplesReplaceListsAndBecomeListsForNewKeys) {
  Json tuple = {{"__torchx_tuple__", Json::array({"x"})}};
  EXPECT_EQ(Applied({{"a", Json::array({"old"})}}, {{"a", tuple}}), Json({{"a", Json::array({"x"})}}));
  EXPECT_EQ(Applied(Json::object(), {{"a", tuple}}), Json({{"a", Json::array({"x"})}}));
}

TEST(Overlays, ErrorsNameTheFieldInPythonTerms) {
  Json base = {{"spec", Json::array()}, {"items", "x"}};
  EXPECT_THAT(Apply(base, {{"spec", "str"}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("type mismatch for attr: `spec`. list != str")));
  EXPECT_THAT(Apply(base, {{"__join__:spec", Json::array()}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("malformed JOIN key")));
  EXPECT_THAT(Apply(base, {{Join("items", "name"), Json::array({{{"name", "a"}}})}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("JOIN requires base[`items`] to be a list, got str")));
  EXPECT_THAT(Apply(base, {{Join("spec", "name"), Json::array({1})}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("contains non-dict items")));
}

TEST(Overlays, GetReadsNestedAndLegacyFlatForms) {
  Json nested = {{std::string(kFormatKey), true}, {"V1Pod", {{"spec", Json::object()}}}};
  EXPECT_EQ(Get(nested, "V1Pod"), Json({{"spec", Json::object()}}));
  EXPECT_EQ(Get(nested, "V1Job"), Json::object());
  Json flat = {{"spec", {{"nodeSelector", {{"a", "b"}}}}}};
  EXPECT_EQ(Get(flat, "V1Pod"), flat);
  EXPECT_EQ(Get(flat, "V1Pod", /*flat_fallback=*/false), Json::object());
  EXPECT_EQ(Get(Json({{"A", Json::object()}, {"B", Json::object()}}), "V1Pod"), Json::object());
  EXPECT_EQ(Get(Json("file:///x"), "V1Pod"), Json::object());
}

TEST(Overlays, ValidateRefusesBlocklistedFieldsThroughOperators) {
  EXPECT_THAT(Validate({{Put("env"), Json::object()}, {"nodeSelector", Json::object()}}, {"env", "command"}, "PodSpec"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("`PodSpec.env`")));
  EXPECT_THAT(Validate({{"nodeSelector", Json::object()}}, {"env"}, "PodSpec"), IsOk());
}

}  // namespace
}  // namespace torchx::specs::overlays
