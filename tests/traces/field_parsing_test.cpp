#include "traces/field_parsing.hpp"

#include <gtest/gtest.h>

namespace meshsim::traces {
namespace {

TEST(FieldParsingTest, TokenCountsArePositiveIntegers) {
  EXPECT_EQ(parse_token_count("374"), 374u);
  EXPECT_EQ(parse_token_count(" 12 "), 12u);
  EXPECT_FALSE(parse_token_count("0"));
  EXPECT_FALSE(parse_token_count("-5"));
  EXPECT_FALSE(parse_token_count("12.5"));
  EXPECT_FALSE(parse_token_count("abc"));
  EXPECT_FALSE(parse_token_count(""));
  EXPECT_FALSE(parse_token_count("10000001"));
  EXPECT_FALSE(parse_token_count("99999999999999999999999"));
}

TEST(FieldParsingTest, DateTimesBecomeMicrosecondsSinceTheEpoch) {
  // 2023-11-16 is day 19,677 since 1970-01-01.
  const std::int64_t midnight = 19677LL * 86400 * 1'000'000;
  EXPECT_EQ(parse_timestamp_us("2023-11-16 00:00:00", TimeFormat::kDateTime), midnight);
  EXPECT_EQ(parse_timestamp_us("2023-11-16 18:15:46.6805900", TimeFormat::kDateTime),
            midnight + (18 * 3600 + 15 * 60 + 46) * 1'000'000LL + 680590);
  // 100 ns precision is rounded to the nearest microsecond.
  EXPECT_EQ(parse_timestamp_us("2023-11-16T00:00:00.0000015Z", TimeFormat::kDateTime), midnight + 2);
  EXPECT_FALSE(parse_timestamp_us("2023-02-30 00:00:00", TimeFormat::kDateTime));
  EXPECT_FALSE(parse_timestamp_us("2023-11-16", TimeFormat::kDateTime));
  EXPECT_FALSE(parse_timestamp_us("16/11/2023 10:00:00", TimeFormat::kDateTime));
  EXPECT_FALSE(parse_timestamp_us("2023-11-16 10:00:00.", TimeFormat::kDateTime));
}

TEST(FieldParsingTest, NumericTimestampsHonourTheirUnit) {
  EXPECT_EQ(parse_timestamp_us("1.5", TimeFormat::kSeconds), 1'500'000);
  EXPECT_EQ(parse_timestamp_us("1500", TimeFormat::kMilliseconds), 1'500'000);
  EXPECT_EQ(parse_timestamp_us("7", TimeFormat::kMicroseconds), 7);
  EXPECT_FALSE(parse_timestamp_us("nan", TimeFormat::kSeconds));
  EXPECT_FALSE(parse_timestamp_us("1e300", TimeFormat::kSeconds));
  EXPECT_FALSE(parse_timestamp_us("12s", TimeFormat::kSeconds));
}

TEST(FieldParsingTest, CsvRecordsHonourQuotes) {
  std::vector<std::string> fields;
  ASSERT_TRUE(split_csv_record(R"(a,"b,c","say ""hi""",)", fields));
  EXPECT_EQ(fields, (std::vector<std::string>{"a", "b,c", "say \"hi\"", ""}));
  EXPECT_FALSE(split_csv_record(R"(a,"open)", fields));
}

}  // namespace
}  // namespace meshsim::traces
