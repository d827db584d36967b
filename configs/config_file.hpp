#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/expected.hpp"

namespace meshsim::configs {

// The most a config-like file (config, grid, script, catalog entry, scheduler state) may
// hold: far beyond any real one, and a bound on what a wrong path can cost.
inline constexpr std::uintmax_t kMaxConfigFileBytes = std::uintmax_t{256} << 20;

// What is at a path, links followed, learned without throwing (std::filesystem's exists
// and is_directory throw on a link loop). kUnreachable: a link loop, a folder on the way
// that cannot be searched; `reason`, when given, says which.
enum class PathKind { kMissing, kFile, kFolder, kOther, kUnreachable };
PathKind path_kind(const std::filesystem::path& path, std::string* reason = nullptr);

// The entries of a folder, sorted; an error naming it when it cannot be listed.
Expected<std::vector<std::filesystem::path>> folder_entries(const std::filesystem::path& folder);

// The text of a config-like file. Refused, naming the path and what it is (`what`: "config
// file", "state file"), when it is not a regular file (a device such as /dev/zero, a pipe,
// a folder: each would read forever or fail late) or holds more than kMaxConfigFileBytes.
Expected<std::string> read_config_text(const std::string& path, std::string_view what = "config file");

// Reads a config file into a JSON tree: JSON, or YAML when the name ends in .yaml/.yml
// (converted to the same tree, so one validator serves both). Syntax errors name the
// file, line and column.
Expected<nlohmann::json> read_config_file(const std::string& path);

// Parses YAML text into a JSON tree; `name` is used in messages.
Expected<nlohmann::json> parse_yaml(const std::string& text, const std::string& name);

}  // namespace meshsim::configs
