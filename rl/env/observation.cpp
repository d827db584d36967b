#include "rl/env/observation.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/engine/check.hpp"

namespace meshsim::rl {

namespace {

// The layout's features in observation order: visit(prefix, feature), the prefix a pool's
// or a class's name ("" for the global features). The one walk names and bounds share.
template <typename Visit>
void for_each_feature(const ObservationLayout& layout, Visit visit) {
  for (const cluster::InstanceTag tag : layout.pools) {
    const std::string_view pool = cluster::kInstanceTagNames.name(tag);
    for (const Feature& feature : kPoolFeatureTable) visit(pool, feature);
    if (layout.baseline) {
      for (const Feature& feature : kBaselineFeatureTable) visit(pool, feature);
    }
  }
  for (const Feature& feature : kGlobalFeatureTable) visit(std::string_view(), feature);
  for (const std::string& name : layout.classes) {
    for (const Feature& feature : kClassFeatureTable) visit(std::string_view(name), feature);
  }
}

}  // namespace

std::size_t observation_size(std::size_t pools, bool baseline, std::size_t classes) {
  return pools * (kPoolFeatures + (baseline ? kBaselineFeatures : 0)) + kGlobalFeatures +
         classes * kClassFeatureTable.size();
}

std::vector<std::string> observation_names(const ObservationLayout& layout) {
  std::vector<std::string> names;
  for_each_feature(layout, [&](std::string_view prefix, const Feature& feature) {
    names.push_back(prefix.empty() ? std::string(feature.name) : std::string(prefix) + "." + std::string(feature.name));
  });
  return names;
}

std::vector<std::pair<double, double>> observation_bounds(const ObservationLayout& layout) {
  std::vector<std::pair<double, double>> bounds;
  for_each_feature(layout, [&](std::string_view, const Feature& feature) { bounds.emplace_back(feature.low, feature.high); });
  return bounds;
}

void ArrivalAverages::start(double rate) {
  averages_.fill(rate);
  slopes_.fill(0.0);
}

void ArrivalAverages::add(double rate, double seconds) {
  for (std::size_t i = 0; i < averages_.size(); ++i) {
    const double before = averages_[i];
    averages_[i] += -std::expm1(-seconds / kTimeConstantsS[i]) * (rate - before);
    slopes_[i] = seconds > 0 ? (std::log1p(averages_[i]) - std::log1p(before)) * 60.0 / seconds : 0.0;
  }
}

void collect_observation(const cluster::ScalingManager& manager, std::span<const cluster::InstanceTag> pools,
                         const IntervalStats& stats, double ttft_target_s, double tbt_target_s,
                         std::span<const BaselineView> baseline, std::span<float> out) {
  MESHSIM_CHECK(baseline.empty() || baseline.size() == pools.size(), "collect_observation: a baseline size per pool");
  MESHSIM_CHECK(out.size() == observation_size(pools.size(), !baseline.empty(), stats.classes.size()),
                "collect_observation: wrong buffer size");
  const auto latency = [](double seconds, double target) { return std::min(kLatencyCap, seconds / target); };
  std::size_t at = 0;
  const auto put = [&](double value) { out[at++] = static_cast<float>(value); };
  const engine::SimTime now = manager.view().now();
  const auto within = [&](double intervals) {
    return now + engine::SimTime::from_seconds(intervals * stats.decision_interval_s);
  };
  for (std::size_t p = 0; p < pools.size(); ++p) {
    const cluster::InstanceTag tag = pools[p];
    const autoscale::PoolSnapshot pool = manager.view().snapshot(tag);
    const autoscale::PoolKv kv = manager.view().scan_active(tag);
    const double active = std::max(1u, pool.active);
    const double size = std::max(1u, pool.current());
    const std::uint32_t soon = manager.view().starting_ready_by(tag, within(kReadySoonIntervals));
    const std::uint32_t mid = manager.view().starting_ready_by(tag, within(kReadyMidIntervals));
    put(pool.active);
    put(soon);
    put(mid - soon);
    put(pool.starting - mid);
    put(pool.draining);
    put(std::log1p(static_cast<double>(pool.active_requests) / size));
    put(std::log1p(static_cast<double>(std::max<std::int64_t>(0, pool.pending_tokens)) / size / 1000.0));
    put(kv.kv_capacity > 0 ? static_cast<double>(kv.kv_used) / static_cast<double>(kv.kv_capacity) : 0.0);
    put(std::log1p(static_cast<double>(kv.pending_requests) / active));
    if (!baseline.empty()) {
      put(baseline[p].size);
      put(baseline[p].need);
    }
  }
  const double phase = 2.0 * std::numbers::pi * stats.phase.value_or(0.0);
  put(std::log1p(stats.arrival_rate));
  for (const double rate : stats.rates.averages()) put(std::log1p(rate));
  for (const double slope : stats.rates.slopes_per_minute()) put(slope);
  put(latency(stats.ttft_p50, ttft_target_s));
  put(latency(stats.ttft_p99, ttft_target_s));
  put(latency(stats.tbt_p99, tbt_target_s));
  put(stats.violations);
  put(stats.phase ? std::sin(phase) : 0.0);
  put(stats.phase ? std::cos(phase) : 0.0);
  put(stats.mean_instances);
  put(stats.roofline);
  put(std::log1p(stats.scale_up_delay_s / stats.decision_interval_s));
  for (const autoscale::WorkMix::Figures& work : stats.work) {
    put(std::log1p(work.prompt_mean / 1000.0));
    put(std::log1p(work.prompt_p90 / 1000.0));
    put(std::log1p(work.output_mean / 1000.0));
    put(std::log1p(work.output_p90 / 1000.0));
    put(std::log1p(work.burstiness));
  }
  for (const IntervalStats::ClassFigures& c : stats.classes) {
    put(c.violations);
    put(std::log1p(c.goodput_per_s));
  }
  MESHSIM_CHECK(at == out.size(), "collect_observation: the feature list and kPoolFeatures/kGlobalFeatures disagree");
}

}  // namespace meshsim::rl
