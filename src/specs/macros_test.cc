#include "torchx/specs/macros.h"

#include <gtest/gtest.h>

namespace torchx::specs::macros {
namespace {

const Values kValues{"/img", "app-123", "2", "TORCHX_RANK0_HOST"};

TEST(Substitute, ReplacesKnownPlaceholders) {
  EXPECT_EQ(kValues.Substitute("${img_root}/bin --id ${app_id} r${replica_id}"), "/img/bin --id app-123 r2");
  EXPECT_EQ(kValues.Substitute("$app_id"), "app-123");  // unbraced form, as string.Template
  EXPECT_EQ(kValues.Substitute("${base_img_root}"), "DEPRECATED");
}

TEST(Substitute, SafeSubstituteSemantics) {
  EXPECT_EQ(kValues.Substitute("$$"), "$");
  EXPECT_EQ(kValues.Substitute("$${app_id}"), "${app_id}");
  EXPECT_EQ(kValues.Substitute("${unknown} $HOME ${ rank } $ $"), "${unknown} $HOME ${ rank } $ $");
  EXPECT_EQ(kValues.Substitute("trailing $"), "trailing $");
  EXPECT_EQ(kValues.Substitute("${app_id"), "${app_id");
  // dist.ddp writes `$${${rank0_env}:=localhost}` so that the shell sees ${TORCHX_RANK0_HOST:=...}
  EXPECT_EQ(kValues.Substitute("$${${rank0_env}:=localhost}:29500"), "${TORCHX_RANK0_HOST:=localhost}:29500");
}

TEST(Apply, SubstitutesArgsEnvValuesAndNestedMetadataOnly) {
  Role role;
  role.name = "${app_id}";
  role.image = "${img_root}";
  role.entrypoint = "${img_root}/run";
  role.args = {"--id", "${app_id}"};
  role.env = {{"${app_id}", "${replica_id}"}};
  role.port_map = {{"${app_id}", 1}};
  role.mounts = {BindMount{"${img_root}", "/x", false}};
  role.metadata["a"] = Value::Map{{"b", Value::List{"${app_id}", 1}}, {"c", "${rank0_env}"}};
  Role out = kValues.Apply(role);
  EXPECT_EQ(out.args, (std::vector<std::string>{"--id", "app-123"}));
  EXPECT_EQ(out.env.at("${app_id}"), "2");  // keys untouched, values substituted
  EXPECT_EQ(out.entrypoint, "${img_root}/run");
  EXPECT_EQ(out.image, "${img_root}");
  EXPECT_EQ(out.name, "${app_id}");
  EXPECT_EQ(out.port_map, role.port_map);
  EXPECT_EQ(out.mounts, role.mounts);
  const auto& a = out.metadata.at("a").as_map();
  EXPECT_EQ(a.at("b").as_list()[0].as_string(), "app-123");
  EXPECT_EQ(a.at("b").as_list()[1].as_int(), 1);
  EXPECT_EQ(a.at("c").as_string(), "TORCHX_RANK0_HOST");
  // the input is not modified (TorchX's apply returns a copy)
  EXPECT_EQ(role.args[1], "${app_id}");
}

}  // namespace
}  // namespace torchx::specs::macros
