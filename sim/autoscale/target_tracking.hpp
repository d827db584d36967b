#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
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
  // Requests that came to the pool per second since the last decision (requests/s per
  // instance): the load itself rather than its backlog, so it does not lag a queue.
  kArrivalRate,
  // Their prompt + output tokens per second (tokens/s per instance): load weighted by the
  // work each request brings, whatever the length mix.
  kTokenRate,
};
inline constexpr EnumNames kTrackedMetricNames{
    std::array{std::pair{TrackedMetric::kKvUtilisation, std::string_view("kv_utilisation")},
               std::pair{TrackedMetric::kRequestsPerInstance, std::string_view("requests_per_instance")},
               std::pair{TrackedMetric::kArrivalRate, std::string_view("arrival_rate")},
               std::pair{TrackedMetric::kTokenRate, std::string_view("token_rate")}}};

// The Kubernetes HorizontalPodAutoscaler (autoscaling/v2) with its defaults.
struct TargetTrackingConfig {
  TrackedMetric metric = TrackedMetric::kRequestsPerInstance;
  double target = 32;      // the metric's target value per instance (a fraction for kv_utilisation)
  double tolerance = 0.1;  // no change while |metric / target - 1| <= tolerance
  SimTime period = SimTime::from_seconds(15);
  SimTime scale_down_stabilization = SimTime::from_seconds(300);
  // The pool's size at the first decision counts as a recommendation already in the
  // stabilisation window, as for an autoscaler that has been running: it does not drain a
  // provisioned pool before it has watched a whole window. Off, as a new Kubernetes HPA
  // (no history: it may scale down at once).
  bool warm_start = false;
  // Scale-up limit per period: the larger of +percent and +instances (100%, 4).
  double scale_up_percent = 100;
  std::uint32_t scale_up_instances = 4;
  std::uint32_t min_instances = 1;
  std::uint32_t max_instances = 100;
};

// Per pool, every period (Kubernetes' replica calculator and scaling behaviour):
//   desired = ceil(ACTIVE * mean metric over ACTIVE / target), unchanged within tolerance
//   (STARTING instances count as current but carry no load, as unready pods do; a rate
//   metric is unknown at the first decision, which keeps the size);
//   a scale-down takes the highest recommendation of the stabilisation window (with
//   warm_start, the size the pool had when tracking began is the window's first entry);
//   a scale-up is at most max(current * (1 + percent/100), current + instances);
//   clamped to [min_instances, max_instances].
class TargetTrackingAutoscaler final : public Autoscaler {
 public:
  TargetTrackingAutoscaler(TargetTrackingConfig config, std::vector<InstanceTag> pools)
      : config_(config), pools_(std::move(pools)) {}
  std::string_view name() const override { return "target_tracking"; }
  SimTime interval() const override { return config_.period; }
  void decide(ScalingManager& manager) override;
  // The size the rules want for `pool` now (records the recommendation, and the pool's
  // arrivals for the rate metrics); `kv` matters for the KV metric only.
  std::uint32_t desired(const PoolSnapshot& pool, const PoolKv& kv, SimTime now);
  // The metric per ACTIVE instance now (the rates since the last desired() for the pool);
  // unset when it cannot be known yet.
  std::optional<double> metric(const PoolSnapshot& pool, const PoolKv& kv, SimTime now) const;
  // One look at a pool, as each decision takes it: the metric before the look (unset
  // when not known yet), the recommendation before rounding up (metric / target x
  // ACTIVE, or the size when unknown), and the size the rules want (desired(), recorded).
  struct Look {
    std::optional<double> metric;
    double need = 0.0;
    std::uint32_t size = 0;
  };
  Look look(const ScalingManager& manager, InstanceTag tag);

 private:
  struct Arrivals {
    SimTime at;
    std::uint64_t requests = 0, tokens = 0;
  };
  TargetTrackingConfig config_;
  std::vector<InstanceTag> pools_;
  std::map<InstanceTag, std::deque<std::pair<SimTime, std::uint32_t>>> history_;  // recommendations
  std::map<InstanceTag, Arrivals> last_arrivals_;  // at the pool's last decision
};

}  // namespace meshsim::autoscale
