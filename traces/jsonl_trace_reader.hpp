#pragma once

#include <string>
#include <string_view>

#include "traces/column_mapping.hpp"
#include "traces/line_trace_reader.hpp"

namespace meshsim::traces {

// One JSON-lines row read with the full JSON parser: what every line the plain scanner
// (plain_json_row.hpp) leaves becomes, and the source of every error message.
Status parse_json_row(std::string_view line, const ColumnMapping& mapping, ParsedRow& row);

// A JSON-lines trace: one object per line, its keys named by a ColumnMapping (Mooncake
// is timestamp (ms) / input_length / output_length / hash_ids).
class JsonlTraceReader final : public LineTraceReader {
 public:
  JsonlTraceReader(std::unique_ptr<std::istream> input, std::string name, std::uint64_t total_bytes,
                   ColumnMapping mapping);

 private:
  bool has_header() const override { return false; }
  Status parse_header(const std::string&) override { return Ok{}; }
  Status parse_row(const std::string& line, ParsedRow& row) override;
  std::string expected_content() const override;

  ColumnMapping mapping_;
};

}  // namespace meshsim::traces
