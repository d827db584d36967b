#pragma once

#include <algorithm>
#include <cmath>
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

// The deepest nesting of arrays and objects in JSON text, counting brackets outside
// strings; stops counting past `limit`. Linear, and exact for well-formed text (text that
// is not is refused by the parser anyway).
inline int json_nesting(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size() && deepest <= limit; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

// Json::parse (and its exceptions), refusing nesting deeper than kMaxJsonNesting with
// JsonTooDeep before parsing. (Not with a parser callback: nlohmann's callback parser
// scans the enclosing container at every object's end, quadratic in a long list such as
// a script's 80,000 steps.) Json is any nlohmann::basic_json.
template <typename Json>
Json parse_json_as(std::string_view text) {
  if (json_nesting(text, kMaxJsonNesting) > kMaxJsonNesting) throw JsonTooDeep();
  return Json::parse(text);
}

inline nlohmann::json parse_json_text(std::string_view text) { return parse_json_as<nlohmann::json>(text); }

// A JSON value for a message, cut at `longest` characters ("..." past them): its JSON text,
// except that a non-finite number (from Python or the code, never from a file) reads nan,
// inf or -inf where JSON would write null; bytes that are not UTF-8 are replaced.
template <typename Json>
std::string json_for_message(const Json& value, std::size_t longest = 60) {
  std::string text;
  if (value.is_number_float() && !std::isfinite(value.template get<double>())) {
    const double number = value.template get<double>();
    text = std::isnan(number) ? "nan" : number > 0 ? "inf" : "-inf";
  } else {
    text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return text.size() <= longest ? text : text.substr(0, longest) + "...";
}

}  // namespace meshsim::traces
