// The plain JSON-lines scanner against the full parser it stands in for: on random lines
// (well-formed rows, their near misses and byte-level mutations), whenever the scanner
// accepts a line the full parser must accept it too and read the same row.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "traces/jsonl_trace_reader.hpp"
#include "traces/plain_json_row.hpp"

namespace meshsim::traces {
namespace {

class LineMaker {
 public:
  LineMaker(std::mt19937_64& rng, const ColumnMapping& mapping) : rng_(rng), mapping_(mapping) {}

  // Half the lines are near misses: any part may be out of the plain subset or wrong.
  std::string line() {
    wild_ = chance(0.5);
    std::string out = space() + "{";
    std::vector<std::string> keys = {mapping_.arrival, mapping_.prompt_tokens, mapping_.output_tokens};
    if (mapping_.hash_ids) keys.push_back(*mapping_.hash_ids);
    if (odd(0.2)) keys.erase(keys.begin() + pick(keys.size()));  // a missing key
    if (odd(0.1)) keys.push_back(keys[pick(keys.size())]);       // a repeated one
    for (int extra = pick(3); extra > 0; --extra) {
      keys.push_back(wild_ ? pick_of({"id", "x\\u0041", "\xc3\xa9", "", escaped(keys[0])}) : pick_of({"id", "turn", ""}));
    }
    std::shuffle(keys.begin(), keys.end(), rng_);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      out += (i ? "," : "") + space() + "\"" + keys[i] + "\"" + space() + ":" + space() + value_for(keys[i]) + space();
    }
    out += "}" + space();
    return odd(0.3) ? mutate(out) : out;
  }

 private:
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  bool odd(double p) { return wild_ && chance(p); }
  int pick(std::size_t n) { return static_cast<int>(std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_)); }
  std::string pick_of(std::vector<std::string> options) { return options[pick(options.size())]; }
  std::string space() { return chance(0.7) ? "" : pick_of({" ", "  ", "\t", "\r", " \r"}); }

  // The same key spelt with an escape: the full parser reads it as the key itself.
  static std::string escaped(const std::string& key) {
    if (key.empty()) return key;
    char code[8];
    std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned char>(key[0]));
    return code + key.substr(1);
  }
  std::string digits(int count) {
    std::string out;
    for (int i = 0; i < count; ++i) out += static_cast<char>('0' + pick(10));
    return out;
  }
  std::string number() {
    const int kind = wild_ ? pick(10) : 0;
    if (kind < 5) return std::to_string(std::uniform_int_distribution<std::uint64_t>(1, 100'000)(rng_));
    if (kind == 5) return digits(1 + pick(22));                             // long, maybe a leading zero
    if (kind == 6) return "-" + std::to_string(pick(1000));
    if (kind == 7) return std::to_string(pick(1000)) + "." + digits(pick(20));
    if (kind == 8) return std::to_string(pick(1000)) + "e" + std::to_string(pick(400));
    return pick_of({"18446744073709551615", "18446744073709551616", "9999999999999999999", "10000000", "10000001", "0"});
  }
  std::string scalar() {
    switch (pick(6)) {
      case 0: return "\"" + (wild_ ? pick_of({"x\\n", "\\q", "\x7f", "\xc3\xa9", "\x01"}) : pick_of({"a", "b c", "2024-01-02 03:04:05"})) + "\"";
      case 1: return wild_ ? pick_of({"tru", "nul", "true", "-"}) : pick_of({"true", "false", "null"});
      default: return number();
    }
  }
  std::string array() {
    std::string out = "[" + space();
    for (int n = pick(6), i = 0; i < n; ++i) out += (i ? "," : "") + space() + (odd(0.1) ? scalar() : number());
    if (odd(0.05)) out += ",";
    return out + space() + (odd(0.05) ? "[]" : "") + "]";
  }
  std::string value_for(const std::string& key) {
    if (odd(0.1)) return pick_of({"{}", "{\"a\":1}", "[[1]]", array(), scalar()});
    if (mapping_.hash_ids && key == *mapping_.hash_ids) return array();
    if (key == mapping_.arrival && mapping_.arrival_format == TimeFormat::kDateTime) {
      return "\"" + pick_of({"2024-01-02 03:04:05", "2024-02-30 00:00:00", "2024-01-02T03:04:05.123456Z", " 2024-01-02 03:04:05"}) + "\"";
    }
    if (key == mapping_.arrival || key == mapping_.prompt_tokens || key == mapping_.output_tokens) return number();
    return chance(0.5) ? scalar() : array();
  }
  std::string mutate(std::string text) {
    const std::size_t at = static_cast<std::size_t>(pick(text.size()));
    switch (pick(3)) {
      case 0: text.erase(at, 1); break;
      case 1: text.insert(at, 1, pick_of({"\"", ",", "{", "]", "-", "\\", "\x01"})[0]); break;
      default: text[at] = static_cast<char>(pick(256)); break;
    }
    return text;
  }

  std::mt19937_64& rng_;
  const ColumnMapping& mapping_;
  bool wild_ = false;
};

TEST(PlainJsonRowTest, WhatItAcceptsTheFullParserReadsTheSame) {
  const std::vector<ColumnMapping> mappings = {
      preset_mapping(TraceFormat::kMooncakeJsonl, {}),
      ColumnMapping{"t", TimeFormat::kDateTime, "p", "o", std::string("h"), std::nullopt, {}},
      ColumnMapping{"t", TimeFormat::kSeconds, "n", "n", std::nullopt, std::nullopt, {}},  // one key for both counts
      ColumnMapping{"t", TimeFormat::kMicroseconds, "p", "o", std::string("t"), std::nullopt, {}},
  };
  std::mt19937_64 rng(23);
  int accepted = 0, left = 0, both_refuse = 0;
  for (int trial = 0; trial < 40'000; ++trial) {
    const ColumnMapping& mapping = mappings[static_cast<std::size_t>(trial) % mappings.size()];
    const std::string line = LineMaker(rng, mapping).line();
    ParsedRow plain, full;
    const bool plain_ok = parse_plain_json_row(line, mapping, plain);
    const bool full_ok = static_cast<bool>(parse_json_row(line, mapping, full));
    if (plain_ok) {
      ++accepted;
      ASSERT_TRUE(full_ok) << line;
      EXPECT_EQ(plain.timestamp_us, full.timestamp_us) << line;
      EXPECT_EQ(plain.prompt_tokens, full.prompt_tokens) << line;
      EXPECT_EQ(plain.output_tokens, full.output_tokens) << line;
      EXPECT_EQ(plain.hash_ids, full.hash_ids) << line;
    } else if (full_ok) {
      ++left;
    } else {
      ++both_refuse;
    }
  }
  // Every kind of outcome is exercised, and the scanner takes most of the rows the full parser reads.
  EXPECT_GT(accepted, 4'000);
  EXPECT_GT(left, 500);
  EXPECT_GT(both_refuse, 10'000);
}

TEST(PlainJsonRowTest, ReadsMooncakeRows) {
  const auto mapping = preset_mapping(TraceFormat::kMooncakeJsonl, {});
  ParsedRow row;
  ASSERT_TRUE(parse_plain_json_row(
      R"({"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 9999999999999999999]})",
      mapping, row));
  EXPECT_EQ(row.timestamp_us, 27'482'000);
  EXPECT_EQ(row.prompt_tokens, 6955u);
  EXPECT_EQ(row.output_tokens, 52u);
  EXPECT_EQ(row.hash_ids, (std::vector<std::uint64_t>{46, 47, 9'999'999'999'999'999'999u}));
}

}  // namespace
}  // namespace meshsim::traces
