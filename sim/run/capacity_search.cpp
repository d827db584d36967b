#include "sim/run/capacity_search.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::run {

std::optional<std::int64_t> fewest_meeting(std::int64_t max, const IntProbe& probe) {
  std::int64_t failing = 0;               // the largest point known to fail (0: none yet)
  std::optional<std::int64_t> meeting;    // the smallest point known to meet
  // Grow: 1, 2, 4, ... (max last), a round at a time, until one meets.
  std::int64_t next = 1;
  while (!meeting && failing < max) {
    std::vector<std::int64_t> round;
    for (; round.size() < kProbesPerRound && (round.empty() || round.back() < max); next *= 2) {
      round.push_back(std::min(next, max));
    }
    const auto met = probe(round);
    for (std::size_t i = 0; i < round.size() && !meeting; ++i) {
      if (met[i]) {
        meeting = round[i];
      } else {
        failing = round[i];
      }
    }
  }
  if (!meeting) return std::nullopt;
  // Narrow (failing, meeting] to one point.
  while (*meeting - failing > 1) {
    const std::int64_t gap = *meeting - failing;
    std::vector<std::int64_t> round;
    for (std::size_t i = 1; i <= kProbesPerRound; ++i) {
      const std::int64_t x = failing + static_cast<std::int64_t>((static_cast<double>(gap) * i) / (kProbesPerRound + 1));
      if (x > failing && x < *meeting && (round.empty() || x > round.back())) round.push_back(x);
    }
    const auto met = probe(round);
    for (std::size_t i = 0; i < round.size(); ++i) {
      if (met[i]) {
        meeting = std::min(*meeting, round[i]);
        break;
      }
      failing = round[i];
    }
  }
  return meeting;
}

std::optional<double> highest_meeting(double start, double lowest, double highest, double precision,
                                      const RateProbe& probe, RateSearch search) {
  const std::size_t per_round = std::max<std::size_t>(1, search.per_round);
  double factor = std::max(1.0 + precision, search.first_step);
  start = std::clamp(start, lowest, highest);
  double meeting = 0, failing = 0;  // 0: not known yet
  // The first round tells the direction: start, then more steps that way once known.
  const auto first = probe({start});
  const bool up = first[0];
  (up ? meeting : failing) = start;
  double step = start;
  while ((up && failing == 0 && meeting < highest) || (!up && meeting == 0 && failing > lowest)) {
    std::vector<double> round;
    for (std::size_t i = 0; i < per_round; ++i) {
      step = up ? std::min(step * factor, highest) : std::max(step / factor, lowest);
      factor = 2.0;
      if (!round.empty() && round.back() == step) break;
      round.push_back(step);
    }
    const auto met = probe(round);
    bool changed = false;
    for (std::size_t i = 0; i < round.size() && !changed; ++i) {
      if (met[i] == up) {
        (up ? meeting : failing) = round[i];
      } else {
        (up ? failing : meeting) = round[i];
        changed = true;
      }
    }
  }
  if (meeting == 0) return std::nullopt;
  if (failing == 0) return meeting;  // `highest` meets
  // Narrow [meeting, failing) on a log scale.
  while (failing / meeting > 1 + precision) {
    const double span = std::log(failing / meeting);
    std::vector<double> round;
    for (std::size_t i = 1; i <= per_round; ++i) {
      round.push_back(meeting * std::exp(span * static_cast<double>(i) / static_cast<double>(per_round + 1)));
    }
    const auto met = probe(round);
    for (std::size_t i = 0; i < round.size(); ++i) {
      if (!met[i]) {
        failing = round[i];
        break;
      }
      meeting = round[i];
    }
  }
  return meeting;
}

}  // namespace meshsim::run
