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

// Json::parse (and its exceptions), refusing nesting deeper than kMaxJsonNesting with
// JsonTooDeep as soon as it is seen. Json is any nlohmann::basic_json.
template <typename Json>
Json parse_json_as(std::string_view text) {
  const typename Json::parser_callback_t bound = [](int depth, typename Json::parse_event_t event, Json&) {
    if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
        depth >= kMaxJsonNesting) {
      throw JsonTooDeep();
    }
    return true;
  };
  return Json::parse(text, bound);
}

inline nlohmann::json parse_json_text(std::string_view text) { return parse_json_as<nlohmann::json>(text); }

}  // namespace meshsim::traces
