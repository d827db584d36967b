#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/column_mapping.hpp"

namespace meshsim::traces {

// The largest token count a request may carry (prompt or output): far above any model's
// context window, low enough that sums over a batch never overflow.
inline constexpr std::uint32_t kMaxTokenCount = 10'000'000;

// A token count: a positive decimal integer no larger than kMaxTokenCount.
std::optional<std::uint32_t> parse_token_count(std::string_view text);

// A timestamp in the given format, as microseconds from its own origin (the Unix epoch
// for date-times). Fractions are rounded to the nearest microsecond.
std::optional<std::int64_t> parse_timestamp_us(std::string_view text, TimeFormat format);

// What the expected form of a timestamp in `format` is, for error messages.
std::string_view expected_timestamp_form(TimeFormat format);

// Splits one CSV record (RFC 4180 quoting: "a,b" and "" inside quotes) into fields.
// Returns false when a quoted field is not closed on the line.
bool split_csv_record(std::string_view line, std::vector<std::string>& fields);

// The index of `name` among a mapping's class names, or an error message naming the
// names expected (the caller names the column or key).
struct ClassLookup {
  std::optional<std::uint8_t> index;
  std::string error;
};
ClassLookup find_service_class(const ColumnMapping& mapping, std::string_view name);

// Quotes `text` for an error message, cut to a readable length.
std::string quote_for_message(std::string_view text);

}  // namespace meshsim::traces
