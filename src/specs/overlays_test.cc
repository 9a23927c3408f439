#include "torchx/specs/overlays.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/status_matchers.h"

namespace torchx::specs::overlays {
namespace {

using OrderedJson = nlohmann::ordered_json;
using ::testing::HasSubstr;

OrderedJson Applied(OrderedJson base, const OrderedJson& overlay, bool resolve = true) {
  Status s = Apply(base, overlay, resolve);
  EXPECT_TRUE(s.ok()) << s.message();
  return base;
}

TEST(Overlays, DictsMergeListsAppendPrimitivesReplace) {
  OrderedJson base = {{"spec", {{"cpu", "500m"}}}, {"tags", {"prod"}}, {"replicas", 1}};
  EXPECT_EQ(
      Applied(base, {{"spec", {{"memory", "1Gi"}}}, {"tags", {"gpu"}}, {"replicas", "3"}}),
      OrderedJson({{"spec", {{"cpu", "500m"}, {"memory", "1Gi"}}}, {"tags", {"prod", "gpu"}}, {"replicas", "3"}}));
}

TEST(Overlays, PutReplacesDelRemovesJoinMergesByKey) {
  OrderedJson base = {{"containers", OrderedJson::array({{{"name", "main"}, {"image", "v1"}}, {{"name", "old"}}})},
                      {"drop", 1}};
  EXPECT_EQ(Applied(base, {{Put("containers"), OrderedJson::array({{{"name", "only"}}})}}),
            OrderedJson({{"drop", 1},
                         {"containers", OrderedJson::array({{{"name", "only"}}})}}));  // re-added last, as in Python
  EXPECT_EQ(Applied(base, {{Del("drop"), nullptr}}).contains("drop"), false);
  OrderedJson joined = Applied(
      base,
      {{Join("containers", "name"), OrderedJson::array({{{"name", "main"}, {"memory", "1Gi"}}, {{"name", "side"}}})}});
  EXPECT_EQ(joined["containers"],
            OrderedJson::array(
                {{{"name", "main"}, {"image", "v1"}, {"memory", "1Gi"}}, {{"name", "old"}}, {{"name", "side"}}}));
}

TEST(Overlays, JoinMergesIntoTheLastOfDuplicateKeysAndMarkersStrip) {
  OrderedJson base = {{"c", OrderedJson::array({{{"name", "x"}, {"v", 1}}, {{"name", "x"}, {"v", 2}}})}};
  OrderedJson joined = Applied(base, {{Join("c", "name"), OrderedJson::array({{{"name", "x"}, {"w", 3}}})}});
  EXPECT_EQ(joined["c"][0], OrderedJson({{"name", "x"}, {"v", 1}}));
  EXPECT_EQ(joined["c"][1], OrderedJson({{"name", "x"}, {"v", 2}, {"w", 3}}));
  OrderedJson nested = {{"a", {{"b", {{"__torchx_tuple__", OrderedJson::array({1})}}}}}};
  StripTupleMarkers(nested);
  EXPECT_EQ(nested, OrderedJson({{"a", {{"b", OrderedJson::array({1})}}}}));
}

TEST(Overlays, AccumulationKeepsOperatorsLastOneWins) {
  OrderedJson stored = OrderedJson::object();
  ASSERT_THAT(Apply(stored, {{"tolerations", OrderedJson::array({1})}}, false), IsOk());
  ASSERT_THAT(Apply(stored, {{Put("tolerations"), OrderedJson::array({2})}}, false), IsOk());
  EXPECT_EQ(stored, OrderedJson({{Put("tolerations"), OrderedJson::array({2})}}));
  EXPECT_EQ(Applied({{"tolerations", OrderedJson::array({0})}}, stored),
            OrderedJson({{"tolerations", OrderedJson::array({2})}}));
}

TEST(Overlays, TuplesReplaceListsAndBecomeListsForNewKeys) {
  OrderedJson tuple = {{"__torchx_tuple__", OrderedJson::array({"x"})}};
  EXPECT_EQ(Applied({{"a", OrderedJson::array({"old"})}}, {{"a", tuple}}),
            OrderedJson({{"a", OrderedJson::array({"x"})}}));
  EXPECT_EQ(Applied(OrderedJson::object(), {{"a", tuple}}), OrderedJson({{"a", OrderedJson::array({"x"})}}));
}

TEST(Overlays, ErrorsNameTheFieldInPythonTerms) {
  OrderedJson base = {{"spec", OrderedJson::array()}, {"items", "x"}};
  EXPECT_THAT(Apply(base, {{"spec", "str"}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("type mismatch for attr: `spec`. list != str")));
  EXPECT_THAT(Apply(base, {{"__join__:spec", OrderedJson::array()}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("malformed JOIN key")));
  EXPECT_THAT(Apply(base, {{Join("items", "name"), OrderedJson::array({{{"name", "a"}}})}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("JOIN requires base[`items`] to be a list, got str")));
  EXPECT_THAT(Apply(base, {{Join("spec", "name"), OrderedJson::array({1})}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("contains non-dict items")));
}

TEST(Overlays, GetReadsNestedAndLegacyFlatForms) {
  OrderedJson nested = {{std::string(kFormatKey), true}, {"V1Pod", {{"spec", OrderedJson::object()}}}};
  EXPECT_EQ(Get(nested, "V1Pod"), OrderedJson({{"spec", OrderedJson::object()}}));
  EXPECT_EQ(Get(nested, "V1Job"), OrderedJson::object());
  OrderedJson flat = {{"spec", {{"nodeSelector", {{"a", "b"}}}}}};
  EXPECT_EQ(Get(flat, "V1Pod"), flat);
  EXPECT_EQ(Get(flat, "V1Pod", /*flat_fallback=*/false), OrderedJson::object());
  EXPECT_EQ(Get(OrderedJson({{"A", OrderedJson::object()}, {"B", OrderedJson::object()}}), "V1Pod"),
            OrderedJson::object());
  EXPECT_EQ(Get(OrderedJson("file:///x"), "V1Pod"), OrderedJson::object());
}

TEST(Overlays, ValidateRefusesBlocklistedFieldsThroughOperators) {
  EXPECT_THAT(Validate({{Put("env"), OrderedJson::object()}, {"nodeSelector", OrderedJson::object()}},
                       {"env", "command"}, "PodSpec"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("`PodSpec.env`")));
  EXPECT_THAT(Validate({{"nodeSelector", OrderedJson::object()}}, {"env"}, "PodSpec"), IsOk());
}

}  // namespace
}  // namespace torchx::specs::overlays
