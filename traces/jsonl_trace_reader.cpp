#include "traces/jsonl_trace_reader.hpp"

#include <nlohmann/json.hpp>
#include <utility>

#include "traces/field_parsing.hpp"
#include "traces/json_text.hpp"
#include "traces/plain_json_row.hpp"

namespace meshsim::traces {
namespace {

using nlohmann::json;

std::string shown(const json& value) { return quote_for_message(json_for_message(value, 1 << 20)); }

}  // namespace

JsonlTraceReader::JsonlTraceReader(std::unique_ptr<std::istream> input, std::string name,
                                   std::uint64_t total_bytes, ColumnMapping mapping)
    : LineTraceReader(std::move(input), std::move(name), total_bytes), mapping_(std::move(mapping)) {}

std::string JsonlTraceReader::expected_content() const {
  return "one JSON object per line with keys '" + mapping_.arrival + "', '" + mapping_.prompt_tokens +
         "' and '" + mapping_.output_tokens + "'";
}

Status JsonlTraceReader::parse_row(const std::string& line, ParsedRow& row) {
  if (parse_plain_json_row(line, mapping_, row)) return Ok{};
  row.hash_ids.clear();
  return parse_json_row(line, mapping_, row);
}

Status parse_json_row(std::string_view line, const ColumnMapping& mapping, ParsedRow& row) {
  json object;
  try {
    object = parse_json_text(line);
  } catch (const JsonTooDeep& e) {
    return Error{std::string("expected a JSON object: ") + e.what()};
  } catch (const json::parse_error& e) {
    return Error{"column " + std::to_string(e.byte) + ": expected a JSON object: " +
                 std::string(e.what())};
  } catch (const json::exception& e) {
    // Valid syntax the parser still refuses, e.g. a number beyond double range.
    return Error{"expected a JSON object: " + std::string(e.what())};
  }
  if (!object.is_object()) return Error{"expected a JSON object, got " + shown(object)};

  const auto arrival = object.find(mapping.arrival);
  if (arrival == object.end()) return Error{"missing key '" + mapping.arrival + "'"};
  std::optional<std::int64_t> timestamp;
  if (mapping.arrival_format == TimeFormat::kDateTime) {
    if (arrival->is_string()) timestamp = parse_timestamp_us(arrival->get<std::string>(), TimeFormat::kDateTime);
  } else if (arrival->is_number()) {
    // Re-read through the text parser so every format shares one set of rules.
    timestamp = parse_timestamp_us(arrival->dump(), mapping.arrival_format);
  }
  if (!timestamp) {
    return Error{"key '" + mapping.arrival + "': expected " +
                 std::string(expected_timestamp_form(mapping.arrival_format)) + ", got " +
                 shown(*arrival)};
  }
  row.timestamp_us = *timestamp;

  auto count = [&](const std::string& key, std::uint32_t& out) -> Status {
    const auto it = object.find(key);
    if (it == object.end()) return Error{"missing key '" + key + "'"};
    std::optional<std::uint32_t> value;
    if (it->is_number_integer()) value = parse_token_count(it->dump());
    if (!value) {
      return Error{"key '" + key + "': expected a positive integer token count (at most " +
                   std::to_string(kMaxTokenCount) + "), got " + shown(*it)};
    }
    out = *value;
    return Ok{};
  };
  if (auto s = count(mapping.prompt_tokens, row.prompt_tokens); !s) return s;
  if (auto s = count(mapping.output_tokens, row.output_tokens); !s) return s;
  if (mapping.service_class) {
    const auto it = object.find(*mapping.service_class);
    if (it == object.end()) return Error{"missing key '" + *mapping.service_class + "'"};
    if (!it->is_string()) return Error{"key '" + *mapping.service_class + "': expected a class name, got " + shown(*it)};
    const ClassLookup found = find_service_class(mapping, it->get<std::string>());
    if (!found.index) return Error{"key '" + *mapping.service_class + "': " + found.error};
    row.service_class = *found.index;
  }

  if (mapping.hash_ids) {
    const auto it = object.find(*mapping.hash_ids);
    if (it != object.end()) {
      if (!it->is_array()) return Error{"key '" + *mapping.hash_ids + "': expected an array of block ids"};
      row.hash_ids.reserve(it->size());
      for (const auto& id : *it) {
        if (!id.is_number_unsigned()) {
          return Error{"key '" + *mapping.hash_ids + "': expected non-negative integer block ids, got " +
                       shown(id)};
        }
        row.hash_ids.push_back(id.get<std::uint64_t>());
      }
    }
  }
  return Ok{};
}

}  // namespace meshsim::traces
