#include "traces/field_parsing.hpp"

#include <charconv>
#include <cmath>

namespace meshsim::traces {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<double> parse_finite_double(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// Reads exactly `digits` decimal digits at text[pos...].
std::optional<int> fixed_digits(std::string_view text, std::size_t pos, std::size_t digits) {
  if (pos + digits > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = pos; i < pos + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// Days from 1970-01-01 to the given civil date (proleptic Gregorian), after H. Hinnant.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

unsigned days_in_month(int year, int month) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

std::optional<std::int64_t> parse_datetime_us(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.back() == 'Z') text.remove_suffix(1);
  // YYYY-MM-DD?HH:MM:SS
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || (text[10] != ' ' && text[10] != 'T') ||
      text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  const auto year = fixed_digits(text, 0, 4);
  const auto month = fixed_digits(text, 5, 2);
  const auto day = fixed_digits(text, 8, 2);
  const auto hour = fixed_digits(text, 11, 2);
  const auto minute = fixed_digits(text, 14, 2);
  const auto second = fixed_digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 ||
      static_cast<unsigned>(*day) > days_in_month(*year, *month) || *hour > 23 || *minute > 59 ||
      *second > 60) {
    return std::nullopt;
  }
  // Fraction: up to 9 digits, rounded to microseconds.
  std::int64_t fraction_us = 0;
  if (text.size() > 19) {
    if (text[19] != '.' || text.size() == 20 || text.size() > 29) return std::nullopt;
    std::int64_t nanos = 0;
    std::size_t digits = 0;
    for (std::size_t i = 20; i < text.size(); ++i, ++digits) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      nanos = nanos * 10 + (text[i] - '0');
    }
    for (; digits < 9; ++digits) nanos *= 10;
    fraction_us = (nanos + 500) / 1000;
  }
  const std::int64_t days = days_from_civil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day));
  const std::int64_t seconds = days * 86400 + *hour * 3600 + *minute * 60 + *second;
  return seconds * 1'000'000 + fraction_us;
}

}  // namespace

std::optional<std::uint32_t> parse_token_count(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value == 0 || value > kMaxTokenCount) return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

std::optional<std::int64_t> parse_timestamp_us(std::string_view text, TimeFormat format) {
  if (format == TimeFormat::kDateTime) return parse_datetime_us(text);
  const auto value = parse_finite_double(text);
  if (!value) return std::nullopt;
  double scale = 1.0;
  switch (format) {
    case TimeFormat::kSeconds: scale = 1e6; break;
    case TimeFormat::kMilliseconds: scale = 1e3; break;
    case TimeFormat::kMicroseconds: scale = 1.0; break;
    case TimeFormat::kDateTime: break;
  }
  const double us = std::round(*value * scale);
  // About 126,000 years either way: beyond it the value is garbage, not a time, and the
  // bound keeps differences between two timestamps inside int64.
  if (std::fabs(us) > 4.0e18) return std::nullopt;
  return static_cast<std::int64_t>(us);
}

std::string_view expected_timestamp_form(TimeFormat format) {
  switch (format) {
    case TimeFormat::kSeconds: return "a number of seconds";
    case TimeFormat::kMilliseconds: return "a number of milliseconds";
    case TimeFormat::kMicroseconds: return "a number of microseconds";
    case TimeFormat::kDateTime: return "a date-time 'YYYY-MM-DD HH:MM:SS[.fraction]'";
  }
  return "a timestamp";
}

bool split_csv_record(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  fields.emplace_back();
  bool in_quotes = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (in_quotes) {
      if (ch == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          fields.back().push_back('"');
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        fields.back().push_back(ch);
      }
    } else if (ch == ',') {
      fields.emplace_back();
    } else if (ch == '"' && fields.back().empty()) {
      in_quotes = true;
    } else {
      fields.back().push_back(ch);
    }
  }
  return !in_quotes;
}

std::string quote_for_message(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out = "'";
  out.append(text.substr(0, kMax));
  if (text.size() > kMax) out += "...";
  out += "'";
  return out;
}

ClassLookup find_service_class(const ColumnMapping& mapping, std::string_view name) {
  std::string names;
  for (std::size_t i = 0; i < mapping.class_names.size(); ++i) {
    if (mapping.class_names[i] == name) return ClassLookup{static_cast<std::uint8_t>(i), {}};
    names += (i == 0 ? "'" : ", '") + mapping.class_names[i] + "'";
  }
  return ClassLookup{std::nullopt,
                     "expected a class of the scenario's classes (" + names + "), got " + quote_for_message(name)};
}

}  // namespace meshsim::traces
