#include "core/cancel_scope.h"

#include <utility>

namespace torchx::internal {
namespace {

thread_local CancelScope* current = nullptr;

}  // namespace

CancelScope::CancelScope(std::shared_ptr<const std::atomic<bool>> cancelled)
    : cancelled_(std::move(cancelled)), outer_(current) {
  current = this;
}

CancelScope::~CancelScope() { current = outer_; }

bool CancelScope::Cancelled() {
  for (const CancelScope* s = current; s != nullptr; s = s->outer_) {
    if (s->cancelled_ && s->cancelled_->load(std::memory_order_relaxed)) return true;
  }
  return false;
}

}  // namespace torchx::internal
