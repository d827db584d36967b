#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/autoscale/work_mix.hpp"
#include "sim/autoscale/autoscaler.hpp"

namespace meshsim::rl {

// The observation of the scaling environment, every feature in one place. Per pool (the
// start state's tags, in the order prompt, token, mixed), then global. Counts are whole
// instances (not shares of max_total_instances, so a policy reads the same numbers on a
// cluster with another cap). Loads are per instance of the pool's size, ACTIVE +
// STARTING (capacity already asked for counts, so a policy does not keep adding while
// scale-ups start), but waiting requests and KV are per ACTIVE instance (where they are);
// loads are log1p-compressed, since they span orders of magnitude under overload;
// latencies are multiples of their SLO target, capped at kLatencyCap. The learner's
// running normalisation scales them all to order one.
//
// Per pool:
//   0 active      ACTIVE instances
//   1 ready_soon  STARTING instances that become ACTIVE within one decision interval
//   2 ready_mid   STARTING, within four intervals
//   3 ready_late  STARTING, later (the scale-up delay shows in how these fill)
//   4 draining    DRAINING instances
//   5 requests    log1p(requests on ACTIVE instances, running or waiting, per ACTIVE + STARTING)
//   6 tokens      log1p(pending prompt tokens on ACTIVE instances per ACTIVE + STARTING / 1000)
//   7 kv          KV-cache tokens in use / capacity over ACTIVE instances, in [0, 1]
//   8 waiting     log1p(requests waiting, not in the running batch, per ACTIVE instance)
// With residual actions only:
//   9 baseline    the instances the residual's target tracking wants for the pool at this
//                 decision (the size a middle choice keeps)
//  10 baseline_need  its recommendation before rounding up and its limits (metric / target
//                 x ACTIVE; the size at the first decision): how much of the last instance
//                 the load needs
// Global (over the last decision interval unless said; the first observation of an
// episode covers its warm-up, rl.warmup_s, played at the start size):
//   0 arrivals    log1p(arrival rate over the interval, requests/s)
//   1 rate_1m     log1p(arrival rate averaged over about a minute, requests/s): an
//   2 rate_5m     exponential average with time constant 60, 300, 900 s (Unix load
//   3 rate_15m    averages' rule), started at the warm-up's rate
//   4 slope_1m    change of rate_1m over the interval, per minute (relative growth: the
//   5 slope_5m    averages are log-compressed); 0 at the first observation
//   6 slope_15m
//   7 ttft_p50    median TTFT of the requests that left / the TTFT target
//   8 ttft_p99    p99 TTFT / the TTFT target
//   9 tbt_p99     p99 mean TBT / the TBT target
//  10 violations  share of the requests that left missing the SLO (dropped ones included)
//  11 phase_sin   sin(2 pi * workload seconds / rl.phase_period_s): where the interval ends
//  12 phase_cos   in the workload's cycle (a day by default); both 0 with period 0
//  13 cost        instances that existed (any state), mean over the interval
//  14 roofline    roofline utilisation over the interval: the work done at the GPUs'
//                 peak FLOPs or bandwidth over serving capacity (cluster::utilisation_between)
//  15 delay       log1p(scale-up delay / decision interval): how long a scale-up takes
//                 to become capacity (rl.scale_up_delays_s varies it between episodes)
// The work behind the rate (sim/autoscale/work_mix.hpp), over the last minute (_1m) and the
// last five (_5m), sliding, so none marks where a trace's own windows begin:
//  16 prompt_1m       log1p(mean prompt tokens of the requests that arrived / 1000)
//  17 prompt_p90_1m   log1p(their 90th percentile / 1000), to 25%
//  18 output_1m       log1p(mean output tokens of the requests that completed / 1000)
//  19 output_p90_1m   log1p(their 90th percentile / 1000), to 25%
//  20 burst_1m        log1p(the index of dispersion of arrivals per second: 1 for
//                     Poisson arrivals, above for bursts; 0 when none arrived)
//  21..25             the same over five minutes
// Per class of service (scenarios with "classes" only, in their order), over the interval:
//   0 violations  share of the class's requests that left missing its SLO
//   1 goodput     log1p(the class's requests meeting its SLO per second)
inline constexpr double kLatencyCap = 10.0;

// A feature's name and the range its values keep (the Python spaces' Box bounds).
inline constexpr double kNoBound = std::numeric_limits<double>::infinity();
struct Feature {
  std::string_view name;
  double low = 0.0;
  double high = kNoBound;
};
inline constexpr std::array<Feature, 9> kPoolFeatureTable = {{{"active"},
                                                              {"ready_soon"},
                                                              {"ready_mid"},
                                                              {"ready_late"},
                                                              {"draining"},
                                                              {"requests"},
                                                              {"tokens"},
                                                              {"kv", 0.0, 1.0},
                                                              {"waiting"}}};
inline constexpr std::array<Feature, 2> kBaselineFeatureTable = {{{"baseline"}, {"baseline_need"}}};
inline constexpr std::array<Feature, 26> kGlobalFeatureTable = {{{"arrivals"},
                                                                 {"rate_1m"},
                                                                 {"rate_5m"},
                                                                 {"rate_15m"},
                                                                 {"slope_1m", -kNoBound, kNoBound},
                                                                 {"slope_5m", -kNoBound, kNoBound},
                                                                 {"slope_15m", -kNoBound, kNoBound},
                                                                 {"ttft_p50", 0.0, kLatencyCap},
                                                                 {"ttft_p99", 0.0, kLatencyCap},
                                                                 {"tbt_p99", 0.0, kLatencyCap},
                                                                 {"violations", 0.0, 1.0},
                                                                 {"phase_sin", -1.0, 1.0},
                                                                 {"phase_cos", -1.0, 1.0},
                                                                 {"cost"},
                                                                 // (about [0, 1]; a step's work is counted when it ends)
                                                                 {"roofline"},
                                                                 {"delay"},
                                                                 {"prompt_1m"},
                                                                 {"prompt_p90_1m"},
                                                                 {"output_1m"},
                                                                 {"output_p90_1m"},
                                                                 {"burst_1m"},
                                                                 {"prompt_5m"},
                                                                 {"prompt_p90_5m"},
                                                                 {"output_5m"},
                                                                 {"output_p90_5m"},
                                                                 {"burst_5m"}}};
inline constexpr std::array<Feature, 2> kClassFeatureTable = {{{"violations", 0.0, 1.0}, {"goodput"}}};
inline constexpr std::size_t kPoolFeatures = kPoolFeatureTable.size();
inline constexpr std::size_t kGlobalFeatures = kGlobalFeatureTable.size();
// STARTING instances are binned by decision intervals to ready: (0, 1], (1, 4], beyond.
inline constexpr double kReadySoonIntervals = 1.0, kReadyMidIntervals = 4.0;

// The arrival-rate averages of the global features: exponential averages over about 1, 5
// and 15 minutes, and how much each moved (log1p scale) per minute in the last interval.
class ArrivalAverages {
 public:
  static constexpr std::array<double, 3> kTimeConstantsS = {60.0, 300.0, 900.0};
  // Every average starts at `rate`, none moving.
  void start(double rate);
  // The interval of `seconds` just played had `rate` requests/s.
  void add(double rate, double seconds);
  const std::array<double, 3>& averages() const { return averages_; }
  const std::array<double, 3>& slopes_per_minute() const { return slopes_; }

 private:
  std::array<double, 3> averages_{}, slopes_{};
};

// What the environment measured over the last interval (the global features' inputs).
struct IntervalStats {
  double seconds = 0.0;
  double arrival_rate = 0.0;  // requests/s
  ArrivalAverages rates;
  double ttft_p50 = 0.0, ttft_p99 = 0.0, tbt_p99 = 0.0;  // seconds
  double violations = 0.0;
  // Where the interval ends in the workload's cycle, in [0, 1); unset: no phase features.
  std::optional<double> phase;
  double mean_instances = 0.0;
  double roofline = 0.0;  // roofline utilisation (cluster::utilisation_between)
  double decision_interval_s = 15.0;
  double scale_up_delay_s = 0.0;
  std::array<autoscale::WorkMix::Figures, 2> work{};  // over autoscale::WorkMix::kWindowsS
  struct ClassFigures {
    double violations = 0.0;
    double goodput_per_s = 0.0;
  };
  std::vector<ClassFigures> classes;  // per class of service (the class features)
};

// A residual baseline's view of a pool (the baseline features).
struct BaselineView {
  std::uint32_t size = 0;
  double need = 0.0;
};
inline constexpr std::size_t kBaselineFeatures = kBaselineFeatureTable.size();

// What the observation holds: the pools' features, with the residual actions' baseline
// features (`baseline`), the global ones, and those of each class of service.
struct ObservationLayout {
  std::span<const cluster::InstanceTag> pools;
  bool baseline = false;
  std::span<const std::string> classes;
};
std::size_t observation_size(std::size_t pools, bool baseline = false, std::size_t classes = 0);
// Each feature's name, in observation order: "<pool>.<feature>" per pool ("token.kv"),
// the global features' names ("ttft_p99"), then "<class>.<feature>" per class, as listed
// above.
std::vector<std::string> observation_names(const ObservationLayout& layout);
// Each feature's (low, high), in observation order: the ranges of the tables above.
std::vector<std::pair<double, double>> observation_bounds(const ObservationLayout& layout);
// Writes the observation into `out` (observation_size(pools.size(), !baseline.empty(),
// stats.classes.size()) floats); `baseline`: each pool's baseline view (residual actions),
// or empty.
void collect_observation(const cluster::ScalingManager& manager, std::span<const cluster::InstanceTag> pools,
                         const IntervalStats& stats, double ttft_target_s, double tbt_target_s,
                         std::span<const BaselineView> baseline, std::span<float> out);

}  // namespace meshsim::rl
