// "Stop what you are doing" for the work a thread does on someone's behalf: the dashboard opens a
// scope around a request's work (a stack dump, a profile) and sets it once the client has left;
// the blocking calls under it that can end early (a tool run with RunCommand) do, and say so.
//
// A scope is per thread and nests (the innermost is asked, and an outer cancelled one counts too);
// code that opens none is never cancelled. What is cancelled is the caller's to say, never
// guessed from a message.
#pragma once

#include <atomic>
#include <memory>

namespace torchx::internal {

class CancelScope {
 public:
  /// Opens a scope on this thread, cancelled once `*cancelled` is true.
  explicit CancelScope(std::shared_ptr<const std::atomic<bool>> cancelled);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

  /// Whether this thread's scope, or one around it, has been cancelled.
  static bool Cancelled();

 private:
  std::shared_ptr<const std::atomic<bool>> cancelled_;
  CancelScope* outer_;
};

}  // namespace torchx::internal
