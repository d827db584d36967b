#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace meshsim::traces {

// Nesting allowed in any JSON or YAML the project reads (configs, scripts, state files,
// trace lines are a few levels deep). The bound keeps every later walk over a parsed tree
// (a message that prints a value, a conversion) from exhausting the stack.
inline constexpr int kMaxJsonNesting = 64;

struct JsonTooDeep : std::runtime_error {
  JsonTooDeep() : std::runtime_error("nested deeper than " + std::to_string(kMaxJsonNesting) + " levels") {}
};

// nlohmann::json::parse (and its exceptions), refusing nesting deeper than kMaxJsonNesting
// with JsonTooDeep as soon as it is seen.
nlohmann::json parse_json_text(std::string_view text);

}  // namespace meshsim::traces
