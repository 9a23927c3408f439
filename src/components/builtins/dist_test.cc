#include "components/builtins/dist.h"

#include <gtest/gtest.h>

#include "testing/component_source.h"
#include "testing/status_matchers.h"
#include "torchx/components/component.h"
#include "torchx/specs/macros.h"

namespace torchx::components::internal {
namespace {

using ::testing::HasSubstr;

TEST(ParseNNodes, Forms) {
  auto e = ParseNNodes("2:4x3");
  ASSERT_THAT(e, IsOk());
  EXPECT_EQ(e->min_nodes, 2);
  EXPECT_EQ(e->max_nodes, 4);
  EXPECT_EQ(e->nproc_per_node, 3);
  EXPECT_EQ(e->nnodes, "2:4");
  auto f = ParseNNodes("2x1");
  EXPECT_EQ(f->nnodes, "2");
  EXPECT_EQ(f->min_nodes, 2);
  auto p = ParseNNodes("8");  // bare N: one node with N processes (not N nodes, as in spmd)
  EXPECT_EQ(p->max_nodes, 1);
  EXPECT_EQ(p->nproc_per_node, 8);
}

TEST(ParseNNodes, RejectsMalformed) {
  for (const char* bad : {"1x", "x2", ":3", ":2x1", "1x2:3", "", "ax2", "1x2x3", "-1", "0x2", "3:2x1", "1 x2",
                          "99999999999x2", "1:99999999999x1", "2x99999999999"}) {
    EXPECT_THAT(ParseNNodes(bad), StatusIs(StatusCode::kInvalidArgument, HasSubstr("-j:"))) << bad;
  }
}

TEST(ParseSpmdJ, InfersProcsFromGpus) {
  EXPECT_THAT(ParseSpmdJ("aws_p4d.24xlarge", "2"), IsOkAndHolds("2x8"));
  EXPECT_THAT(ParseSpmdJ("aws_p4d.24xlarge", "2x4"), IsOkAndHolds("2x4"));
  EXPECT_THAT(ParseSpmdJ("aws_trn1.32xlarge", "2x16"), IsOkAndHolds("2x16"));
  EXPECT_THAT(ParseSpmdJ("aws_trn1.32xlarge", "2"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("`aws_trn1.32xlarge` is not a GPU instance")));
  EXPECT_THAT(ParseSpmdJ("nope", "2"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("-h: named resource")));
  EXPECT_THAT(ParseSpmdJ("gpu.small", "1x2x3"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("Invalid format for `-j $NNODESx$NPROCS_PER_NODE`")));
}

TEST(ParseStructuredName, TorchXCases) {
  auto n = [](const std::string& name, const std::string& m, const std::string& s) {
    auto r = ParseStructuredName(name, m, s);
    return r ? r->experiment + "|" + r->run : r.error().message();
  };
  EXPECT_EQ(n("foo/bar", "", "bar/baz.py"), "foo|bar");
  EXPECT_EQ(n("foo/", "", "bar/baz.py"), "foo|baz");
  EXPECT_EQ(n("/bar", "", "bar/baz.py"), "default-experiment|bar");
  EXPECT_EQ(n("foobar", "foo.bar", ""), "default-experiment|foobar");
  EXPECT_EQ(n("foo/", "foo.bar.baz", ""), "foo|baz");
  EXPECT_EQ(n("/", "", "x/y.py"), "default-experiment|y");
  EXPECT_THAT(ParseStructuredName("foo/bar", "", ""),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("No main module or script specified")));
  EXPECT_THAT(ParseStructuredName("x", "a", "b"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("Both main module and script set")));
}

TEST(PathStem, MatchesPython) {
  EXPECT_EQ(PathStem("a/b/train.py"), "train");
  EXPECT_EQ(PathStem("x.tar.gz"), "x.tar");
  EXPECT_EQ(PathStem(".bashrc"), ".bashrc");
  EXPECT_EQ(PathStem("dir/"), "dir");
  EXPECT_EQ(PathStem("noext"), "noext");
}

Result<specs::AppDef> Materialize(const std::vector<std::string>& argv) {
  TORCHX_ASSIGN_OR_RETURN(auto c, FindComponent(testing::ListComponentSource(), argv[0]));
  TORCHX_ASSIGN_OR_RETURN(auto args, ParseComponentArgs(c->spec(), {argv.begin() + 1, argv.end()}));
  return BuildAppDef(*c, args);
}

TEST(DistDdp, RequiresExactlyOneOfScriptAndModule) {
  EXPECT_THAT(Materialize({"dist.ddp"}),
              StatusIs(StatusCode::kInvalidArgument,
                       "dist.ddp: --script, -m: exactly one of --script and -m must be specified"));
  EXPECT_THAT(Materialize({"dist.ddp", "--script", "a.py", "-m", "b"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("exactly one of --script and -m")));
}

TEST(DistDdp, UnknownScriptOptionPointsAtDoubleDash) {
  EXPECT_THAT(Materialize({"dist.ddp", "--script", "main.py", "--epochs", "3"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("after `--`")));
}

TEST(DistDdp, RdzvConfAndMultiNodeEndpointExpandsToRank0Host) {
  auto app = Materialize({"dist.ddp", "--script", "t.py", "-j", "2x2", "--rdzv_conf", "join_timeout=600"});
  ASSERT_THAT(app, IsOk());
  const specs::Role& role = app->roles[0];
  EXPECT_THAT(role.args[1], HasSubstr("--rdzv_conf join_timeout=600 --rdzv_endpoint"));
  specs::macros::Values v{"", "app-1", "0", "TORCHX_RANK0_HOST"};
  EXPECT_THAT(v.Apply(role).args[1],
              HasSubstr("--rdzv_endpoint ${TORCHX_RANK0_HOST:=localhost}:29500 --rdzv_id 'app-1' --nnodes 2"));
}

TEST(DistDdp, BadJAndMountsAreNamed) {
  EXPECT_THAT(Materialize({"dist.ddp", "--script", "t.py", "-j", "2x"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("dist.ddp: -j: invalid format")));
  EXPECT_THAT(Materialize({"dist.ddp", "--script", "t.py", "--mounts", "type=nfs"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("invalid mount type 'nfs'")));
  EXPECT_THAT(Materialize({"dist.ddp", "--script", "t.py", "-h", "gpu.smal"}),
              StatusIs(StatusCode::kNotFound, HasSubstr("Did you mean `gpu.small`?")));
}

TEST(Serve, ParamsBecomeOptions) {
  auto app = Materialize({"serve.torchserve", "--model_path", "m.mar", "--management_api", "http://x", "--params",
                          "model_name=a,initial_workers=1"});
  ASSERT_THAT(app, IsOk());
  EXPECT_EQ(app->roles[0].args,
            (std::vector<std::string>{"-m", "torchx.apps.serve.serve", "--model_path", "m.mar", "--management_api",
                                      "http://x", "--initial_workers", "1", "--model_name", "a"}));
}

TEST(UtilsPython, ExactlyOneProgram) {
  EXPECT_THAT(Materialize({"utils.python", "-m", "a", "-c", "b"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("exactly one of -m, -c and --script")));
}

TEST(UtilsComponents, PythonAndCopyTakeMounts) {
  auto py = Materialize({"utils.python", "--mounts", "type=bind,src=/host,dst=/job,readonly", "-m", "foo.main"});
  ASSERT_THAT(py, IsOk());
  ASSERT_EQ(py->roles[0].mounts.size(), 1u);
  EXPECT_EQ(std::get<specs::BindMount>(py->roles[0].mounts[0]), (specs::BindMount{"/host", "/job", true}));
  auto copy = Materialize({"utils.copy", "--src", "a", "--dst", "b", "--mounts", "type=volume,src=v,dst=/d"});
  ASSERT_THAT(copy, IsOk());
  EXPECT_EQ(std::get<specs::VolumeMount>(copy->roles[0].mounts[0]).src, "v");
  EXPECT_THAT(Materialize({"utils.copy", "--src", "a", "--dst", "b", "--mounts", "type=nfs"}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("invalid mount type")));
}

}  // namespace
}  // namespace torchx::components::internal
