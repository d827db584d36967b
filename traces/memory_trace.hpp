#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "traces/trace_request.hpp"

namespace meshsim::traces {

// A whole workload read into memory once and shared read-only: the RL environments each
// replay windows of it through their own WindowSource cursor, so a reset never re-reads
// or re-parses the trace. Requests are in arrival order.
using SharedTrace = std::shared_ptr<const std::vector<TraceRequest>>;

// Reads `source` to its end. Refused (an Error, nothing kept) past `max_requests`: a
// generator without a bound would never end.
Expected<SharedTrace> load_trace(RequestSource& source, std::uint64_t max_requests = 50'000'000);

// The requests of `trace` arriving in [start, start + length * rate_scale), their arrival
// offsets taken from `start` and divided by `rate_scale` (> 0): the window lasts `length`
// of simulated time whatever the scale. Finding the window's first request is a binary
// search; the rest streams.
class WindowSource final : public RequestSource {
 public:
  WindowSource(SharedTrace trace, SimTime start, SimTime length, double rate_scale);

  Expected<std::optional<TraceRequest>> next() override;
  double progress() const override;
  std::string describe() const override;
  // Requests the window holds.
  std::size_t size() const { return end_ - begin_; }

 private:
  SharedTrace trace_;
  SimTime start_;
  double rate_scale_;
  std::size_t begin_ = 0, end_ = 0, next_ = 0;
};

}  // namespace meshsim::traces
