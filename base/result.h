// Result<T>: the value of a syscall-boundary operation or the errno that
// stopped it. A small stand-in for std::expected (C++23), which Debian 12's
// toolchain does not ship.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace cordon {

struct SysError {
  int err = 0;
  const char* op = "";
  std::string detail;  // optional: the path or argument involved
};

std::string Describe(const SysError& e);

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(SysError error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& value() const& { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const SysError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, SysError> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status Ok() { return Unit{}; }

// Builds the error from errno; call on the line after the failing syscall.
inline SysError Errno(const char* op, std::string detail = {}) {
  return SysError{errno, op, std::move(detail)};
}

}  // namespace cordon
