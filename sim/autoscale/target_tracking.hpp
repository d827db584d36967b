#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <utility>

#include "sim/autoscale/autoscaler.hpp"
#include "sim/engine/enum_names.hpp"

namespace meshsim::autoscale {

// What target tracking measures on a pool's ACTIVE instances.
enum class TrackedMetric {
  // Requests assigned, running or waiting: concurrency, the batch-size signal GKE
  // recommends for LLM servers (and Knative's KPA metric). The default.
  kRequestsPerInstance,
  // KV-cache tokens held / capacity (vLLM's gpu_cache_usage_perc; reserved KV counts as
  // held). A poor signal where KV is plentiful and decode time limits TBT.
  kKvUtilisation,
};
inline constexpr EnumNames kTrackedMetricNames{
    std::array{std::pair{TrackedMetric::kKvUtilisation, std::string_view("kv_utilisation")},
               std::pair{TrackedMetric::kRequestsPerInstance, std::string_view("requests_per_instance")}}};

// The Kubernetes HorizontalPodAutoscaler (autoscaling/v2) with its defaults.
struct TargetTrackingConfig {
  TrackedMetric metric = TrackedMetric::kRequestsPerInstance;
  double target = 32;      // the metric's target value per instance (a fraction for kv_utilisation)
  double tolerance = 0.1;  // no change while |metric / target - 1| <= tolerance
  SimTime period = SimTime::from_seconds(15);
  SimTime scale_down_stabilization = SimTime::from_seconds(300);
  // Scale-up limit per period: the larger of +percent and +instances (100%, 4).
  double scale_up_percent = 100;
  std::uint32_t scale_up_instances = 4;
  std::uint32_t min_instances = 1;
  std::uint32_t max_instances = 100;
};

// Per pool, every period (Kubernetes' replica calculator and scaling behaviour):
//   desired = ceil(ACTIVE * mean metric over ACTIVE / target), unchanged within tolerance
//   (STARTING instances count as current but carry no load, as unready pods do);
//   a scale-down takes the highest recommendation of the stabilisation window;
//   a scale-up is at most max(current * (1 + percent/100), current + instances);
//   clamped to [min_instances, max_instances].
class TargetTrackingAutoscaler final : public Autoscaler {
 public:
  TargetTrackingAutoscaler(TargetTrackingConfig config, std::vector<InstanceTag> pools)
      : config_(config), pools_(std::move(pools)) {}
  std::string_view name() const override { return "target_tracking"; }
  SimTime interval() const override { return config_.period; }
  void decide(ScalingManager& manager) override;
  // The size the rules want for `pool` now (records the recommendation); `kv` matters for
  // the KV metric only.
  std::uint32_t desired(const PoolSnapshot& pool, const PoolKv& kv, SimTime now);
  double metric(const PoolSnapshot& pool, const PoolKv& kv) const;

 private:
  TargetTrackingConfig config_;
  std::vector<InstanceTag> pools_;
  std::map<InstanceTag, std::deque<std::pair<SimTime, std::uint32_t>>> history_;  // recommendations
};

}  // namespace meshsim::autoscale
