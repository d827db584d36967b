#pragma once

// Tests that read ../shared (public traces, reference profiles) skip, saying so, when it
// is absent, and fail instead when MESHSIM_REQUIRE_SHARED is set (CI sets it when
// ../shared is there, so a moved or renamed file cannot turn a test into a silent skip).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/test_paths.hpp"

namespace meshsim::testing {

inline std::string shared_path(const std::string& relative) { return std::string(MESHSIM_SHARED_DIR) + "/" + relative; }

inline bool shared_required() {
  const char* env = std::getenv("MESHSIM_REQUIRE_SHARED");
  return env != nullptr && *env != '\0' && std::string(env) != "0";
}

}  // namespace meshsim::testing

// Skips (or fails, under MESHSIM_REQUIRE_SHARED) the current test when `path` is absent.
#define MESHSIM_NEED_SHARED_FILE(path)                                                                     \
  do {                                                                                                     \
    const std::string meshsim_needed_ = (path);                                                            \
    if (!std::filesystem::exists(meshsim_needed_)) {                                                       \
      if (::meshsim::testing::shared_required()) FAIL() << meshsim_needed_ << " is absent and MESHSIM_REQUIRE_SHARED is set"; \
      GTEST_SKIP() << "skipped: " << meshsim_needed_ << " is absent (the shared data is not here)";        \
    }                                                                                                      \
  } while (false)
