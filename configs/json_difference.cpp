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

std::optional<std::string> unknown_key(const json& read, const json& written, const std::string& path) {
  if (read.is_object() && written.is_object()) {
    for (auto it = read.begin(); it != read.end(); ++it) {
      const std::string key = path.empty() ? it.key() : path + "." + it.key();
      if (!written.contains(it.key())) return key;
      if (auto deeper = unknown_key(*it, written.at(it.key()), key)) return deeper;
    }
  } else if (read.is_array() && written.is_array()) {
    for (std::size_t i = 0; i < read.size() && i < written.size(); ++i) {
      if (auto deeper = unknown_key(read[i], written[i], path + "[" + std::to_string(i) + "]")) return deeper;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> first_difference(const json& was, const json& now) { return differ(&was, &now, ""); }

std::optional<std::string> first_unknown_key(const json& read, const json& written) {
  return unknown_key(read, written, "");
}

}  // namespace meshsim::configs
