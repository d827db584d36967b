#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "traces/trace_request.hpp"

namespace meshsim::traces {

// What a format-specific parser extracts from one line before the shared checks.
struct ParsedRow {
  std::int64_t timestamp_us = 0;  // in the source's own origin
  std::uint32_t prompt_tokens = 0;
  std::uint32_t output_tokens = 0;
  std::vector<std::uint64_t> hash_ids;
  std::uint8_t service_class = 0;
};

// The part every line-oriented trace reader shares: reading one line at a time (so the
// trace is streamed), line numbers for messages, CR/LF and blank-line handling, turning
// timestamps into offsets from the first row, and rejecting timestamps that go back.
// Derived readers parse the header (if any) and each row.
class LineTraceReader : public RequestSource {
 public:
  // The longest line a trace may have. Real rows are short (Mooncake's, with their prefix
  // hashes, reach 2 KB); the bound keeps one bad line from taking gigabytes once parsed.
  // It counts the bytes before the line's '\n', a '\r' included.
  static constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

  // `name` is used in messages (usually the path). `total_bytes` (0 when unknown) drives
  // progress().
  LineTraceReader(std::unique_ptr<std::istream> input, std::string name, std::uint64_t total_bytes);

  Expected<std::optional<TraceRequest>> next() final;
  double progress() const final;
  std::string describe() const final { return name_; }

 protected:
  // Called with the first non-blank line when has_header() is true.
  virtual Status parse_header(const std::string& line) = 0;
  virtual bool has_header() const = 0;
  // Parses a data line; errors say which column and what was expected, without the
  // file:line prefix (added here).
  virtual Status parse_row(const std::string& line, ParsedRow& row) = 0;
  // What an empty file should have contained, for the message.
  virtual std::string expected_content() const = 0;

  Error error_here(const std::string& what) const;

 private:
  // Reads the next non-blank line into line_; false at end of input or on a line longer
  // than kMaxLineBytes (too_long_ is then set).
  bool read_line();
  Expected<std::optional<TraceRequest>> fail(Error error);
  Error line_too_long() const;

  std::unique_ptr<std::istream> input_;
  std::string name_;
  std::uint64_t total_bytes_;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t line_number_ = 0;
  std::string line_;
  // Bytes read from input_ and not yet consumed: [next_, end_) of buffer_.
  std::vector<char> buffer_ = std::vector<char>(std::size_t{1} << 16);
  const char* next_ = nullptr;
  const char* end_ = nullptr;
  bool too_long_ = false;
  bool started_ = false;
  bool finished_ = false;
  std::optional<Error> error_;
  std::uint64_t rows_ = 0;
  std::optional<std::int64_t> origin_us_;
  std::int64_t previous_us_ = 0;
  ParsedRow row_;
};

}  // namespace meshsim::traces
