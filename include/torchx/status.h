// Status and Result<T>: the error model of the whole project.
//
// Every expected failure (bad spec, bad config, engine unreachable) is returned as a Status with one
// of a small closed set of codes; the detail goes in the message, which names the field and, where
// there is a fixed set, the valid choices. The CLI maps codes to exit codes and the Python binding
// maps them to the exceptions TorchX users catch, each in one place.
//
// Result<T> holds a T or a non-OK Status. Its accessors follow std::expected (has_value, value,
// error, operator*, operator->) so the code can move to std::expected with C++23.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace torchx {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kUnavailable,
  kDeadlineExceeded,
  kPermissionDenied,
  kUnimplemented,
  kCancelled,
  kInternal,
};

/// Stable spelling of a code ("INVALID_ARGUMENT", ...), as printed in messages.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  /// An OK status.
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  /// Returns a copy whose message is `prefix: message` (keeps the code). Used to add context
  /// ("role trainer") as an error travels outwards.
  Status WithContext(std::string_view prefix) const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string msg) { return {StatusCode::kInvalidArgument, std::move(msg)}; }
inline Status NotFoundError(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
inline Status AlreadyExistsError(std::string msg) { return {StatusCode::kAlreadyExists, std::move(msg)}; }
inline Status FailedPreconditionError(std::string msg) { return {StatusCode::kFailedPrecondition, std::move(msg)}; }
inline Status UnavailableError(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
inline Status UnimplementedError(std::string msg) { return {StatusCode::kUnimplemented, std::move(msg)}; }
inline Status InternalError(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
inline Status DeadlineExceededError(std::string msg) { return {StatusCode::kDeadlineExceeded, std::move(msg)}; }
inline Status PermissionDeniedError(std::string msg) { return {StatusCode::kPermissionDenied, std::move(msg)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  using value_type = T;

  Result(const T& value) : v_(value) {}        // NOLINT: implicit, like std::expected
  Result(T&& value) : v_(std::move(value)) {}  // NOLINT
  /// REQUIRES: !status.ok(). An OK status without a value is a programming error and becomes
  /// kInternal so that it is never mistaken for success.
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::kInternal, "Result built from OK status");
  }

  bool has_value() const { return v_.index() == 0; }
  bool ok() const { return has_value(); }
  explicit operator bool() const { return has_value(); }

  /// The error; OkStatus() when a value is held.
  Status status() const { return has_value() ? OkStatus() : std::get<Status>(v_); }
  const Status& error() const { return std::get<Status>(v_); }

  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  T&& value() && { return std::move(Checked()); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->Checked(); }
  T&& operator*() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->Checked(); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return has_value() ? std::get<0>(v_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  T& Checked() {
    // Reading the value of an error Result is a programming error: fail loudly, never UB.
    if (!has_value()) std::abort();
    return std::get<0>(v_);
  }
  std::variant<T, Status> v_;
};

}  // namespace torchx

#define TORCHX_STATUS_CONCAT_INNER_(a, b) a##b
#define TORCHX_STATUS_CONCAT_(a, b) TORCHX_STATUS_CONCAT_INNER_(a, b)

/// Returns the status from the enclosing function if `expr` (a Status) is not OK.
#define TORCHX_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::torchx::Status torchx_status_ = (expr);        \
    if (!torchx_status_.ok()) return torchx_status_; \
  } while (0)

/// `TORCHX_ASSIGN_OR_RETURN(auto x, Foo());` declares x from a Result or returns its error.
#define TORCHX_ASSIGN_OR_RETURN(lhs, expr) \
  TORCHX_ASSIGN_OR_RETURN_IMPL_(TORCHX_STATUS_CONCAT_(torchx_result_, __LINE__), lhs, expr)
#define TORCHX_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.has_value()) return tmp.error();           \
  lhs = std::move(tmp).value()
