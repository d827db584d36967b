#include "tools/cli/script_expectations.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::cli {

using nlohmann::json;

std::vector<std::string> unmet_expectations(const json& expected, const json& actual, const std::string& path) {
  const auto mismatch = [&](const std::string& what) {
    return std::vector<std::string>{path + ": expected " + what + ", got " + (actual.is_null() ? "nothing" : actual.dump())};
  };
  if (expected.is_object() && expected.size() == 1 && expected.contains("contains") && expected["contains"].is_string()) {
    const std::string text = expected["contains"].get<std::string>();
    if (actual.is_string() && actual.get<std::string>().find(text) != std::string::npos) return {};
    return mismatch("a string containing " + json(text).dump());
  }
  if (expected.is_object()) {
    if (!actual.is_object()) return mismatch(expected.dump());
    std::vector<std::string> out;
    for (const auto& [key, value] : expected.items()) {
      const json& got = actual.contains(key) ? actual[key] : json();
      for (auto& message : unmet_expectations(value, got, path + "." + key)) out.push_back(std::move(message));
    }
    return out;
  }
  if (expected.is_array()) {
    if (!actual.is_array() || actual.size() != expected.size()) return mismatch(expected.dump());
    std::vector<std::string> out;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      for (auto& message : unmet_expectations(expected[i], actual[i], path + "[" + std::to_string(i) + "]")) {
        out.push_back(std::move(message));
      }
    }
    return out;
  }
  if (expected.is_number() && actual.is_number()) {
    const double want = expected.get<double>();
    const double got = actual.get<double>();
    if (std::fabs(want - got) <= 1e-9 * std::max({1.0, std::fabs(want), std::fabs(got)})) return {};
    return mismatch(expected.dump());
  }
  if (expected == actual) return {};
  return mismatch(expected.dump());
}

}  // namespace meshsim::cli
