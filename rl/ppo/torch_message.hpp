#pragma once

// LibTorch: include only from rl/ translation units.
#include <c10/util/Exception.h>

#include <exception>
#include <string>

namespace meshsim::rl {

// An exception's message for a user: LibTorch's (c10::Error) without the C++ backtrace it
// appends, its first line only.
inline std::string torch_message(const std::exception& e) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
  const std::string text = torch_error != nullptr ? torch_error->what_without_backtrace() : e.what();
  return text.substr(0, text.find('\n'));
}

}  // namespace meshsim::rl
