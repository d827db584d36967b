#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace meshsim::rl {

// Offline right-sizing (the dynamic right-sizing problem of Lin, Wierman, Andrew and
// Thereska, with a scale-up delay): the cheapest schedule of instances held per decision
// interval, knowing every interval's need, the evaluation's bound on what any scaling
// policy can spend at a given SLO (rl/env/evaluation.hpp plays it in the simulator).
//
// An instance asked for at the start of interval t serves from interval t + lead on
// (STARTING in between, held and paid); one drained stops serving at once and costs
// `down_cost` more (its drain). So the instances ACTIVE in interval s are the fewest held
// over [s - lead, s] (the start counting for the intervals before the first), and
// "ACTIVE >= need in every interval" is held[t] >= need[s] for every s in [t, t + lead].
// An interval s < lead can only be served by the start: it keeps what it needs of it,
// and no schedule serves more there.
struct RightSizingProblem {
  std::vector<std::uint32_t> need;  // instances that must be ACTIVE in each interval
  std::uint32_t lead = 0;           // intervals from asking for an instance to its serving
  std::uint32_t start = 1;          // instances held, all ACTIVE, before the first interval
  // Costs beside holding (one instance for one interval costs 1): per instance added,
  // and per instance drained (the GPU time its drain keeps, plus any switching price).
  double up_cost = 0.0;
  double down_cost = 0.0;
};

// The instances held in each interval (need.size() of them) minimising
//   sum_t held[t] + up_cost * sum_t (held[t] - held[t-1])+ + down_cost * sum_t (held[t-1] - held[t])+
// with held[-1] = start, subject to serving every interval's need (above). O(intervals x
// sizes) time; among equally cheap schedules, the one ending smallest.
std::vector<std::uint32_t> right_size(const RightSizingProblem& problem);

// The schedule's cost in right_size's terms (the slow twin's and the tests' yardstick).
double schedule_cost(const RightSizingProblem& problem, std::span<const std::uint32_t> held);

// What pools of a few sizes sustain at the SLO target (requests per second, measured in
// the simulator: sim/run/slo_capacity.hpp), sizes rising. A pool's capacity per instance
// grows with its size (requests spread over more instances wait less), so sizes between
// and beyond those probed take the per-instance capacity interpolated linearly between
// the nearest probed sizes, held constant past the ends.
struct CapacityCurve {
  std::vector<std::uint32_t> sizes;
  std::vector<double> sustained;  // requests/s, one per size (0: not even a light load)
  double at(std::uint32_t n) const;
};

// The fewest instances in [at_least, most] whose capacity at `utilisation` covers `rate`
// (`most` when none does).
std::uint32_t fewest_sustaining(const CapacityCurve& curve, double rate, double utilisation, std::uint32_t at_least,
                                std::uint32_t most);

// The mean of each interval with its neighbours over `width` intervals centred on it
// (clipped at the ends): the need smoothed, without the interval-to-interval noise no
// causal policy can follow.
std::vector<double> centred_mean(std::span<const double> values, std::size_t width);

}  // namespace meshsim::rl
