// metrics.k8s.io's answers read: quantities, times, and a PodMetricsList joined to the app's pods.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>

#include "schedulers/kubernetes/metrics_api.h"
#include "testing/status_matchers.h"

namespace torchx::schedulers::kubernetes {
namespace {

using ::testing::HasSubstr;

TEST(MetricsApi, ParseQuantityReadsEverySuffixKubernetesWrites) {
  struct Case {
    const char* text;
    std::optional<double> value;
  };
  for (const Case& c : std::initializer_list<Case>{{"250m", 0.25},
                                                   {"1", 1},
                                                   {"1.5", 1.5},
                                                   {"123456789n", 0.123456789},
                                                   {"5u", 5e-6},
                                                   {"64Mi", 64.0 * 1048576},
                                                   {"1536Ki", 1536.0 * 1024},
                                                   {"2Gi", 2.0 * 1073741824},
                                                   {"5G", 5e9},
                                                   {"3k", 3000},
                                                   {"1E", 1e18},
                                                   {"12e3", 12000},
                                                   {"1E3", 1000},
                                                   {"129e+6", 129e6},
                                                   {"", std::nullopt},
                                                   {"Mi", std::nullopt},
                                                   {"12x", std::nullopt},
                                                   {"1e", std::nullopt},
                                                   {"e3", std::nullopt},
                                                   {"1.2.3", std::nullopt}}) {
    auto v = ParseQuantity(c.text);
    ASSERT_EQ(v.has_value(), c.value.has_value()) << c.text;
    if (v) EXPECT_DOUBLE_EQ(*v, *c.value) << c.text;
  }
}

TEST(MetricsApi, Rfc3339TimeReadsTheApiServersTimes) {
  EXPECT_EQ(Rfc3339Time("1970-01-02T00:00:01Z"), 86401);
  EXPECT_DOUBLE_EQ(*Rfc3339Time("1970-01-01T00:00:01.5Z"), 1.5);
  EXPECT_FALSE(Rfc3339Time("yesterday").has_value());
  EXPECT_FALSE(Rfc3339Time("").has_value());
}

// Three pods of one app (trainer 0 and 1, and a ps), as the API server lists them (by name), and
// the metrics of the two that run.
constexpr const char* kPods = R"({"items": [
  {"metadata": {"name": "app-ps-0-0", "labels": {"torchx.pytorch.org/role-name": "ps",
                                                  "torchx.pytorch.org/replica-id": "0"}},
   "spec": {"nodeName": "node-b"}},
  {"metadata": {"name": "app-trainer-1-0", "labels": {"torchx.pytorch.org/role-name": "trainer",
                                                       "torchx.pytorch.org/replica-id": "1"}}},
  {"metadata": {"name": "app-trainer-0-0", "labels": {"torchx.pytorch.org/role-name": "trainer",
                                                       "torchx.pytorch.org/replica-id": "0"}},
   "spec": {"nodeName": "node-a"}},
  {"metadata": {"name": "not-ours", "labels": {}}}]})";
constexpr const char* kMetrics = R"({"kind": "PodMetricsList", "items": [
  {"metadata": {"name": "app-trainer-0-0"}, "timestamp": "1970-01-01T00:01:40Z", "window": "15s",
   "containers": [{"name": "trainer-0", "usage": {"cpu": "1500m", "memory": "64Mi"}},
                  {"name": "sidecar", "usage": {"cpu": "250000000n", "memory": "1Mi"}}]},
  {"metadata": {"name": "app-ps-0-0"}, "timestamp": "1970-01-01T00:01:41Z", "window": "15s",
   "containers": [{"name": "ps-0", "usage": {"cpu": "oops"}}]}]})";

TEST(MetricsApi, EachReplicaGetsItsPodsContainersSummed) {
  auto u = UsageFromPodMetrics(kPods, kMetrics);
  ASSERT_THAT(u, IsOk());
  ASSERT_EQ(u->replicas.size(), 3u);
  // The pod list's first role first, then each role's replicas in order.
  EXPECT_EQ(u->replicas[0].role, "ps");
  EXPECT_EQ(u->replicas[0].host, "node-b");
  ASSERT_EQ(u->replicas[0].samples.size(), 1u);
  EXPECT_FALSE(u->replicas[0].samples[0].cpu_percent.has_value());  // an unreadable quantity: no figure
  EXPECT_EQ(u->replicas[1].role, "trainer");
  EXPECT_EQ(u->replicas[1].replica_id, 0);
  EXPECT_EQ(u->replicas[1].host, "node-a");
  ASSERT_EQ(u->replicas[1].samples.size(), 1u);
  const UsageSample& s = u->replicas[1].samples[0];
  EXPECT_EQ(s.time, 100);
  EXPECT_DOUBLE_EQ(*s.cpu_percent, 175);
  EXPECT_EQ(s.rss_bytes, 65 << 20);
  EXPECT_EQ(u->replicas[2].replica_id, 1);
  EXPECT_EQ(u->replicas[2].host, "app-trainer-1-0");  // not scheduled to a node: the pod's name
  EXPECT_TRUE(u->replicas[2].samples.empty());        // not in the metrics: not running
}

TEST(MetricsApi, AnswersOfAnotherShapeAreNamed) {
  EXPECT_THAT(UsageFromPodMetrics("[]", kMetrics), StatusIs(StatusCode::kInvalidArgument, HasSubstr("PodList")));
  EXPECT_THAT(UsageFromPodMetrics(kPods, "{}"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("PodMetricsList")));
  auto odd = UsageFromPodMetrics(kPods, R"({"items": [{"metadata": {"name": "app-ps-0-0"}, "containers": 3}, 7]})");
  ASSERT_THAT(odd, IsOk());
  ASSERT_EQ(odd->replicas[0].samples.size(), 1u);
  EXPECT_FALSE(odd->replicas[0].samples[0].rss_bytes.has_value());
}

}  // namespace
}  // namespace torchx::schedulers::kubernetes
