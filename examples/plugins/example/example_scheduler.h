// example_nohup: runs each replica as a detached process group on this host, with its state in
// files under a root directory (runopt `root`, default $TORCHX_EXAMPLE_NOHUP_DIR or
// <tmp>/torchx-example-nohup-<uid>): <root>/<app_id>/{app.json, <role>_<k>.{pid,log,exit}}.
// A minimal but real scheduler, to show the plugin interface end to end.
#pragma once

#include <string>

#include <torchx/plugins/plugin_helper.h>

namespace example {

class NohupScheduler : public torchx::plugin::SchedulerImpl {
 public:
  explicit NohupScheduler(const std::string& session) : session_(session) {}
  static std::string RunOpts();

  std::string DryRun(const std::string& request_json) override;
  std::string Schedule(const std::string& payload) override;
  std::string Describe(const std::string& app_id) override;
  void Cancel(const std::string& app_id) override;
  std::string List() override;
  std::string Logs(const std::string& request_json) override;

 private:
  std::string session_;
};

}  // namespace example
