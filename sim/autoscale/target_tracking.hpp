#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>

#include "sim/autoscale/autoscaler.hpp"
#include "sim/autoscale/autoscaler_options.hpp"
#include "sim/engine/enum_names.hpp"

namespace meshsim::autoscale {

// Per pool, every period (Kubernetes' replica calculator and scaling behaviour):
//   desired = ceil(ACTIVE * mean metric over ACTIVE / target), unchanged within tolerance
//   (STARTING instances count as current but carry no load, as unready pods do; a rate
//   metric is unknown at the first decision, which keeps the size); with several metrics
//   (config.also), the largest of their recommendations;
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
  // A metric per ACTIVE instance now (the rates since the last desired() for the pool);
  // unset when it cannot be known yet. Without `which`, the config's first metric.
  std::optional<double> metric(const PoolSnapshot& pool, const PoolKv& kv, SimTime now) const {
    return metric(config_.metric, pool, kv, now);
  }
  std::optional<double> metric(TrackedMetric which, const PoolSnapshot& pool, const PoolKv& kv, SimTime now) const;
  // One look at a pool, as each decision takes it: the first metric before the look
  // (unset when not known yet), the recommendation before rounding up (the largest
  // metric / target x ACTIVE of those known, or the size when none is), and the size the
  // rules want (desired(), recorded).
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
  // Every metric with its target: the config's first, then config.also.
  std::vector<TrackedTarget> targets() const;
  bool tracks(TrackedMetric which) const;
  // The largest metric / target x ACTIVE over the metrics known now (unset when none is).
  std::optional<double> need(const PoolSnapshot& pool, const PoolKv& kv, SimTime now) const;

  TargetTrackingConfig config_;
  std::vector<InstanceTag> pools_;
  std::map<InstanceTag, std::deque<std::pair<SimTime, std::uint32_t>>> history_;  // recommendations
  std::map<InstanceTag, Arrivals> last_arrivals_;  // at the pool's last decision
};

}  // namespace meshsim::autoscale
