#include "configs/json_difference.hpp"

#include <set>

#include "traces/json_text.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;

std::string shown(const json* value) { return value == nullptr ? "absent" : traces::json_for_message(*value); }

std::optional<std::string> differ(const json* was, const json* now, const std::string& path) {
  if (was != nullptr && now != nullptr && *was == *now) return std::nullopt;
  const std::string where = path.empty() ? "the whole value" : path;
  if (was != nullptr && now != nullptr && was->is_object() && now->is_object()) {
    std::set<std::string> keys;
    for (const auto& [key, value] : was->items()) keys.insert(key);
    for (const auto& [key, value] : now->items()) keys.insert(key);
    for (const std::string& key : keys) {
      const auto find = [&key](const json* object) { return object->contains(key) ? &(*object)[key] : nullptr; };
      if (auto found = differ(find(was), find(now), path.empty() ? key : path + "." + key)) return found;
    }
  }
  if (was != nullptr && now != nullptr && was->is_array() && now->is_array() && was->size() == now->size()) {
    for (std::size_t i = 0; i < was->size(); ++i) {
      if (auto found = differ(&(*was)[i], &(*now)[i], path + "[" + std::to_string(i) + "]")) return found;
    }
  }
  return where + ": was " + shown(was) + ", now " + shown(now);
}

}  // namespace

std::optional<std::string> first_difference(const json& was, const json& now) { return differ(&was, &now, ""); }

}  // namespace meshsim::configs
