#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/expected.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::traces {

using engine::SimTime;

// One LLM inference request as a trace or generator gives it.
struct TraceRequest {
  std::uint64_t id = 0;            // row index in the source (0-based), kept through filters
  SimTime arrival;                 // offset from the first request of the source
  std::uint32_t prompt_tokens = 0;  // > 0
  std::uint32_t output_tokens = 0;  // > 0
  std::vector<std::uint64_t> hash_ids;  // prefix-block ids (Mooncake); empty when unknown
};

// A stream of requests in non-decreasing arrival order. Sources stream: they hold one
// line or one request at a time, never the whole trace.
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  // The next request; std::nullopt at the end; an Error naming file:line on bad input.
  // After an error or the end, further calls return the same outcome.
  virtual Expected<std::optional<TraceRequest>> next() = 0;
  // Fraction of the source consumed, in [0, 1], for progress bars.
  virtual double progress() const = 0;
  // Where the requests come from (a path, a generator's name), for summaries.
  virtual std::string describe() const = 0;
};

}  // namespace meshsim::traces
