#pragma once

#include <string>
#include <utility>

namespace meshsim::scheduler {

// What every scheduling-core call that can fail returns (the seeds' `success` / `error`).
// A failed call has changed nothing.
struct OpResult {
  bool success = true;
  std::string error;

  static OpResult ok() { return OpResult{}; }
  static OpResult fail(std::string message) { return OpResult{false, std::move(message)}; }
  explicit operator bool() const { return success; }
};

}  // namespace meshsim::scheduler
