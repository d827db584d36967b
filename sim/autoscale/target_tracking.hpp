#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>

#include "sim/autoscale/autoscaler.hpp"
#include "sim/autoscale/autoscaler_options.hpp"
#include "sim/autoscale/work_mix.hpp"
#include "sim/metrics/run_metrics.hpp"
#include "sim/replay/replay.hpp"
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
// capacity_units watches the requests' work (a WorkMix of every pool's arrivals and
// completions: the pools of a deployment serve the same requests).
class TargetTrackingAutoscaler final : public Autoscaler {
 public:
  // A capacity_units metric needs config.capacity_model (checked); `slos` judge the
  // requests its correction counts (each by its class's).
  TargetTrackingAutoscaler(TargetTrackingConfig config, std::vector<InstanceTag> pools,
                           metrics::SloBook slos = {});
  std::string_view name() const override { return "target_tracking"; }
  SimTime interval() const override { return config_.period; }
  void decide(ScalingManager& manager) override;
  replay::ReplayObserver* watcher() override { return tracks(TrackedMetric::kCapacityUnits) ? &work_ : nullptr; }
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
  // The online correction's multiplier of the model's capacity now (1 without one).
  double capacity_factor() const { return factor_; }

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
  // Requests/s one ACTIVE instance of `pool` sustains for the work arriving now.
  double capacity_per_instance(const PoolSnapshot& pool, SimTime now) const;
  // Moves the correction's multiplier once per decision time.
  void correct(SimTime now);

  // The work of the requests as they arrive and complete, and how many of those that
  // left were judged against the SLO and missed it (since the last correction).
  class WorkWatch final : public replay::ReplayObserver {
   public:
    explicit WorkWatch(metrics::SloBook slos) : slos_(std::move(slos)) {}
    void on_arrival(const traces::TraceRequest& request) override;
    void on_request(const metrics::RequestRecord& record) override;
    mutable WorkMix mix;  // figures() forgets what has left its windows
    std::uint64_t judged = 0, missed = 0;

   private:
    metrics::SloBook slos_;
  };
  struct Judged {
    SimTime at;
    std::uint64_t judged = 0, missed = 0;
  };

  TargetTrackingConfig config_;
  std::vector<InstanceTag> pools_;
  std::map<InstanceTag, std::deque<std::pair<SimTime, std::uint32_t>>> history_;  // recommendations
  std::map<InstanceTag, Arrivals> last_arrivals_;  // at the pool's last decision
  WorkWatch work_;
  std::deque<Judged> judged_;  // per correction, over the last window
  std::optional<SimTime> corrected_at_;
  double factor_ = 1.0;
};

}  // namespace meshsim::autoscale
