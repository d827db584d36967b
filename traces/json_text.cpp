#include "traces/json_text.hpp"

namespace meshsim::traces {

nlohmann::json parse_json_text(std::string_view text) {
  using nlohmann::json;
  const json::parser_callback_t bound = [](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxJsonNesting) {
      throw JsonTooDeep();
    }
    return true;
  };
  return json::parse(text, bound);
}

}  // namespace meshsim::traces
