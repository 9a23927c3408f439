// A CommandRunner for back-end unit tests: answers each command with a canned result chosen by
// the argv's leading words, and records every argv, so a scheduler that drives an engine's CLI
// tools (slurm) is tested without the engine. An unanswered command is a missing tool (kNotFound,
// RunCommand's message), as on a machine without the engine.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/subprocess.h"
#include "torchx/status.h"

namespace torchx::testing {

class FakeCommandRunner : public internal::CommandRunner {
 public:
  /// Commands whose argv starts with `prefix` get `answer`; the longest matching prefix wins, and
  /// of equal ones the latest, so a test can change an answer midway.
  void On(std::vector<std::string> prefix, Result<internal::CommandResult> answer) {
    std::lock_guard lock(mu_);
    answers_.emplace_back(std::move(prefix), std::move(answer));
  }
  /// A tool that ran and exited `exit_code` after printing `out` and `err`.
  void On(std::vector<std::string> prefix, int exit_code, std::string out, std::string err = {}) {
    On(std::move(prefix), internal::CommandResult{exit_code, std::move(out), std::move(err)});
  }

  Result<internal::CommandResult> Run(const std::vector<std::string>& argv, const std::string&,
                                      std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    calls_.push_back(argv);
    // What a real tool would read: the files its arguments name, as they are while it runs
    // (sbatch reads the batch script then; the launcher may remove it after).
    for (size_t i = 1; i < argv.size(); ++i) {
      std::error_code ec;
      if (argv[i].starts_with('/') && std::filesystem::is_regular_file(argv[i], ec)) {
        std::ifstream f(argv[i]);
        std::stringstream text;
        text << f.rdbuf();
        files_[argv[i]] = text.str();
      }
    }
    const Result<internal::CommandResult>* best = nullptr;
    size_t best_len = 0;
    for (const auto& [prefix, answer] : answers_) {
      bool matches = prefix.size() <= argv.size() && std::equal(prefix.begin(), prefix.end(), argv.begin());
      if (matches && (!best || prefix.size() >= best_len)) {
        best = &answer;
        best_len = prefix.size();
      }
    }
    if (best) return *best;
    return NotFoundError(fmt::format("`{}` is not installed (not found on PATH)", argv.empty() ? "" : argv[0]));
  }

  /// What the file `path`, an argument of a call, held when that call ran ("" if none named it).
  std::string FileAtCall(const std::string& path) const {
    std::lock_guard lock(mu_);
    auto it = files_.find(path);
    return it == files_.end() ? std::string() : it->second;
  }
  /// Every argv run so far, in order.
  std::vector<std::vector<std::string>> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  /// The argvs run so far whose first word is `tool`.
  std::vector<std::vector<std::string>> CallsOf(const std::string& tool) const {
    std::vector<std::vector<std::string>> out;
    for (auto& argv : calls()) {
      if (!argv.empty() && argv[0] == tool) out.push_back(argv);
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::vector<std::string>, Result<internal::CommandResult>>> answers_;
  std::vector<std::vector<std::string>> calls_;
  std::map<std::string, std::string> files_;
};

}  // namespace torchx::testing
