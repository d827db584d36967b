#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/test_paths.hpp"

namespace meshsim::testing {

// One of the fixture files in tests/sim/vllm_conformance (cases read from vLLM's tests).
inline nlohmann::json conformance_fixture(const std::string& file) {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/tests/sim/vllm_conformance/" + file;
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  return nlohmann::json::parse(in);
}

}  // namespace meshsim::testing
