#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/engine/expected.hpp"

namespace meshsim::configs {

// Reads a config file into a JSON tree: JSON, or YAML when the name ends in .yaml/.yml
// (converted to the same tree, so one validator serves both). Syntax errors name the
// file, line and column.
Expected<nlohmann::json> read_config_file(const std::string& path);

// Parses YAML text into a JSON tree; `name` is used in messages.
Expected<nlohmann::json> parse_yaml(const std::string& text, const std::string& name);

}  // namespace meshsim::configs
