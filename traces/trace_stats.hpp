#pragma once

#include <cstdint>

#include "traces/trace_request.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::traces {

// Summary statistics of a request stream: what a fitted generator needs.
struct TraceStatistics {
  std::uint64_t requests = 0;
  double duration_s = 0.0;           // last arrival offset
  double rate_per_s = 0.0;           // (requests - 1) / duration
  double interarrival_cv = 0.0;      // stddev / mean of the gaps between arrivals
  double prompt_mean = 0.0;
  double output_mean = 0.0;
  LengthSpec prompt_tokens;          // empirical quantile tables (kQuantiles)
  LengthSpec output_tokens;
};

// The probabilities at which fitted quantile tables are kept: dense in the tails, where
// long prompts decide KV-cache pressure.
inline constexpr double kFitProbabilities[] = {0.0,  0.01, 0.05, 0.1,  0.2,   0.3,  0.4,
                                               0.5,  0.6,  0.7,  0.8,  0.9,   0.95, 0.99,
                                               0.999, 1.0};

// Reads the whole source. Holds the token counts (8 bytes a request) to take exact
// quantiles: this is an offline fitting tool, not part of a replay.
Expected<TraceStatistics> summarize(RequestSource& source);

// A generator reproducing the statistics: Gamma arrivals with the fitted rate and
// burstiness, and the empirical length tables.
GeneratorSpec fit_generator(const TraceStatistics& stats, std::string name);

}  // namespace meshsim::traces
