#include "sim/autoscale/target_tracking.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::autoscale {

std::vector<TrackedTarget> TargetTrackingAutoscaler::targets() const {
  std::vector<TrackedTarget> all{{config_.metric, config_.target}};
  all.insert(all.end(), config_.also.begin(), config_.also.end());
  return all;
}

bool TargetTrackingAutoscaler::tracks(TrackedMetric which) const {
  if (config_.metric == which) return true;
  return std::ranges::any_of(config_.also, [&](const TrackedTarget& t) { return t.metric == which; });
}

std::optional<double> TargetTrackingAutoscaler::metric(TrackedMetric which, const PoolSnapshot& pool,
                                                        const PoolKv& kv, SimTime now) const {
  if (pool.active == 0) return 0.0;
  const auto per_second = [&](std::uint64_t total, std::uint64_t Arrivals::*field) -> std::optional<double> {
    const auto last = last_arrivals_.find(pool.tag);
    if (last == last_arrivals_.end() || now <= last->second.at) return std::nullopt;
    const double seconds = (now - last->second.at).seconds();
    return static_cast<double>(total - last->second.*field) / seconds / pool.active;
  };
  switch (which) {
    case TrackedMetric::kKvUtilisation:
      return kv.kv_capacity > 0 ? static_cast<double>(kv.kv_used) / static_cast<double>(kv.kv_capacity) : 0.0;
    case TrackedMetric::kRequestsPerInstance:
      return static_cast<double>(pool.active_requests) / pool.active;
    case TrackedMetric::kArrivalRate: return per_second(pool.arrived_requests, &Arrivals::requests);
    case TrackedMetric::kTokenRate: return per_second(pool.arrived_tokens, &Arrivals::tokens);
  }
  return 0.0;
}

std::uint32_t TargetTrackingAutoscaler::desired(const PoolSnapshot& pool, const PoolKv& kv, SimTime now) {
  const std::uint32_t current = pool.current();
  // Each metric proposes a size (the current one while it is unknown or within tolerance);
  // the largest proposal wins.
  std::uint32_t recommendation = 0;
  for (const TrackedTarget& t : targets()) {
    std::uint32_t proposal = current;
    if (pool.active > 0) {
      if (const auto value = metric(t.metric, pool, kv, now)) {
        const double ratio = *value / t.target;
        if (std::abs(ratio - 1.0) > config_.tolerance) {
          proposal = static_cast<std::uint32_t>(std::min(1e6, std::ceil(ratio * pool.active)));
        }
      }
    }
    recommendation = std::max(recommendation, proposal);
  }
  last_arrivals_[pool.tag] = Arrivals{now, pool.arrived_requests, pool.arrived_tokens};
  recommendation = std::clamp(recommendation, config_.min_instances, config_.max_instances);
  // Scale-down stabilisation: the highest recommendation of the window (this one included).
  auto& history = history_[pool.tag];
  if (history.empty() && config_.warm_start) {
    history.emplace_back(now, std::clamp(current, config_.min_instances, config_.max_instances));
  }
  while (!history.empty() && now - history.front().first > config_.scale_down_stabilization) history.pop_front();
  history.emplace_back(now, recommendation);
  std::uint32_t down_limit = 0;
  for (const auto& [when, value] : history) down_limit = std::max(down_limit, value);
  std::uint32_t next = current;
  if (next < recommendation) next = recommendation;
  if (next > down_limit) next = down_limit;
  // Scale-up rate: the larger of the two default policies (in double: the product of two
  // large figures must not wrap).
  const double up_limit = std::max(std::ceil(current * (1.0 + config_.scale_up_percent / 100.0)),
                                   static_cast<double>(current) + config_.scale_up_instances);
  if (static_cast<double>(next) > up_limit) next = static_cast<std::uint32_t>(up_limit);
  return std::clamp(next, config_.min_instances, config_.max_instances);
}

std::optional<double> TargetTrackingAutoscaler::need(const PoolSnapshot& pool, const PoolKv& kv, SimTime now) const {
  std::optional<double> largest;
  for (const TrackedTarget& t : targets()) {
    if (const auto value = metric(t.metric, pool, kv, now)) {
      largest = std::max(largest.value_or(0.0), *value / t.target * pool.active);
    }
  }
  return largest;
}

TargetTrackingAutoscaler::Look TargetTrackingAutoscaler::look(const ScalingManager& manager, InstanceTag tag) {
  const PoolSnapshot pool = snapshot(manager, tag);
  // Only the KV metric needs the walk over the pool's instances.
  const PoolKv kv = tracks(TrackedMetric::kKvUtilisation) ? scan_active(manager, tag) : PoolKv{};
  const SimTime now = manager.cluster().now();
  Look l;
  l.metric = metric(pool, kv, now);  // before desired() notes the arrivals they are measured against
  const std::optional<double> need_now = need(pool, kv, now);
  l.size = desired(pool, kv, now);
  l.need = need_now.value_or(static_cast<double>(l.size));
  return l;
}

void TargetTrackingAutoscaler::decide(ScalingManager& manager) {
  for (const InstanceTag tag : pools_) scale_pool_to(manager, tag, look(manager, tag).size);
}

}  // namespace meshsim::autoscale
