#pragma once

// The ScalingManager's parameters. Plain values.

#include <cstdint>
#include <optional>

#include "sim/engine/sim_time.hpp"

namespace meshsim::cluster {

using engine::SimTime;

// The ScalingManager's parameters (seed 004, with seed 003's drain timeout).
struct ScalingConfig {
  // STARTING -> ACTIVE (loading weights). Published cold starts: 34-84 s for 30-70B
  // models with fast loaders, 71-360 s from zero replicas on Ray Serve.
  SimTime scale_up_delay = SimTime::from_seconds(10);
  SimTime drain_check_interval = SimTime::from_seconds(1);
  // A draining instance still busy this long after it started draining is evacuated: its
  // requests move to ACTIVE instances. None: it drains for as long as it takes.
  std::optional<SimTime> drain_timeout = SimTime::from_seconds(30);
  std::uint32_t min_instances_per_pool = 1;  // ACTIVE instances a pool keeps
  std::uint32_t max_total_instances = 100;   // instances on servers (STARTING, ACTIVE, DRAINING)
  std::optional<std::uint32_t> max_servers;  // elastic cluster cap (none: only max_total_instances)
};

}  // namespace meshsim::cluster
