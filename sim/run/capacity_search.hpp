#pragma once

// The searches behind `meshsim capacity`, over a yes/no that is monotone in its argument
// (meeting an SLO target: more instances never hurt, more load never helps). Each round
// asks `probe` about several points at once (run on threads by the caller); the points
// depend only on the answers, never on the threads, so a search repeats exactly.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace meshsim::run {

// Points probed per round: a quaternary search, 3 probes that narrow an interval fourfold.
inline constexpr std::size_t kProbesPerRound = 3;

// Answers for each point of a round, in order: whether it meets the target.
using IntProbe = std::function<std::vector<bool>(const std::vector<std::int64_t>&)>;
using RateProbe = std::function<std::vector<bool>(const std::vector<double>&)>;

// The fewest x in [1, max] that meets, or none when `max` does not: x = 1, 2, 4, ... up
// to `max`, then the bracket between the largest failing and the smallest meeting point
// narrowed to one. Every point probed is probed once.
std::optional<std::int64_t> fewest_meeting(std::int64_t max, const IntProbe& probe);

// How highest_meeting probes: points a round (3 for threads; 1 for one thread, a plain
// bisection), and the first step from `start` (2: no guess; closer when `start` is a good
// guess, as a neighbouring stretch's answer is), doubling after it.
struct RateSearch {
  std::size_t per_round = kProbesPerRound;
  double first_step = 2.0;
};

// The highest rate that meets, to within a factor of 1 + precision: rates from `start` up
// (or down, when `start` fails) by the first step then doubling, until the answer changes,
// then the bracket narrowed on a log scale. None when even `lowest` fails; `highest` when
// it meets.
std::optional<double> highest_meeting(double start, double lowest, double highest, double precision,
                                      const RateProbe& probe, RateSearch search = {});

}  // namespace meshsim::run
