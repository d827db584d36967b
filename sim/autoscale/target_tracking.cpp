#include "sim/autoscale/target_tracking.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine/check.hpp"

namespace meshsim::autoscale {

namespace {

// The online correction of capacity_units (TargetTrackingConfig::capacity_correction):
// the model's error is a day's bias more than a minute's, and bursts are target
// tracking's own job, so it reads the misses of the last hour and moves slowly (measured
// with a 5-minute window and 5% steps it chased each burst's misses and cost 16-38% more
// on ServeGen's m-large test days).
constexpr SimTime kCorrectionWindow = SimTime::from_seconds(3600);
constexpr std::uint64_t kLeastJudged = 200;  // fewer say too little about a 1% budget
constexpr double kCorrectionDown = 0.98, kCorrectionUp = 1.005;
constexpr double kLowestFactor = 0.5, kHighestFactor = 2.0;
// A miss counts against the capacity only when the request queued for more than this
// share of the TTFT target: a prompt too long to meet it on an idle instance misses at
// any size, and more instances would not help it.
constexpr double kQueuedShareOfTtft = 0.25;

}  // namespace

TargetTrackingAutoscaler::TargetTrackingAutoscaler(TargetTrackingConfig config, std::vector<InstanceTag> pools,
                                                   metrics::SloBook slos)
    : config_(std::move(config)), pools_(std::move(pools)), work_(std::move(slos)) {
  MESHSIM_CHECK(!tracks(TrackedMetric::kCapacityUnits) || config_.capacity_model,
                "target tracking on capacity_units needs a capacity model");
}

void TargetTrackingAutoscaler::WorkWatch::on_arrival(const traces::TraceRequest& request) {
  mix.on_arrival(request.arrival, request.prompt_tokens);
}

void TargetTrackingAutoscaler::WorkWatch::on_request(const metrics::RequestRecord& record) {
  if (record.status == metrics::RequestStatus::kCompleted) mix.on_completion(*record.finished, record.output_tokens);
  if (!metrics::slo_judges(record)) return;  // as the run's SLO attainment counts
  ++judged;
  const metrics::SloTargets& slo = slos_.of(record);
  const auto queued = record.queueing();
  const bool waited = !queued || queued->seconds() > kQueuedShareOfTtft * slo.ttft.seconds();  // drops: no start
  if (waited && !metrics::judge(record, slo).met()) ++missed;
}

void TargetTrackingAutoscaler::correct(SimTime now) {
  if (corrected_at_ && now <= *corrected_at_) return;
  corrected_at_ = now;
  judged_.push_back({now, work_.judged, work_.missed});
  work_.judged = work_.missed = 0;
  while (now - judged_.front().at >= kCorrectionWindow) judged_.pop_front();
  if (!config_.capacity_correction) return;
  std::uint64_t judged = 0, missed = 0;
  for (const Judged& j : judged_) {
    judged += j.judged;
    missed += j.missed;
  }
  if (judged < kLeastJudged) return;
  const double share = static_cast<double>(missed) / static_cast<double>(judged);
  if (share > config_.miss_budget) {
    factor_ = std::max(kLowestFactor, factor_ * kCorrectionDown);
  } else if (share < config_.miss_budget / 2) {
    factor_ = std::min(kHighestFactor, factor_ * kCorrectionUp);
  }
}

double TargetTrackingAutoscaler::capacity_per_instance(const PoolSnapshot& pool, SimTime now) const {
  // The longer window: the model is fitted on stretches of minutes, and a minute of a
  // few requests says little about their lengths' tail or burstiness.
  const WorkFigures work = work_.mix.figures(now)[1];
  return factor_ * config_.capacity_model->per_instance(work, pool.active);
}

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
    case TrackedMetric::kCapacityUnits: {
      const auto rate = per_second(pool.arrived_requests, &Arrivals::requests);
      if (!rate) return std::nullopt;
      return *rate / capacity_per_instance(pool, now);
    }
  }
  return 0.0;
}

std::uint32_t TargetTrackingAutoscaler::desired(const PoolSnapshot& pool, const PoolKv& kv, SimTime now) {
  if (tracks(TrackedMetric::kCapacityUnits)) correct(now);
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
  const PoolSnapshot pool = manager.view().snapshot(tag);
  // Only the KV metric needs the walk over the pool's instances.
  const PoolKv kv = tracks(TrackedMetric::kKvUtilisation) ? manager.view().scan_active(tag) : PoolKv{};
  const SimTime now = manager.view().now();
  if (tracks(TrackedMetric::kCapacityUnits)) correct(now);  // the look and the size see one capacity
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
