#include "sim/autoscale/elastic_scheduler.hpp"

#include <limits>
#include <utility>

#include "sim/engine/check.hpp"

namespace meshsim::autoscale {

std::vector<ElasticConfigProblem> check(const ElasticConfig& c) {
  std::vector<ElasticConfigProblem> problems;
  if (!(c.scale_down_threshold >= 0 && c.scale_down_threshold < c.scale_up_threshold)) {
    problems.push_back({"scale_down_threshold", "must be at least 0 and below scale_up_threshold (leave a gap "
                                                "between them, or workers oscillate)"});
  }
  if (c.min_workers < 1) problems.push_back({"min_workers", "must be at least 1"});
  if (c.min_workers > c.max_workers) problems.push_back({"min_workers", "must not exceed max_workers"});
  if (!(c.requests_per_worker_capacity > 0)) {
    problems.push_back({"requests_per_worker_capacity", "must be positive"});
  }
  if (c.monitoring_interval <= SimTime::zero()) problems.push_back({"monitoring_interval_s", "must be positive"});
  return problems;
}

double ElasticScheduler::load_ratio(const PoolSnapshot& pool) const {
  if (pool.active == 0) return pool.active_requests > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  return static_cast<double>(pool.active_requests) / (pool.active * config_.requests_per_worker_capacity);
}

bool ElasticScheduler::add_worker(ScalingManager& manager) {
  if (const auto inactive = manager.view().first_inactive(pool_)) {
    return static_cast<bool>(manager.reactivate(*inactive));
  }
  return static_cast<bool>(manager.scale_up_full(pool_));
}

bool ElasticScheduler::remove_worker(ScalingManager& manager) {
  const auto chosen = manager.view().least_loaded(pool_);
  return chosen && static_cast<bool>(manager.deactivate(*chosen));
}

void ElasticScheduler::check(ScalingManager& manager) {
  if (!config_.enable_elastic || paused_) return;
  const SimTime now = manager.view().now();
  const PoolSnapshot pool = manager.view().snapshot(pool_);
  // The limits first, whatever the load.
  if (pool.current() < config_.min_workers) {
    if (add_worker(manager)) last_scale_up_ = now;
    return;
  }
  if (pool.current() > config_.max_workers) {
    if (remove_worker(manager)) last_scale_down_ = now;
    return;
  }
  const double ratio = load_ratio(pool);
  if (ratio > config_.scale_up_threshold) {
    if (!above_since_) above_since_ = now;
    below_since_.reset();
  } else if (ratio < config_.scale_down_threshold) {
    if (!below_since_) below_since_ = now;
    above_since_.reset();
  } else {
    above_since_.reset();
    below_since_.reset();
  }
  const auto stable = [&](const std::optional<SimTime>& since) {
    return since && now - *since >= config_.min_stable_period;
  };
  const auto cooled = [&](const std::optional<SimTime>& last, SimTime cooldown) {
    return !last || now - *last >= cooldown;
  };
  if (stable(above_since_) && cooled(last_scale_up_, config_.scale_up_cooldown) &&
      pool.current() < config_.max_workers) {
    if (add_worker(manager)) last_scale_up_ = now;
  } else if (stable(below_since_) && cooled(last_scale_down_, config_.scale_down_cooldown) &&
             pool.active > config_.min_workers) {
    if (remove_worker(manager)) last_scale_down_ = now;
  }
}

void ElasticScheduler::wake_up_all_workers(ScalingManager& manager) {
  paused_ = true;
  for (std::uint32_t size = manager.view().snapshot(pool_).current(); size < config_.max_workers; ++size) {
    if (!add_worker(manager)) break;
  }
}

void ElasticScheduler::resume_elastic_scheduling() {
  paused_ = false;
  above_since_.reset();
  below_since_.reset();
}

std::map<std::string, double> ElasticScheduler::get_metrics(const ScalingManager& manager) const {
  const PoolSnapshot pool = manager.view().snapshot(pool_);
  return {{"active_workers", pool.active},
          {"draining_workers", pool.draining},
          {"total_workers", pool.active + pool.starting + pool.draining + pool.inactive},
          {"active_requests", static_cast<double>(pool.active_requests)},
          {"pending_requests", static_cast<double>(manager.view().scan_active(pool_).pending_requests)},
          {"load_ratio", load_ratio(pool)},
          {"total_capacity", pool.active * config_.requests_per_worker_capacity}};
}

ElasticAutoscaler::ElasticAutoscaler(ElasticConfig config, const std::vector<InstanceTag>& pools) : config_(config) {
  for (const InstanceTag tag : pools) schedulers_.emplace_back(config, tag);
}

void ElasticAutoscaler::decide(ScalingManager& manager) {
  for (auto& scheduler : schedulers_) scheduler.check(manager);
}

const ElasticScheduler& ElasticAutoscaler::scheduler(InstanceTag pool) const {
  for (const auto& scheduler : schedulers_) {
    if (scheduler.pool() == pool) return scheduler;
  }
  MESHSIM_CHECK(false, "ElasticAutoscaler: no scheduler for that pool");
  return schedulers_.front();
}

ElasticScheduler& ElasticAutoscaler::scheduler(InstanceTag pool) {
  return const_cast<ElasticScheduler&>(std::as_const(*this).scheduler(pool));
}

}  // namespace meshsim::autoscale
