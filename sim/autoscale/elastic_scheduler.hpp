#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/autoscale/autoscaler.hpp"
#include "sim/autoscale/autoscaler_options.hpp"

namespace meshsim::autoscale {

// Seed 003's ElasticScheduler over one pool of serving instances (its "workers"). Every
// monitoring_interval: load ratio = requests on ACTIVE workers / (ACTIVE workers *
// requests_per_worker_capacity). Above scale_up_threshold for min_stable_period, and
// scale_up_cooldown after the last scale-up, it adds one worker (an INACTIVE one
// reactivated through STARTING, else a new one); below scale_down_threshold for
// min_stable_period, and scale_down_cooldown after the last scale-down, it drains the
// least-loaded ACTIVE worker to INACTIVE. At most one step per check; never below
// min_workers ACTIVE or above max_workers ACTIVE + STARTING; enable_elastic = false
// freezes the count.
class ElasticScheduler {
 public:
  ElasticScheduler(ElasticConfig config, InstanceTag pool) : config_(config), pool_(pool) {}

  const ElasticConfig& config() const { return config_; }
  InstanceTag pool() const { return pool_; }
  // One monitoring check at the manager's current time.
  void check(ScalingManager& manager);
  // Every worker up (to max_workers) with elastic decisions paused, as before a
  // validation run; resume_elastic_scheduling() lets the rules decide again.
  void wake_up_all_workers(ScalingManager& manager);
  void resume_elastic_scheduling();
  bool paused() const { return paused_; }

  // get_metrics() with the seed's keys: active_workers, draining_workers, total_workers,
  // active_requests, pending_requests, load_ratio, total_capacity.
  std::map<std::string, double> get_metrics(const ScalingManager& manager) const;
  double load_ratio(const PoolSnapshot& pool) const;

 private:
  bool add_worker(ScalingManager& manager);
  bool remove_worker(ScalingManager& manager);

  ElasticConfig config_;
  InstanceTag pool_;
  bool paused_ = false;
  std::optional<SimTime> above_since_, below_since_;
  std::optional<SimTime> last_scale_up_, last_scale_down_;
};

// The elastic baseline: one ElasticScheduler per pool, checked every monitoring_interval.
class ElasticAutoscaler final : public Autoscaler {
 public:
  ElasticAutoscaler(ElasticConfig config, const std::vector<InstanceTag>& pools);
  std::string_view name() const override { return "elastic"; }
  SimTime interval() const override { return config_.monitoring_interval; }
  void decide(ScalingManager& manager) override;
  ElasticScheduler& scheduler(InstanceTag pool);
  const ElasticScheduler& scheduler(InstanceTag pool) const;

 private:
  ElasticConfig config_;
  std::vector<ElasticScheduler> schedulers_;
};

}  // namespace meshsim::autoscale
