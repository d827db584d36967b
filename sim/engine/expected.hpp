#pragma once

#include <string>
#include <utility>
#include <variant>

namespace meshsim {

// An error at a boundary (a trace line, a config key, a command-line value): what went
// wrong, already carrying its context (file:line, key path) in `message`.
struct Error {
  std::string message;
};

// A value or an Error, in the spirit of C++23 std::expected (not available in C++20).
// Bad input is returned this way; exceptions are kept for what cannot be recovered.
template <typename T>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() { return std::get<0>(state_); }
  const T& value() const { return std::get<0>(state_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// For operations that produce nothing but may fail.
struct Ok {};
using Status = Expected<Ok>;

}  // namespace meshsim
