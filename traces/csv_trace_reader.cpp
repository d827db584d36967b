#include "traces/csv_trace_reader.hpp"

#include <utility>

#include "traces/field_parsing.hpp"

namespace meshsim::traces {

CsvTraceReader::CsvTraceReader(std::unique_ptr<std::istream> input, std::string name,
                               std::uint64_t total_bytes, ColumnMapping mapping)
    : LineTraceReader(std::move(input), std::move(name), total_bytes), mapping_(std::move(mapping)) {}

std::string CsvTraceReader::expected_content() const {
  return "a header line naming the columns '" + mapping_.arrival + "', '" + mapping_.prompt_tokens +
         "' and '" + mapping_.output_tokens + "', then one request per line";
}

Status CsvTraceReader::parse_header(const std::string& line) {
  if (!split_csv_record(line, fields_)) return Error{"header: unclosed quote"};
  // Tolerate a UTF-8 byte-order mark before the first name.
  if (fields_[0].rfind("\xEF\xBB\xBF", 0) == 0) fields_[0].erase(0, 3);
  header_fields_ = fields_.size();
  auto find = [&](const std::string& column, std::size_t& index) -> Status {
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      if (fields_[i] == column) {
        index = i;
        return Ok{};
      }
    }
    std::string seen;
    for (const auto& field : fields_) seen += (seen.empty() ? "" : ", ") + quote_for_message(field);
    return Error{"header: missing column '" + column + "' (the header has " + seen + ")"};
  };
  if (auto s = find(mapping_.arrival, arrival_column_); !s) return s;
  if (auto s = find(mapping_.prompt_tokens, prompt_column_); !s) return s;
  if (mapping_.service_class) {
    if (auto s = find(*mapping_.service_class, class_column_); !s) return s;
  }
  return find(mapping_.output_tokens, output_column_);
}

Status CsvTraceReader::parse_row(const std::string& line, ParsedRow& row) {
  if (!split_csv_record(line, fields_)) return Error{"unclosed quote"};
  if (fields_.size() != header_fields_) {
    return Error{"expected " + std::to_string(header_fields_) + " fields as in the header, found " +
                 std::to_string(fields_.size())};
  }
  const auto timestamp = parse_timestamp_us(fields_[arrival_column_], mapping_.arrival_format);
  if (!timestamp) {
    return Error{"column '" + mapping_.arrival + "': expected " +
                 std::string(expected_timestamp_form(mapping_.arrival_format)) + ", got " +
                 quote_for_message(fields_[arrival_column_])};
  }
  row.timestamp_us = *timestamp;
  auto count = [&](std::size_t column, const std::string& name, std::uint32_t& out) -> Status {
    const auto value = parse_token_count(fields_[column]);
    if (!value) {
      return Error{"column '" + name + "': expected a positive integer token count (at most " +
                   std::to_string(kMaxTokenCount) + "), got " + quote_for_message(fields_[column])};
    }
    out = *value;
    return Ok{};
  };
  if (auto s = count(prompt_column_, mapping_.prompt_tokens, row.prompt_tokens); !s) return s;
  if (auto s = count(output_column_, mapping_.output_tokens, row.output_tokens); !s) return s;
  if (!mapping_.service_class) return Ok{};
  const ClassLookup found = find_service_class(mapping_, fields_[class_column_]);
  if (!found.index) return Error{"column '" + *mapping_.service_class + "': " + found.error};
  row.service_class = *found.index;
  return Ok{};
}

}  // namespace meshsim::traces
