#include "traces/column_mapping.hpp"

namespace meshsim::traces {

std::optional<TimeFormat> parse_time_format(std::string_view name) {
  if (name == "s") return TimeFormat::kSeconds;
  if (name == "ms") return TimeFormat::kMilliseconds;
  if (name == "us") return TimeFormat::kMicroseconds;
  if (name == "datetime") return TimeFormat::kDateTime;
  return std::nullopt;
}

std::string_view to_string(TimeFormat format) {
  switch (format) {
    case TimeFormat::kSeconds: return "s";
    case TimeFormat::kMilliseconds: return "ms";
    case TimeFormat::kMicroseconds: return "us";
    case TimeFormat::kDateTime: return "datetime";
  }
  return "?";
}

std::optional<TraceFormat> parse_trace_format(std::string_view name) {
  if (name == "azure") return TraceFormat::kAzureCsv;
  if (name == "mooncake") return TraceFormat::kMooncakeJsonl;
  if (name == "csv") return TraceFormat::kCsv;
  if (name == "jsonl") return TraceFormat::kJsonl;
  return std::nullopt;
}

std::string_view to_string(TraceFormat format) {
  switch (format) {
    case TraceFormat::kAzureCsv: return "azure";
    case TraceFormat::kMooncakeJsonl: return "mooncake";
    case TraceFormat::kCsv: return "csv";
    case TraceFormat::kJsonl: return "jsonl";
  }
  return "?";
}

ColumnMapping preset_mapping(TraceFormat format, const ColumnMapping& generic) {
  switch (format) {
    case TraceFormat::kAzureCsv:
      return ColumnMapping{"TIMESTAMP", TimeFormat::kDateTime, "ContextTokens", "GeneratedTokens",
                           std::nullopt};
    case TraceFormat::kMooncakeJsonl:
      return ColumnMapping{"timestamp", TimeFormat::kMilliseconds, "input_length", "output_length",
                           "hash_ids"};
    case TraceFormat::kCsv:
    case TraceFormat::kJsonl:
      return generic;
  }
  return generic;
}

}  // namespace meshsim::traces
