#include "torchx/schedulers/hosts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace torchx::schedulers {
namespace {

using ::testing::HasSubstr;

std::vector<HostInfo> Cluster() {
  HostInfo a;
  a.name = "node1";
  a.address = "10.0.0.1";
  a.state = "mixed";
  a.groups = {"debug"};
  a.cpus = 8;
  a.cpus_allocated = 3;
  a.memory_mb = 64000;
  a.memory_allocated_mb = 16000;
  a.gpus = 4;
  a.gpus_allocated = 2;
  a.apps = {{"41", "slurm://torchx/41", {"trainer/0", "ps/0"}}};
  HostInfo b;
  b.name = "vm";
  b.state = "up";
  b.cpus = 2;
  b.cpus_used = 0.5;
  b.memory_mb = 4000;
  b.memory_used_mb = 1200;
  return {a, b};
}

TEST(FormatHosts, ALineEachWithAllocatedOrUsedOverCapacityThenItsApps) {
  std::string text = FormatHosts("slurm", Cluster());
  EXPECT_THAT(text, HasSubstr("HOST   STATE  CPUS        MEMORY           GPUS  APPS\n"));
  EXPECT_THAT(text, HasSubstr("node1  mixed  3/8         15.6/62.5G       2/4   1\n"));
  EXPECT_THAT(text, HasSubstr("    slurm://torchx/41 (trainer/0, ps/0)\n"));
  EXPECT_THAT(text, HasSubstr("vm     up     0.5 used/2  1200 used/4000M  0     0"));
  EXPECT_EQ(FormatHosts("ray", {}), "ray: no host\n");
}

TEST(HostsToJson, EveryFigureAndUnknownOnesNull) {
  auto j = nlohmann::json::parse(HostsToJson("slurm", Cluster()));
  EXPECT_EQ(j["scheduler"], "slurm");
  ASSERT_EQ(j["hosts"].size(), 2u);
  EXPECT_EQ(j["hosts"][0]["cpus_allocated"], 3.0);
  EXPECT_TRUE(j["hosts"][0]["cpus_used"].is_null());
  EXPECT_EQ(j["hosts"][0]["apps"][0]["where"], nlohmann::json({"trainer/0", "ps/0"}));
  EXPECT_EQ(j["hosts"][1]["memory_used_mb"], 1200);
  EXPECT_TRUE(j["hosts"][1]["gpus_allocated"].is_null());
}

}  // namespace
}  // namespace torchx::schedulers
