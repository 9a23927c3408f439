#include "core/json_text.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace torchx::internal {
namespace {

TEST(AppendJsonString, IsWhatDumpingTheStringGives) {
  for (std::string s :
       {std::string(""), std::string("plain /path/to-file_1.log ~!@#$%^&*()"), std::string("quote\" back\\"),
        std::string("nl\n tab\t bell\x07 del\x7f"), std::string("caf\xc3\xa9 \xe2\x82\xac"),
        std::string("bad \xff\xfe utf8 \xc3"), std::string("nul\0inside", 10)}) {
    std::string out = "x";
    AppendJsonString(out, s);
    EXPECT_EQ(out, "x" + nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) << s;
  }
}

}  // namespace
}  // namespace torchx::internal
