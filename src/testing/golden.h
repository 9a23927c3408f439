#pragma once
// Golden files under tests/golden/ for tests that compare a rendered request to a checked-in one.
// The test target defines TORCHX_SOURCE_DIR (the checkout).

#include <fstream>
#include <sstream>
#include <string>

namespace torchx::testing {

/// The text of tests/golden/<relative> (empty when missing: the comparison then fails and shows it).
inline std::string Golden(const std::string& relative) {
  std::ifstream f(std::string(TORCHX_SOURCE_DIR) + "/tests/golden/" + relative);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace torchx::testing
