#pragma once

#include <cstdint>
#include <memory>

#include "traces/memory_trace.hpp"
#include "traces/workload_spec.hpp"

namespace meshsim::traces {

// A workload that RL episodes replay windows of, each window its own stream, shared
// read-only by every environment. Most workloads are read into memory once (a trace, a
// generator); ServeGen's window files open any window directly, so training on ten days
// of real load holds one window at a time.
class EpisodeWorkload {
 public:
  virtual ~EpisodeWorkload() = default;
  // The last arrival, in seconds on the workload's axis (after its window and rate scale).
  virtual double span_s() const = 0;
  // The requests the workload holds (their expected number where they are drawn on demand).
  virtual double requests() const = 0;
  // The requests arriving in [start, start + length * rate_scale), their arrivals measured
  // from `start` and divided by `rate_scale` (> 0). A window may hold none (an episode in a
  // gap of the trace): that is an empty episode, not an error.
  virtual std::unique_ptr<RequestSource> window(SimTime start, SimTime length, double rate_scale) const = 0;
};

using SharedWorkload = std::shared_ptr<const EpisodeWorkload>;

// A trace held in memory, replayed through WindowSource cursors.
SharedWorkload in_memory(SharedTrace trace);

// The workload `spec` names, seeded from `seed`: ServeGen windows opened on demand (without
// a request limit), anything else read into memory (refused past load_trace's bound).
Expected<SharedWorkload> open_episode_workload(const WorkloadSpec& spec, std::uint64_t seed);

}  // namespace meshsim::traces
