#include "configs/config_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

#include "traces/json_text.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Thrown inside the conversion, caught in parse_yaml: YAML accepts bytes that are not
// UTF-8, JSON trees must not hold them (they could not even be printed in a message).
struct InvalidUtf8 {
  YAML::Mark mark;
};

bool is_valid_utf8(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    std::uint32_t code = 0;
    if (byte < 0x80) {
      ++i;
      continue;
    } else if ((byte & 0xE0) == 0xC0) {
      length = 2;
      code = byte & 0x1F;
    } else if ((byte & 0xF0) == 0xE0) {
      length = 3;
      code = byte & 0x0F;
    } else if ((byte & 0xF8) == 0xF0) {
      length = 4;
      code = byte & 0x07;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static constexpr std::uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

// A plain (unquoted) YAML scalar is typed the YAML 1.2 core-schema way; a quoted one is
// always a string.
json scalar_to_json(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (!is_valid_utf8(text)) throw InvalidUtf8{node.Mark()};
  if (node.Tag() == "!") return text;  // quoted
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") return nullptr;
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  std::int64_t integer = 0;
  if (auto [p, ec] = std::from_chars(begin, end, integer); ec == std::errc() && p == end) {
    if (integer >= 0) return static_cast<std::uint64_t>(integer);
    return integer;
  }
  double number = 0;
  if (auto [p, ec] = std::from_chars(begin, end, number); ec == std::errc() && p == end) return number;
  return text;
}

json yaml_to_json(const YAML::Node& node, int depth = 0) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar_to_json(node);
    case YAML::NodeType::Sequence: {
      if (depth >= traces::kMaxJsonNesting) throw traces::JsonTooDeep();
      json array = json::array();
      for (const auto& item : node) array.push_back(yaml_to_json(item, depth + 1));
      return array;
    }
    case YAML::NodeType::Map: {
      if (depth >= traces::kMaxJsonNesting) throw traces::JsonTooDeep();
      json object = json::object();
      for (const auto& entry : node) {
        const auto key = entry.first.as<std::string>();
        if (!is_valid_utf8(key)) throw InvalidUtf8{entry.first.Mark()};
        object[key] = yaml_to_json(entry.second, depth + 1);
      }
      return object;
    }
  }
  return nullptr;
}

}  // namespace

Expected<json> parse_yaml(const std::string& text, const std::string& name) {
  try {
    return yaml_to_json(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    return Error{name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                 ": invalid YAML: " + e.msg};
  } catch (const InvalidUtf8& e) {
    return Error{name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                 ": invalid YAML: text that is not UTF-8"};
  } catch (const traces::JsonTooDeep& e) {
    return Error{name + ": invalid YAML: " + e.what()};
  }
}

PathKind path_kind(const std::filesystem::path& path, std::string* reason) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (status.type() == fs::file_type::not_found) return PathKind::kMissing;
  if (error) {
    if (reason != nullptr) *reason = error.message();
    return PathKind::kUnreachable;
  }
  if (fs::is_regular_file(status)) return PathKind::kFile;
  return fs::is_directory(status) ? PathKind::kFolder : PathKind::kOther;
}

Expected<std::vector<std::filesystem::path>> folder_entries(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::vector<fs::path> entries;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    entries.push_back(it->path());
  }
  if (error) return Error{folder.string() + ": cannot list the folder: " + error.message()};
  std::sort(entries.begin(), entries.end());
  return entries;
}

Expected<std::string> read_config_text(const std::string& path, std::string_view what) {
  std::string reason;
  const PathKind kind = path_kind(path, &reason);
  if (kind == PathKind::kMissing || kind == PathKind::kUnreachable) {
    return Error{path + ": cannot open the " + std::string(what) + (reason.empty() ? "" : " (" + reason + ")")};
  }
  std::error_code error;
  if (kind != PathKind::kFile) {
    return Error{path + ": not a regular file (a " + std::string(what) +
                 " is read whole: not a device, pipe or folder)"};
  }
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return Error{path + ": cannot open the " + std::string(what) + ": " + error.message()};
  if (size > kMaxConfigFileBytes) {
    return Error{path + ": " + std::to_string(size) + " bytes; a " + std::string(what) + " holds at most " +
                 std::to_string(kMaxConfigFileBytes >> 20) + " MiB"};
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{path + ": cannot open the " + std::string(what)};
  std::string text(static_cast<std::size_t>(size), '\0');
  file.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(file.gcount()));  // it may have shrunk since
  return text;
}

Expected<json> read_config_file(const std::string& path) {
  auto read = read_config_text(path);
  if (!read) return read.error();
  const std::string& text = *read;
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) return parse_yaml(text, path);
  try {
    return traces::parse_json_text(text);
  } catch (const traces::JsonTooDeep& e) {
    return Error{path + ": invalid JSON: " + e.what()};
  } catch (const json::parse_error& e) {
    // Turn the byte offset into line:column.
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Error{path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": invalid JSON: " + e.what()};
  } catch (const json::exception& e) {
    // Valid syntax the parser still refuses, e.g. a number beyond double range.
    return Error{path + ": invalid JSON: " + e.what()};
  }
}

}  // namespace meshsim::configs
