#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/engine/enum_names.hpp"

namespace meshsim::traces {

// How the arrival column is written.
enum class TimeFormat {
  kSeconds,       // number of seconds (fractions allowed)
  kMilliseconds,  // number of milliseconds
  kMicroseconds,  // number of microseconds
  kDateTime,      // "YYYY-MM-DD HH:MM:SS[.fraction]" (also with 'T'), read as UTC
};
inline constexpr EnumNames kTimeFormatNames{std::array{
    std::pair{TimeFormat::kSeconds, std::string_view("s")}, std::pair{TimeFormat::kMilliseconds, std::string_view("ms")},
    std::pair{TimeFormat::kMicroseconds, std::string_view("us")},
    std::pair{TimeFormat::kDateTime, std::string_view("datetime")}}};

// Which columns (CSV header names or JSON keys) hold the request fields. Arrival times
// become offsets from the first request, whatever their origin.
struct ColumnMapping {
  std::string arrival = "timestamp";
  TimeFormat arrival_format = TimeFormat::kSeconds;
  std::string prompt_tokens = "prompt_tokens";
  std::string output_tokens = "output_tokens";
  // JSONL only: an array of non-negative integers (prefix-block ids).
  std::optional<std::string> hash_ids;
  // CSV and JSONL: the column naming each request's class of service, one of
  // class_names (the scenario's classes, in order).
  std::optional<std::string> service_class;
  std::vector<std::string> class_names;
};

enum class TraceFormat {
  kAzureCsv,       // Azure LLM inference trace: TIMESTAMP,ContextTokens,GeneratedTokens
  kMooncakeJsonl,  // Mooncake: timestamp (ms), input_length, output_length, hash_ids
  kCsv,            // any CSV with a header, read through a ColumnMapping
  kJsonl,          // any JSON-lines file, read through a ColumnMapping
};
inline constexpr EnumNames kTraceFormatNames{std::array{
    std::pair{TraceFormat::kAzureCsv, std::string_view("azure")},
    std::pair{TraceFormat::kMooncakeJsonl, std::string_view("mooncake")},
    std::pair{TraceFormat::kCsv, std::string_view("csv")}, std::pair{TraceFormat::kJsonl, std::string_view("jsonl")}}};

// The mapping a format implies (the generic formats take the given one; every format
// keeps the given class column).
ColumnMapping preset_mapping(TraceFormat format, const ColumnMapping& generic);

}  // namespace meshsim::traces
