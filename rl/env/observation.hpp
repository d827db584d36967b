#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "sim/autoscale/autoscaler.hpp"

namespace meshsim::rl {

// The observation of the scaling environment, every feature in one place. Per pool (the
// start state's tags, in the order prompt, token, mixed), then global. Counts are whole
// instances (not shares of max_total_instances, so a policy reads the same numbers on a
// cluster with another cap); loads are per ACTIVE instance (only ACTIVE ones are
// capacity) and log1p-compressed, since they span orders of magnitude under overload;
// latencies are multiples of their SLO target, capped at kLatencyCap. The learner's
// running normalisation scales them all to order one.
//
// Per pool:
//   0 active      ACTIVE instances
//   1 starting    STARTING instances (scale-ups under way: the policy sees the
//                 scale-up delay)
//   2 draining    DRAINING instances
//   3 requests    log1p(requests on ACTIVE instances, running or waiting, per ACTIVE instance)
//   4 tokens      log1p(pending prompt tokens per ACTIVE instance / 1000)
//   5 kv          KV-cache tokens in use / capacity over ACTIVE instances, in [0, 1]
//   6 waiting     log1p(requests waiting, not in the running batch, per ACTIVE instance)
// Global (over the last decision interval unless said):
//   0 arrivals    log1p(arrival rate, requests/s)
//   1 trend       log1p(arrival rate smoothed over about four intervals, requests/s)
//   2 ttft_p50    median TTFT of the requests that left / the TTFT target
//   3 ttft_p99    p99 TTFT / the TTFT target
//   4 tbt_p99     p99 mean TBT / the TBT target
//   5 violations  share of the requests that left missing the SLO (dropped ones included)
//   6 day_sin     sin(2 pi * workload seconds / 86400): time of day of the trace
//   7 day_cos     cos(...); both 0 with rl.time_of_day false (a synthetic workload whose
//                 cycle is not a day would let a policy learn its phase by heart)
//   8 cost        instances that existed (any state), mean over the interval
//   9 busy        share of the instances' compute in use over the interval
//  10 delay       log1p(scale-up delay / decision interval): how long a scale-up takes
//                 to become capacity (rl.scale_up_delays_s varies it between episodes)
inline constexpr std::size_t kPoolFeatures = 7;
inline constexpr std::size_t kGlobalFeatures = 11;
inline constexpr double kLatencyCap = 10.0;

// What the environment measured over the last interval (the global features' inputs).
struct IntervalStats {
  double seconds = 0.0;
  double arrival_rate = 0.0, arrival_trend = 0.0;  // requests/s
  double ttft_p50 = 0.0, ttft_p99 = 0.0, tbt_p99 = 0.0;  // seconds
  double violations = 0.0;
  // Where the interval ends, in the workload's own time; unset: no time-of-day features.
  std::optional<double> workload_seconds;
  double mean_instances = 0.0;
  double busy = 0.0;
  double scale_up_delay_intervals = 0.0;
};

std::size_t observation_size(std::size_t pools);
// Writes the observation into `out` (observation_size(pools.size()) floats).
void collect_observation(const cluster::ScalingManager& manager, std::span<const cluster::InstanceTag> pools,
                         const IntervalStats& stats, double ttft_target_s, double tbt_target_s,
                         std::span<float> out);

}  // namespace meshsim::rl
