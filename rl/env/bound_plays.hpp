#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rl/env/evaluation.hpp"

namespace meshsim::rl {

// The evaluation's bound: the offline right-sizing optimum (rl/env/right_sizing.hpp) on
// an evaluated window, its need taken from the simulator's own capacity, its schedule
// played in the simulator. Swept over the utilisation of that capacity, its plays make a
// front of GPU-hours against SLO attainment, the least any scaling policy could spend at
// an SLO knowing the load ahead.

// What one instance of the scenario's deployment serves of a window's requests (their
// length mix) when it is never idle: measured by playing a single instance at a rate
// scale that keeps a backlog (raised fourfold until it does).
struct CapacityProbe {
  double requests_per_s = 0.0;  // completed per second while backlogged
  // A drained instance's GPU time after its last new request: the median E2E minus the
  // median TTFT (the time a request spends decoding) of the instance at half its capacity.
  double drain_s = 0.0;
  std::string error;  // the probe failed (a play's error, or no backlog at any scale)
};
CapacityProbe probe_capacity(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                             const traces::SharedWorkload& workload, const EvalWindow& window, std::uint64_t seed);

// The requests per second arriving in each decision interval an episode on `window`
// decides (after its warm-up), as the environment plays them.
std::vector<double> interval_rates(const configs::RlSpec& spec, const traces::EpisodeWorkload& workload,
                                   const EvalWindow& window);

// The bound's two forms: each interval's own load (full hindsight), or its load averaged
// over a minute centred on it (the trend ahead known, not the noise of each interval).
enum class BoundForm { kHindsight, kSmoothed };
const char* bound_name(BoundForm form);  // "bound_hindsight" | "bound_smoothed"

// The cheapest schedule of instances (one per decision) serving `rates` at `utilisation`
// of the probe's capacity, from `start` ACTIVE, with the scale-up delay `delay_s` (asked
// for that much ahead), the drain and a switching price of one action (the reward's
// churn_weight / cost_weight, in instance-intervals) for each instance added or drained.
std::vector<std::uint32_t> bound_schedule(const configs::ScenarioConfig& config, const std::vector<double>& rates,
                                          const CapacityProbe& probe, double utilisation, BoundForm form,
                                          double delay_s, std::uint32_t start);

// Plays `sizes` (one pool size per decision; the scenario must have one pool) through
// the target action, as play() plays any contender; named `policy` at `parameter`.
Outcome play_schedule(const std::string& policy, double parameter, const configs::ScenarioConfig& config,
                      const configs::Catalog& catalog, const traces::SharedWorkload& workload, const EvalWindow& window,
                      double delay_s, std::uint32_t start, std::uint64_t seed, const std::vector<std::uint32_t>& sizes);

}  // namespace meshsim::rl
