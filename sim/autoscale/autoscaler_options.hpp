#pragma once

// The autoscaling policies' parameters (configs fills them). Plain values.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/autoscale/capacity_model.hpp"
#include "sim/engine/enum_names.hpp"
#include "sim/engine/sim_time.hpp"

namespace meshsim::autoscale {

using engine::SimTime;

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
  // The arrival rate in units of what one instance sustains at the SLO for the work now
  // arriving (the capacity model's, at the recent length mix and burstiness and the
  // pool's ACTIVE size; sim/autoscale/capacity_model.hpp): 1 is an instance at its SLO
  // capacity, so a target of 0.8 keeps a fifth in reserve, whatever the prompts' length.
  kCapacityUnits,
};
inline constexpr EnumNames kTrackedMetricNames{
    std::array{std::pair{TrackedMetric::kKvUtilisation, std::string_view("kv_utilisation")},
               std::pair{TrackedMetric::kRequestsPerInstance, std::string_view("requests_per_instance")},
               std::pair{TrackedMetric::kArrivalRate, std::string_view("arrival_rate")},
               std::pair{TrackedMetric::kTokenRate, std::string_view("token_rate")},
               std::pair{TrackedMetric::kCapacityUnits, std::string_view("capacity_units")}}};

// A metric and its target value per instance (a fraction for kv_utilisation).
struct TrackedTarget {
  TrackedMetric metric = TrackedMetric::kRequestsPerInstance;
  double target = 32;
};

// The Kubernetes HorizontalPodAutoscaler (autoscaling/v2) with its defaults.
struct TargetTrackingConfig {
  TrackedMetric metric = TrackedMetric::kRequestsPerInstance;
  double target = 32;      // the metric's target value per instance (a fraction for kv_utilisation)
  // Further metrics, each at its own target. The recommendation is the largest of every
  // metric's (the HPA's rule for several metrics): the pool is sized for whichever the
  // load strains most, so a mix of long prompts trips tokens where rate stays calm.
  std::vector<TrackedTarget> also;
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
  // What capacity_units divides by (required when a metric is capacity_units), and the
  // file it was read from (a scenario's `capacity_model`, as `meshsim capacity-model`
  // writes it).
  std::shared_ptr<const CapacityModel> capacity_model;
  std::string capacity_model_path;
  // The model's capacity corrected online by a bounded multiplier: down while more than
  // `miss_budget` of the requests judged over the last hour missed the SLO after
  // queueing, up while fewer than half of it did (a model is wrong by a day's factor more
  // than by a minute's, so the correction is slow: 2% down or 0.5% up a decision, within
  // [0.5, 2]; target_tracking.cpp says why). Off by default: on ServeGen's m-large test
  // days it cost 27-38% more than without (rl/autoscaling-and-rl.md).
  bool capacity_correction = false;
  double miss_budget = 0.01;
};

struct OracleConfig {
  SimTime window = SimTime::from_seconds(60);  // sized for, and decided every
  double target_utilisation = 0.8;             // of the capacity estimate below
  SimTime tbt_target = SimTime::from_ms(100);  // the SLO's: bounds the decode batch
  std::uint32_t max_instances = 100;           // per pool
};

}  // namespace meshsim::autoscale
