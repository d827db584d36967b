#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/autoscale/autoscaler.hpp"

namespace meshsim::autoscale {

// Seed 003's ElasticConfig, with its defaults.
struct ElasticConfig {
  double scale_down_threshold = 0.5;  // load ratio below which a worker is drained
  double scale_up_threshold = 0.8;    // load ratio above which a worker is added
  std::uint32_t min_workers = 1;
  std::uint32_t max_workers = 8;
  double requests_per_worker_capacity = 8;
  SimTime monitoring_interval = SimTime::from_seconds(5);
  SimTime drain_timeout = SimTime::from_seconds(30);  // applied by the ScalingManager
  SimTime scale_down_cooldown = SimTime::from_seconds(60);
  SimTime scale_up_cooldown = SimTime::from_seconds(30);
  SimTime min_stable_period = SimTime::from_seconds(10);
  bool enable_elastic = true;
};
// What is wrong with a config (thresholds out of order or without a gap, min > max, ...),
// each problem with the key to fix; empty when it is usable.
struct ElasticConfigProblem {
  std::string key, message;
};
std::vector<ElasticConfigProblem> check(const ElasticConfig& config);

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
