#include "composite/deferred_log.h"

#include <chrono>

#include "composite/children.h"

namespace torchx::composite {
namespace {

class DeferredChildLog : public schedulers::LogIterator {
 public:
  DeferredChildLog(plugins::PluginRegistry& registry, const std::string& session, std::shared_ptr<const Clock> clock,
                   schedulers::LogOptions options, std::function<Result<ChildLook>(runner::Runner&)> look)
      : clock_(clock ? std::move(clock) : std::make_shared<SystemClock>()),
        runner_(registry, ChildRunnerOptions(session, clock_)),
        options_(std::move(options)),
        look_(std::move(look)) {}

  Result<std::optional<std::string>> Next() override {
    TORCHX_ASSIGN_OR_RETURN(bool started, Start());
    if (!started) return std::optional<std::string>();
    return inner_->Next();
  }
  bool Ready() override { return inner_ ? inner_->Ready() : false; }
  Result<bool> NextBatch(const std::function<void(std::string_view)>& sink) override {
    TORCHX_ASSIGN_OR_RETURN(bool started, Start());
    if (!started) return false;
    return inner_->NextBatch(sink);
  }

 private:
  // Waits until the child has a handle; false when it will never have one.
  Result<bool> Start() {
    while (!inner_) {
      TORCHX_ASSIGN_OR_RETURN(ChildLook found, look_(runner_));
      if (!found.handle.empty()) {
        schedulers::LogOptions options = options_;
        options.role = found.role;
        TORCHX_ASSIGN_OR_RETURN(inner_, runner_.LogLines(found.handle, options));
        break;
      }
      if (found.never) return false;
      clock_->SleepFor(std::chrono::milliseconds(500));
    }
    return true;
  }

  std::shared_ptr<const Clock> clock_;
  runner::Runner runner_;
  schedulers::LogOptions options_;
  std::function<Result<ChildLook>(runner::Runner&)> look_;
  std::unique_ptr<schedulers::LogIterator> inner_;
};

}  // namespace

std::unique_ptr<schedulers::LogIterator> MakeDeferredChildLog(plugins::PluginRegistry& registry,
                                                              const std::string& session,
                                                              std::shared_ptr<const Clock> clock,
                                                              schedulers::LogOptions options,
                                                              std::function<Result<ChildLook>(runner::Runner&)> look) {
  return std::make_unique<DeferredChildLog>(registry, session, std::move(clock), std::move(options), std::move(look));
}

}  // namespace torchx::composite
