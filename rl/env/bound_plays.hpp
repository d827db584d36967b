#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rl/env/evaluation.hpp"
#include "rl/env/right_sizing.hpp"
#include "sim/engine/thread_pool.hpp"

namespace meshsim::rl {

// The evaluation's bound: the offline right-sizing optimum (rl/env/right_sizing.hpp) on
// an evaluated window, its need taken from the simulator's own capacity, its schedule
// played in the simulator. Swept over the utilisation of that capacity, its plays make a
// front of GPU-hours against SLO attainment, the least any scaling policy could spend at
// an SLO knowing the load ahead.

// The bound's capacity on an evaluated window, measured: on each stretch of `grid_s` of
// it (ServeGen's 10-minute windows, where its rates change), what pools of 1, 2, 4 and 8
// instances sustain at the recipe's SLO target on that stretch's own requests (their
// lengths and burstiness): the search `meshsim capacity --find rate` runs
// (sim/run/slo_capacity.hpp), the first minute of each stretch served but not judged.
// Where even a light load misses the target (requests the deployment cannot serve within
// the SLO at any rate), the highest rate within a point of the best attainment it reaches.
struct MeasuredCapacity {
  double grid_s = 600.0;
  std::vector<CapacityCurve> curves;  // per stretch; empty sizes: no request there
  // A drained instance's GPU time after its last new request: the median E2E minus the
  // median TTFT of one instance at its capacity, the mean over stretches.
  double drain_s = 0.0;
  std::uint64_t replays = 0;
  std::uint32_t below_target = 0;  // (stretch, size) pairs no load meets the target on
  std::string error;               // a replay failed
  // Per stretch, the SLO misses a pool of n instances leaves on its requests at their own
  // rate (index n - 1; empty: no request there): its miss rate over the requests it
  // judges times all its requests, measured from 1 instance up to the first size missing
  // nothing or, past the size its capacity says, where one more instance removes misses
  // of fewer than 1 in 2,000 of its requests. What the priced bound weighs (a bound at
  // every SLO, not only at the one the capacity is measured at).
  std::vector<std::vector<double>> misses;
  // The mean over stretches with requests of what n instances sustain.
  double mean_sustained(std::uint32_t n) const;
};
inline constexpr std::uint32_t kCapacitySizes[] = {1, 2, 4, 8};
MeasuredCapacity measure_capacity(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                                  const traces::SharedWorkload& workload, const EvalWindow& window,
                                  engine::ThreadPool& pool, double grid_s = 600.0);

// One stretch measured alone, as measure_capacity measures each: what pools of
// kCapacitySizes sustain at the recipe's SLO target on the workload's requests in
// [start_s, start_s + length_s) at rate scale 1, one size after another (callers run
// stretches side by side).
struct StretchCapacity {
  CapacityCurve curve;  // empty sizes: no request there
  // Per size: measured at its best instead (no load meets the target there).
  std::vector<bool> below_target;
  std::uint64_t requests = 0, replays = 0;
  std::string error;
};
StretchCapacity measure_stretch(const configs::ScenarioConfig& config, const configs::Catalog& catalog,
                                const traces::SharedWorkload& workload, double start_s, double length_s);

// The requests per second arriving in each decision interval an episode on `window`
// decides (after its warm-up), as the environment plays them.
std::vector<double> interval_rates(const configs::RlSpec& spec, const traces::EpisodeWorkload& workload,
                                   const EvalWindow& window);

// The bound's forms. Swept over a utilisation of the capacity measured at the SLO target:
// each interval's own load (full hindsight), or its load averaged over a minute centred on
// it (the trend ahead known, not the noise of each interval). Swept over the price of a
// miss: each stretch at the size that minimises its instance-intervals plus that price
// per miss it leaves (full hindsight of its misses at every size), which reaches the SLOs
// below the target a utilisation of one capacity sizes badly for (every stretch missing
// alike, where the cheapest misses are the stretches' whose misses cost few instances).
enum class BoundForm { kHindsight, kSmoothed, kPriced };
const char* bound_name(BoundForm form);  // "bound_hindsight" | "bound_smoothed" | "bound_priced"

// The prices of a miss (in instance-intervals) the priced form is swept over, over an
// episode of `intervals` decisions: 0 (the fewest instances throughout) and `count` - 1
// quantiles of the prices at which some stretch's cheapest size changes (each between
// its change and the next, so each buys one distinct schedule); fewer when fewer such
// prices exist, none when no stretch's size ever changes. With `count` past the number
// of changes, every schedule some price gives.
std::vector<double> miss_prices(const configs::ScenarioConfig& config, const MeasuredCapacity& capacity,
                                std::size_t intervals, std::size_t count);

// The cheapest schedule of instances (one per decision, `rates.size()` of them), from
// `start` ACTIVE, with the scale-up delay `delay_s` (asked for that much ahead), the drain
// and a switching price of one action (the reward's churn_weight / cost_weight, in
// instance-intervals) for each instance added or drained, keeping ACTIVE in each interval
// what `form` asks at `parameter` (a utilisation, or the price of a miss for kPriced):
// enough to serve `rates` at that utilisation of the measured capacity of each
// interval's stretch, or its stretch's priced size.
std::vector<std::uint32_t> bound_schedule(const configs::ScenarioConfig& config, const std::vector<double>& rates,
                                          const MeasuredCapacity& capacity, double parameter, BoundForm form,
                                          double delay_s, std::uint32_t start);

// Plays `sizes` (one pool size per decision; the scenario must have one pool) through
// the target action, as play() plays any contender; named `policy` at `parameter`.
Outcome play_schedule(const std::string& policy, double parameter, const configs::ScenarioConfig& config,
                      const configs::Catalog& catalog, const traces::SharedWorkload& workload, const EvalWindow& window,
                      double delay_s, std::uint32_t start, std::uint64_t seed, const std::vector<std::uint32_t>& sizes);

}  // namespace meshsim::rl
