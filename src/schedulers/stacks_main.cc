// torchx-stacks: the node-side half of `torchx debug stack` and `debug profile` where the replicas
// run on another machine (a Slurm node, reached with `srun --overlap --jobid`). It finds the
// processes on this host whose environment meets the rules it is given (the job's id and this
// node's name, which Slurm sets in every process of a step), dumps each with py-spy, and prints
// them as StacksToJson does; with --profile it samples the top Python process of them and prints
// py-spy's speedscope JSON. It runs as the user, inside the job's allocation.
//
//   torchx-stacks [--env NAME=VALUE]... [--env-same NAME]... [--env-differs NAME]... [--profile SECONDS]
//
// --env-same NAME: NAME as this process has it (SLURMD_NODENAME: this node); --env-differs NAME:
// set, and not as this process has it (SLURM_STEP_ID: not the step this helper runs in).
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "schedulers/py_spy.h"
#include "torchx/schedulers/stacks.h"

namespace {

using torchx::schedulers::EnvRule;

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "torchx-stacks: %s\nusage: torchx-stacks [--env NAME=VALUE]... [--env-same NAME]... "
               "[--env-differs NAME]... [--profile SECONDS]\n",
               why.c_str());
  return 2;
}

std::string OwnValue(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? v : "";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<EnvRule> rules;
  std::optional<double> profile_seconds;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return Usage("`" + arg + "` needs a value");
    std::string value = argv[++i];
    if (arg == "--env") {
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) return Usage("--env takes NAME=VALUE, not `" + value + "`");
      rules.push_back({value.substr(0, eq), value.substr(eq + 1), false});
    } else if (arg == "--env-same") {
      rules.push_back({value, OwnValue(value), false});
    } else if (arg == "--env-differs") {
      rules.push_back({value, OwnValue(value), true});
    } else if (arg == "--profile") {
      char* end = nullptr;
      double s = std::strtod(value.c_str(), &end);
      if (!end || *end != '\0' || !(s >= 1 && s <= 3600)) return Usage("--profile takes seconds in [1, 3600]");
      profile_seconds = s;
    } else {
      return Usage("unknown option `" + arg + "`; valid choices: --env, --env-same, --env-differs, --profile");
    }
  }
  if (rules.empty()) return Usage("give at least one --env rule (a dump of every process is not what is meant)");
  std::vector<torchx::schedulers::ProcessStack> processes = torchx::schedulers::ProcessesByEnvironment(rules);
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  auto runner = torchx::internal::MakeSystemCommandRunner();
  if (profile_seconds) {
    auto top = torchx::schedulers::TopPythonProcess(processes);
    if (!top) {
      std::fprintf(stderr, "torchx-stacks: no Python process of the job runs on %s\n", host.data());
      return 1;
    }
    // A directory of its own (0700, a name nobody could have taken first) on a node others share.
    std::string dir = (std::filesystem::temp_directory_path() / "torchx-profile-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) {
      std::fprintf(stderr, "torchx-stacks: cannot make a temporary directory: %s\n", std::strerror(errno));
      return 1;
    }
    std::filesystem::path out = std::filesystem::path(dir) / "profile.json";
    torchx::Status s = torchx::schedulers::RecordProfile(*top, *profile_seconds, out.string(), *runner);
    if (!s.ok()) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      std::fprintf(stderr, "torchx-stacks: %s\n", s.message().c_str());
      return 1;
    }
    std::ifstream in(out, std::ios::binary);
    std::cout << in.rdbuf();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return std::cout.good() ? 0 : 1;
  }
  for (auto& p : processes) {
    p.host = host.data();
    torchx::schedulers::DumpProcessStack(p, *runner);
  }
  std::cout << torchx::schedulers::StacksToJson(processes) << "\n";
  return std::cout.good() ? 0 : 1;
}
