#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/expected.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::traces {

using engine::SimTime;

// A run of prompt tokens with a name: runs with the same id hold the same tokens (a
// shared system prompt, an earlier turn of a conversation, a Mooncake 512-token block).
// Prefix caching tells requests' prompts apart by these names alone.
struct ContentSegment {
  std::uint64_t id = 0;
  std::uint32_t tokens = 0;
};

// Mooncake's hash_ids name consecutive blocks of this many prompt tokens.
inline constexpr std::uint32_t kMooncakeBlockTokens = 512;

// The named runs of a prompt of `prompt_tokens` whose consecutive blocks of
// `block_tokens` carry `ids` (the last block may be partial; ids past the prompt are
// ignored).
std::vector<ContentSegment> segments_from_block_ids(const std::vector<std::uint64_t>& ids, std::uint32_t block_tokens,
                                                    std::uint32_t prompt_tokens);

// One LLM inference request as a trace or generator gives it.
struct TraceRequest {
  std::uint64_t id = 0;            // row index in the source (0-based), kept through filters
  SimTime arrival;                 // offset from the first request of the source
  std::uint32_t prompt_tokens = 0;  // > 0
  std::uint32_t output_tokens = 0;  // > 0
  // The prompt's content from its start (Mooncake's hash_ids, a generator's system prompt
  // and turns); tokens past the last segment are the request's own. Empty: all its own.
  std::vector<ContentSegment> prefix;
  // Names the output tokens, when a later request's prompt repeats them (a conversation's
  // next turn); 0: they are the request's own.
  std::uint64_t output_content = 0;
  // Its class of service: an index into the scenario's classes (0 without classes), from
  // the trace's class column or drawn by the classes' shares.
  std::uint8_t service_class = 0;
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
  // Where the source's data ends, in seconds of its own clock, when it knows. A source that
  // opens itself at a window (ServeGen's) never shows the requests before it, so a window
  // past its data is told from an empty one only by this.
  virtual std::optional<double> data_end_s() const { return std::nullopt; }
};

}  // namespace meshsim::traces
