#include "torchx/specs/named_resources.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace torchx::specs {
namespace {

using ::testing::HasSubstr;

TEST(NamedResources, GenericTable) {
  auto r = GetNamedResource("gpu.small");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->cpu, 8);
  EXPECT_EQ(r->gpu, 1);
  EXPECT_EQ(r->memMB, 32768);
  EXPECT_TRUE(r->capabilities.empty());
  EXPECT_EQ(GetNamedResource("cpu.nano")->memMB, 512);
  EXPECT_EQ(GetNamedResource("gpu.xlarge")->memMB, 262144);
  EXPECT_EQ(GetNamedResource("cpu.xlarge")->cpu, 8);
}

TEST(NamedResources, AwsTableAppliesMemoryTaxAndInstanceType) {
  auto r = GetNamedResource("aws_p3.2xlarge");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->cpu, 8);
  EXPECT_EQ(r->gpu, 1);
  EXPECT_EQ(r->memMB, 59963);  // 61 * 983
  EXPECT_EQ(r->capabilities.at("node.kubernetes.io/instance-type").as_string(), "p3.2xlarge");
  EXPECT_TRUE(r->devices.empty());
}

TEST(NamedResources, AwsDevices) {
  auto p4d = GetNamedResource("aws_p4d.24xlarge");
  EXPECT_EQ(p4d->devices.at("vpc.amazonaws.com/efa"), 4);
  EXPECT_EQ(p4d->memMB, 1152 * 983);
  auto trn = GetNamedResource("aws_trn1.32xlarge");
  EXPECT_EQ(trn->devices.at("vpc.amazonaws.com/efa"), 8);
  EXPECT_EQ(trn->devices.at("aws.amazon.com/neurondevice"), 16);
  EXPECT_EQ(GetNamedResource("aws_inf2.48xlarge")->devices.at("aws.amazon.com/neurondevice"), 12);
  EXPECT_EQ(GetNamedResource("aws_p5.48xlarge")->devices.at("vpc.amazonaws.com/efa"), 32);
  EXPECT_EQ(GetNamedResource("aws_g6e.48xlarge")->memMB, 1536 * 983);
  auto b300 = GetNamedResource("aws_p6-b300.48xlarge");
  EXPECT_EQ(b300->memMB, 4096 * 983);
  EXPECT_EQ(b300->devices.at("vpc.amazonaws.com/efa"), 16);
  EXPECT_EQ(b300->capabilities.at("node.kubernetes.io/instance-type").as_string(), "p6-b300.48xlarge");
  auto gb200 = GetNamedResource("aws_p6e-gb200.36xlarge");
  EXPECT_EQ(gb200->cpu, 144);
  EXPECT_EQ(gb200->gpu, 4);
  auto m5d = GetNamedResource("aws_m5d.metal");
  EXPECT_EQ(m5d->cpu, 96);
  EXPECT_EQ(m5d->memMB, 384 * 983);
  EXPECT_TRUE(m5d->devices.empty());
}

TEST(NamedResources, HasEveryTorchXName) { EXPECT_EQ(NamedResourceNames().size(), 10u + 61u); }

TEST(NamedResources, NullAndMissingGiveNullResource) {
  EXPECT_TRUE(IsNullResource(*GetNamedResource("NULL")));
  EXPECT_TRUE(IsNullResource(*GetNamedResource("MISSING")));
}

TEST(NamedResources, UnknownNameSuggests) {
  EXPECT_THAT(GetNamedResource("gpu.smal"), StatusIs(StatusCode::kNotFound, HasSubstr("Did you mean `gpu.small`?")));
  EXPECT_THAT(GetNamedResource("zzzzzzzzzzzz"),
              StatusIs(StatusCode::kNotFound, HasSubstr("Valid choices: aws_c5.18xlarge")));
}

TEST(MakeResource, DefaultsAndNamedOverride) {
  auto r = MakeResource(0, 0, 0);
  EXPECT_EQ(r->cpu, 2);  // TorchX quirk: 0 cpu becomes the default 2
  EXPECT_EQ(r->gpu, 0);
  EXPECT_EQ(r->memMB, 1024);
  auto h = MakeResource(1, 1, 1, "cpu.large");
  EXPECT_EQ(h->cpu, 2);
  EXPECT_EQ(h->memMB, 8192);
  EXPECT_EQ(MakeResource(4, 1, 2048)->cpu, 4);
  EXPECT_THAT(MakeResource(1, 1, 1, "nope"), StatusIs(StatusCode::kNotFound, HasSubstr("nope")));
}

}  // namespace
}  // namespace torchx::specs
