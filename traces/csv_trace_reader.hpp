#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "traces/column_mapping.hpp"
#include "traces/line_trace_reader.hpp"

namespace meshsim::traces {

// A CSV trace with a header line, its columns named by a ColumnMapping (the Azure LLM
// inference trace is the mapping TIMESTAMP / ContextTokens / GeneratedTokens).
class CsvTraceReader final : public LineTraceReader {
 public:
  CsvTraceReader(std::unique_ptr<std::istream> input, std::string name, std::uint64_t total_bytes,
                 ColumnMapping mapping);

 private:
  bool has_header() const override { return true; }
  Status parse_header(const std::string& line) override;
  Status parse_row(const std::string& line, ParsedRow& row) override;
  std::string expected_content() const override;

  ColumnMapping mapping_;
  std::size_t header_fields_ = 0;
  std::size_t arrival_column_ = 0;
  std::size_t prompt_column_ = 0;
  std::size_t output_column_ = 0;
  std::size_t class_column_ = 0;  // with mapping_.service_class
  std::vector<std::string> fields_;
};

}  // namespace meshsim::traces
