#include "traces/plain_json_row.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

#include "traces/field_parsing.hpp"

namespace meshsim::traces {
namespace {

// A cursor over one line; every reader returns false when the text leaves the plain subset.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool at_end() const { return pos_ == text_.size(); }
  // JSON's whitespace (a line has no '\n' left, but the set is the grammar's).
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r' || text_[pos_] == '\n')) {
      ++pos_;
    }
  }
  bool take(char c) {
    skip_space();
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  // A string of printable ASCII without escapes: its text is its value.
  bool string(std::string_view& out) {
    if (!take('"')) return false;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c < 0x20 || c > 0x7e || c == '\\') return false;
      ++pos_;
    }
    if (pos_ == text_.size()) return false;
    out = text_.substr(start, pos_ - start);
    ++pos_;
    return true;
  }

  // A non-negative integer without a leading zero or sign, at most `max_digits` long, so
  // that it fits in 64 bits and the full parser keeps its text as is.
  bool natural(std::string_view& out, std::size_t max_digits) {
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    const std::size_t digits = pos_ - start;
    if (digits == 0 || digits > max_digits || (digits > 1 && text_[start] == '0')) return false;
    out = text_.substr(start, digits);
    return true;
  }

  // A value no field is read from: a short number, a literal, a plain string, or a flat
  // array of those. Bounded lengths keep every number inside double's range.
  bool skip_value() {
    if (peek('[')) {
      ++pos_;
      if (take(']')) return true;
      do {
        if (!skip_scalar()) return false;
      } while (take(','));
      return take(']');
    }
    return skip_scalar();
  }

 private:
  bool skip_scalar() {
    skip_space();
    if (pos_ == text_.size()) return false;
    std::string_view ignored;
    switch (text_[pos_]) {
      case '"': return string(ignored);
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: break;
    }
    if (text_[pos_] == '-' && (++pos_ == text_.size() || text_[pos_] < '0' || text_[pos_] > '9')) return false;
    if (!natural(ignored, 18)) return false;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      const std::size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      if (pos_ == start || pos_ - start > 18) return false;
    }
    return true;
  }
  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

// Below 10^19, so any such run of digits is an unsigned 64-bit integer.
constexpr std::size_t kMaxIdDigits = 19;
// Below 10^18: the full parser keeps such an integer exact.
constexpr std::size_t kMaxFieldDigits = 18;

}  // namespace

bool parse_plain_json_row(std::string_view line, const ColumnMapping& mapping, ParsedRow& row) {
  if (mapping.service_class) return false;  // class names are read by the full parser
  Scanner in(line);
  // An empty object lacks the mapped keys: the full parser words the error.
  if (!in.take('{') || in.take('}')) return false;
  bool has_arrival = false, has_prompt = false, has_output = false, has_ids = false;
  do {
    std::string_view key;
    if (!in.string(key) || !in.take(':')) return false;
    const bool arrival = key == mapping.arrival;
    const bool prompt = key == mapping.prompt_tokens;
    const bool output = key == mapping.output_tokens;
    const bool ids = mapping.hash_ids && key == *mapping.hash_ids;
    // The full parser keeps the last of repeated keys; leave such lines to it.
    if ((arrival && has_arrival) || (prompt && has_prompt) || (output && has_output) || (ids && has_ids)) {
      return false;
    }
    if (ids) {
      // A mapped key serving two roles (the ids and a count) is left to the full parser.
      if (arrival || prompt || output || !in.take('[')) return false;
      has_ids = true;
      if (!in.take(']')) {
        do {
          std::string_view digits;
          if (!in.natural(digits, kMaxIdDigits)) return false;
          std::uint64_t id = 0;
          std::from_chars(digits.data(), digits.data() + digits.size(), id);
          row.hash_ids.push_back(id);
        } while (in.take(','));
        if (!in.take(']')) return false;
      }
    } else if (arrival || prompt || output) {
      std::string_view text;
      if (arrival && mapping.arrival_format == TimeFormat::kDateTime) {
        if (prompt || output || !in.string(text)) return false;
      } else if (!in.natural(text, kMaxFieldDigits)) {
        return false;
      }
      if (arrival) {
        const auto timestamp = parse_timestamp_us(text, mapping.arrival_format);
        if (!timestamp) return false;
        row.timestamp_us = *timestamp;
        has_arrival = true;
      }
      const auto count = [&](std::uint32_t& out, bool& seen) {
        const auto value = parse_token_count(text);
        if (value) out = *value;
        seen = value.has_value();
        return seen;
      };
      if (prompt && !count(row.prompt_tokens, has_prompt)) return false;
      if (output && !count(row.output_tokens, has_output)) return false;
    } else if (!in.skip_value()) {
      return false;
    }
  } while (in.take(','));
  if (!in.take('}')) return false;
  in.skip_space();
  return in.at_end() && has_arrival && has_prompt && has_output;
}

}  // namespace meshsim::traces
