#include "rl/env/observation.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/engine/check.hpp"

namespace meshsim::rl {

std::size_t observation_size(std::size_t pools) { return pools * kPoolFeatures + kGlobalFeatures; }

void collect_observation(const cluster::ScalingManager& manager, std::span<const cluster::InstanceTag> pools,
                         const IntervalStats& stats, double ttft_target_s, double tbt_target_s,
                         std::span<float> out) {
  MESHSIM_CHECK(out.size() == observation_size(pools.size()), "collect_observation: wrong buffer size");
  const auto latency = [](double seconds, double target) { return std::min(kLatencyCap, seconds / target); };
  std::size_t at = 0;
  const auto put = [&](double value) { out[at++] = static_cast<float>(value); };
  for (const cluster::InstanceTag tag : pools) {
    const autoscale::PoolSnapshot pool = autoscale::snapshot(manager, tag);
    const autoscale::PoolKv kv = autoscale::scan_active(manager, tag);
    const double active = std::max(1u, pool.active);
    put(pool.active);
    put(pool.starting);
    put(pool.draining);
    put(std::log1p(static_cast<double>(pool.active_requests) / active));
    put(std::log1p(static_cast<double>(std::max<std::int64_t>(0, pool.pending_tokens)) / active / 1000.0));
    put(kv.kv_capacity > 0 ? static_cast<double>(kv.kv_used) / static_cast<double>(kv.kv_capacity) : 0.0);
    put(std::log1p(static_cast<double>(kv.pending_requests) / active));
  }
  const double day = 2.0 * std::numbers::pi * stats.workload_seconds.value_or(0.0) / 86'400.0;
  put(std::log1p(stats.arrival_rate));
  put(std::log1p(stats.arrival_trend));
  put(latency(stats.ttft_p50, ttft_target_s));
  put(latency(stats.ttft_p99, ttft_target_s));
  put(latency(stats.tbt_p99, tbt_target_s));
  put(stats.violations);
  put(stats.workload_seconds ? std::sin(day) : 0.0);
  put(stats.workload_seconds ? std::cos(day) : 0.0);
  put(stats.mean_instances);
  put(stats.busy);
  put(std::log1p(stats.scale_up_delay_intervals));
}

}  // namespace meshsim::rl
