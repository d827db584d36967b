#pragma once

// What a FixedLatencyCluster is built with. Plain values.

#include <cstdint>
#include <optional>

#include "sim/cluster/serving_options.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

using engine::SimTime;

// A deliberately simple serving model: each instance serves up to max_batch requests at
// once; a request's prefill takes prefill_base + prompt_tokens * prefill_per_token, and
// each further output token takes time_per_output_token. Requests beyond max_batch wait
// in the instance's FIFO queue; beyond max_queue they are dropped (counted).
struct FixedLatencyConfig {
  std::uint32_t instances = 4;
  std::uint32_t max_batch = 16;
  std::optional<std::uint32_t> max_queue;  // per instance; none = unbounded
  SimTime prefill_base = SimTime::from_ms(20);
  double prefill_us_per_token = 100.0;
  SimTime time_per_output_token = SimTime::from_ms(40);
  // round_robin or fewest_requests (queued + running; ties to the lowest index): the
  // model has no tokens or KV cache for the other policies to weigh.
  RoutePolicy routing = RoutePolicy::kFewestRequests;
  std::uint32_t gpus_per_instance = 8;
  double cost_per_instance_hour = 0.0;  // USD
};

}  // namespace meshsim::cluster
