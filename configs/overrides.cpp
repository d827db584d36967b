#include "configs/overrides.hpp"

#include <charconv>

#include "configs/config_file.hpp"

namespace meshsim::configs {

namespace {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    keys.emplace_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return keys;
    start = dot + 1;
  }
}

std::optional<std::size_t> index_of(const std::string& key) {
  std::size_t index = 0;
  const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), index);
  if (error != std::errc{} || end != key.data() + key.size() || key.empty()) return std::nullopt;
  return index;
}

}  // namespace

Expected<Override> parse_override(std::string_view assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Error{"override '" + std::string(assignment) + "': expected key.path=value"};
  }
  Override o;
  o.path = std::string(assignment.substr(0, eq));
  const std::string text(assignment.substr(eq + 1));
  o.value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (o.value.is_discarded()) o.value = text;
  return o;
}

Status apply_override(nlohmann::json& tree, const Override& o) {
  const std::vector<std::string> keys = split_path(o.path);
  nlohmann::json* node = &tree;
  std::string walked;
  for (const std::string& key : keys) {
    if (key.empty()) return Error{"override " + o.path + ": empty key in the path"};
    if (!walked.empty()) walked += '.';
    walked += key;
    if (node->is_null()) *node = nlohmann::json::object();
    if (node->is_object()) {
      node = &(*node)[key];
    } else if (node->is_array()) {
      const auto index = index_of(key);
      if (!index || *index >= node->size()) {
        return Error{"override " + o.path + ": " + walked + " is not an element of a list of " +
                     std::to_string(node->size())};
      }
      node = &(*node)[*index];
    } else {
      return Error{"override " + o.path + ": " + walked + " goes inside a " + node->type_name() +
                   ", which has no keys"};
    }
  }
  *node = o.value;
  return Ok{};
}

Expected<ScenarioConfig> load_scenario_with(const std::string& path, const std::vector<Override>& overrides) {
  const std::string file = path.empty() ? default_scenario_path() : path;
  auto tree = read_config_file(file);
  if (!tree) return tree.error();
  for (const Override& o : overrides) {
    if (auto status = apply_override(*tree, o); !status) return Error{file + ": " + status.error().message};
  }
  return parse_scenario(*tree, file);
}

}  // namespace meshsim::configs
