#include "traces/line_trace_reader.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace meshsim::traces {

LineTraceReader::LineTraceReader(std::unique_ptr<std::istream> input, std::string name,
                                 std::uint64_t total_bytes)
    : input_(std::move(input)), name_(std::move(name)), total_bytes_(total_bytes) {}

double LineTraceReader::progress() const {
  if (finished_) return 1.0;
  if (total_bytes_ == 0) return 0.0;
  return std::min(1.0, static_cast<double>(bytes_read_) / static_cast<double>(total_bytes_));
}

Error LineTraceReader::error_here(const std::string& what) const {
  return Error{name_ + ":" + std::to_string(line_number_) + ": " + what};
}

bool LineTraceReader::read_line() {
  for (;;) {
    line_.clear();
    bool any = false;  // a line starts with any byte, even a lone '\n'
    for (;;) {
      if (next_ == end_) {
        next_ = buffer_.data();
        end_ = next_ + input_->rdbuf()->sgetn(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
        if (next_ == end_) break;
      }
      if (!any) ++line_number_;
      any = true;
      const auto* newline = static_cast<const char*>(std::memchr(next_, '\n', static_cast<std::size_t>(end_ - next_)));
      const char* stop = newline ? newline : end_;
      if (line_.size() + static_cast<std::size_t>(stop - next_) > kMaxLineBytes) {
        too_long_ = true;
        return false;
      }
      line_.append(next_, stop);
      next_ = newline ? newline + 1 : end_;
      if (newline) break;
    }
    if (!any) return false;
    bytes_read_ += line_.size() + 1;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (line_.find_first_not_of(" \t") != std::string::npos) return true;
  }
}

Error LineTraceReader::line_too_long() const {
  return error_here("line longer than " + std::to_string(kMaxLineBytes) + " bytes (the limit for one row): expected " +
                    expected_content());
}

Expected<std::optional<TraceRequest>> LineTraceReader::fail(Error error) {
  error_ = error;
  return error;
}

Expected<std::optional<TraceRequest>> LineTraceReader::next() {
  if (error_) return *error_;
  if (finished_) return std::optional<TraceRequest>();
  if (!started_) {
    started_ = true;
    if (!input_ || !*input_) return fail(Error{name_ + ": cannot read the file"});
    if (has_header()) {
      if (!read_line()) {
        if (too_long_) return fail(line_too_long());
        return fail(Error{name_ + ": the file is empty: expected " + expected_content()});
      }
      if (auto status = parse_header(line_); !status) return fail(error_here(status.error().message));
    }
  }
  if (!read_line()) {
    if (too_long_) return fail(line_too_long());
    if (input_->bad()) return fail(error_here("read error"));
    if (rows_ == 0) {
      return fail(Error{name_ + ": no requests in the file: expected " + expected_content()});
    }
    finished_ = true;
    return std::optional<TraceRequest>();
  }
  row_.hash_ids.clear();
  row_.service_class = 0;
  if (auto status = parse_row(line_, row_); !status) return fail(error_here(status.error().message));
  if (!origin_us_) {
    origin_us_ = row_.timestamp_us;
    previous_us_ = row_.timestamp_us;
  }
  if (row_.timestamp_us < previous_us_) {
    return fail(error_here("timestamps must not decrease: this row is " +
                           std::to_string(previous_us_ - row_.timestamp_us) +
                           " us earlier than the row before it"));
  }
  previous_us_ = row_.timestamp_us;
  TraceRequest request;
  request.id = rows_++;
  request.arrival = SimTime::from_us(row_.timestamp_us - *origin_us_);
  request.prompt_tokens = row_.prompt_tokens;
  request.output_tokens = row_.output_tokens;
  request.service_class = row_.service_class;
  request.prefix = segments_from_block_ids(row_.hash_ids, kMooncakeBlockTokens, row_.prompt_tokens);
  return std::optional<TraceRequest>(std::move(request));
}

}  // namespace meshsim::traces
