#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "traces/trace_request.hpp"

namespace meshsim::traces {

// Requests given in memory as (arrival seconds, prompt tokens, output tokens), in
// arrival order, and optionally each one's prompt prefix (TraceRequest::prefix): hand-made
// workloads for tests, benchmarks and library users.
class ListSource final : public RequestSource {
 public:
  using Row = std::tuple<double, std::uint32_t, std::uint32_t>;
  explicit ListSource(std::vector<Row> rows, std::vector<std::vector<ContentSegment>> prefixes = {})
      : rows_(std::move(rows)), prefixes_(std::move(prefixes)) {}

  Expected<std::optional<TraceRequest>> next() override {
    if (next_ >= rows_.size()) return std::optional<TraceRequest>();
    const auto& [seconds, prompt, output] = rows_[next_];
    TraceRequest request;
    if (next_ < prefixes_.size()) request.prefix = prefixes_[next_];
    request.id = next_++;
    request.arrival = SimTime::from_seconds(seconds);
    request.prompt_tokens = prompt;
    request.output_tokens = output;
    return std::optional<TraceRequest>(std::move(request));
  }
  double progress() const override {
    return rows_.empty() ? 1.0 : static_cast<double>(next_) / static_cast<double>(rows_.size());
  }
  std::string describe() const override { return "list of " + std::to_string(rows_.size()) + " requests"; }

 private:
  std::vector<Row> rows_;
  std::vector<std::vector<ContentSegment>> prefixes_;
  std::size_t next_ = 0;
};

}  // namespace meshsim::traces
