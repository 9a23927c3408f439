#include <cstdlib>

#include <gtest/gtest.h>

#include "testing/status_matchers.h"
#include "torchx/specs/app_def.h"

namespace torchx::specs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseMounts, BindVolumeAndDeviceWithAliases) {
  auto m = ParseMounts({"type=bind", "src=/a", "dst=/b", "readonly", "type=volume", "source=vol", "target=/c",
                        "type=device", "src=/dev/fuse"});
  ASSERT_THAT(m, IsOk());
  EXPECT_THAT(*m, ElementsAre(Mount(BindMount{"/a", "/b", true}), Mount(VolumeMount{"vol", "/c", false}),
                              Mount(DeviceMount{"/dev/fuse", "/dev/fuse", "rwm"})));
}

TEST(ParseMounts, DeviceWithDestinationAndPermissions) {
  auto m = ParseMountsString("type=device,src=/dev/a,destination=/dev/b,perm=rw");
  ASSERT_THAT(m, IsOk());
  EXPECT_THAT(*m, ElementsAre(Mount(DeviceMount{"/dev/a", "/dev/b", "rw"})));
}

TEST(ParseMounts, ReadOnlyAliasAndValueIgnored) {
  auto m = ParseMountsString("type=bind,src=/a,dst=/b,read_only=false");
  ASSERT_THAT(m, IsOk());
  EXPECT_TRUE(std::get<BindMount>((*m)[0]).read_only);  // presence means read-only, as TorchX
}

TEST(ParseMounts, ExpandsHomeInBindSource) {
  const char* home = std::getenv("HOME");
  ASSERT_NE(home, nullptr);
  auto m = ParseMountsString("type=bind,src=~/data,dst=/data");
  ASSERT_THAT(m, IsOk());
  EXPECT_EQ(std::get<BindMount>((*m)[0]).src_path, std::string(home) + "/data");
}

TEST(DeviceMountsFor, EfaAndNeuronDevicesUnknownNamesListed) {
  std::vector<std::string> unknown;
  auto mounts =
      DeviceMountsFor({{"vpc.amazonaws.com/efa", 2}, {"aws.amazon.com/neurondevice", 1}, {"x/y", 3}}, &unknown);
  ASSERT_EQ(mounts.size(), 3u);
  EXPECT_EQ(mounts[0], (DeviceMount{"/dev/neuron0", "/dev/neuron0", "rwm"}));  // the map's order
  EXPECT_EQ(mounts[2], (DeviceMount{"/dev/infiniband/uverbs1", "/dev/infiniband/uverbs1", "rwm"}));
  EXPECT_EQ(unknown, std::vector<std::string>{"x/y"});
}

TEST(ParseMounts, EmptyListGivesNoMounts) { EXPECT_THAT(ParseMounts({}), IsOkAndHolds(::testing::IsEmpty())); }

TEST(ParseMounts, Errors) {
  EXPECT_THAT(ParseMountsString("src=/a,type=bind"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("type must be specified first")));
  EXPECT_THAT(ParseMountsString("type=bind,foo=1"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("unknown mount option foo, must be one of [type, src, source, dst, "
                                 "destination, target, readonly, read_only, perm]")));
  EXPECT_THAT(ParseMountsString("type=nfs,src=a,dst=b"),
              StatusIs(StatusCode::kInvalidArgument,
                       HasSubstr("invalid mount type 'nfs', must be one of [bind, volume, device]")));
  EXPECT_THAT(
      ParseMountsString("type=bind,src=/a"),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("mount 1 (type=bind) is missing required option 'dst'")));
  EXPECT_THAT(ParseMountsString("type=bind,src=/a,dst=/b,type=volume,dst=/c"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("mount 2 (type=volume)")));
  EXPECT_THAT(ParseMountsString("type=device,src=/dev/x,perm=rwx"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("invalid flag 'x'")));
}

}  // namespace
}  // namespace torchx::specs
