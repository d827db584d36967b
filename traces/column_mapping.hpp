#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace meshsim::traces {

// How the arrival column is written.
enum class TimeFormat {
  kSeconds,       // number of seconds (fractions allowed)
  kMilliseconds,  // number of milliseconds
  kMicroseconds,  // number of microseconds
  kDateTime,      // "YYYY-MM-DD HH:MM:SS[.fraction]" (also with 'T'), read as UTC
};
std::optional<TimeFormat> parse_time_format(std::string_view name);
std::string_view to_string(TimeFormat format);

// Which columns (CSV header names or JSON keys) hold the request fields. Arrival times
// become offsets from the first request, whatever their origin.
struct ColumnMapping {
  std::string arrival = "timestamp";
  TimeFormat arrival_format = TimeFormat::kSeconds;
  std::string prompt_tokens = "prompt_tokens";
  std::string output_tokens = "output_tokens";
  // JSONL only: an array of non-negative integers (prefix-block ids).
  std::optional<std::string> hash_ids;
};

enum class TraceFormat {
  kAzureCsv,       // Azure LLM inference trace: TIMESTAMP,ContextTokens,GeneratedTokens
  kMooncakeJsonl,  // Mooncake: timestamp (ms), input_length, output_length, hash_ids
  kCsv,            // any CSV with a header, read through a ColumnMapping
  kJsonl,          // any JSON-lines file, read through a ColumnMapping
};
std::optional<TraceFormat> parse_trace_format(std::string_view name);
std::string_view to_string(TraceFormat format);

// The mapping a format implies (the generic formats take the given one).
ColumnMapping preset_mapping(TraceFormat format, const ColumnMapping& generic);

}  // namespace meshsim::traces
