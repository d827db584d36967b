#include "rl/env/right_sizing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace meshsim::rl {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The fewest instances to hold in each interval: for every interval s it serves,
// need[s] from s - lead on; for an interval s < lead, which only the start can serve,
// as much of the start as it needs is kept. The windows are short (a scale-up delay in
// intervals), so each is scanned directly.
std::vector<std::uint32_t> lower_bounds(const RightSizingProblem& p) {
  const std::size_t n = p.need.size();
  std::vector<std::uint32_t> floor(n, 0);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t s = t; s < n && s <= t + p.lead; ++s) {
      floor[t] = std::max(floor[t], s < p.lead ? std::min(p.need[s], p.start) : p.need[s]);
    }
  }
  return floor;
}
}  // namespace

std::vector<std::uint32_t> right_size(const RightSizingProblem& p) {
  const std::size_t intervals = p.need.size();
  if (intervals == 0) return {};
  const std::vector<std::uint32_t> floor = lower_bounds(p);
  // Holding more than the largest need (or the start) never pays: sizes 0..top suffice.
  const std::uint32_t top = std::max(p.start, *std::max_element(floor.begin(), floor.end()));
  const std::size_t sizes = std::size_t{top} + 1;
  // cost[n]: the cheapest schedule so far ending at n; from[t * sizes + n]: the size held
  // in interval t - 1 on that schedule.
  std::vector<double> cost(sizes, kInfinity), next(sizes), up(sizes), down(sizes);
  std::vector<std::uint32_t> up_from(sizes), down_from(sizes), from(intervals * sizes);
  cost[p.start] = 0.0;
  for (std::size_t t = 0; t < intervals; ++t) {
    // min over m of cost[m] + up_cost (n - m)+ + down_cost (m - n)+, in two passes: from
    // below (m <= n, growing) and from above (m >= n, shrinking).
    for (std::size_t n = 0; n < sizes; ++n) {
      up[n] = cost[n];
      up_from[n] = static_cast<std::uint32_t>(n);
      if (n > 0 && up[n - 1] + p.up_cost < up[n]) {
        up[n] = up[n - 1] + p.up_cost;
        up_from[n] = up_from[n - 1];
      }
    }
    for (std::size_t n = sizes; n-- > 0;) {
      down[n] = cost[n];
      down_from[n] = static_cast<std::uint32_t>(n);
      if (n + 1 < sizes && down[n + 1] + p.down_cost < down[n]) {
        down[n] = down[n + 1] + p.down_cost;
        down_from[n] = down_from[n + 1];
      }
    }
    for (std::size_t n = 0; n < sizes; ++n) {
      const bool from_below = up[n] <= down[n];
      from[t * sizes + n] = from_below ? up_from[n] : down_from[n];
      next[n] = n < floor[t] ? kInfinity : static_cast<double>(n) + (from_below ? up[n] : down[n]);
    }
    cost.swap(next);
  }
  std::vector<std::uint32_t> held(intervals);
  std::uint32_t n = static_cast<std::uint32_t>(std::min_element(cost.begin(), cost.end()) - cost.begin());
  for (std::size_t t = intervals; t-- > 0;) {
    held[t] = n;
    n = from[t * sizes + n];
  }
  return held;
}

double schedule_cost(const RightSizingProblem& p, std::span<const std::uint32_t> held) {
  double total = 0.0;
  std::uint32_t before = p.start;
  for (const std::uint32_t n : held) {
    total += n;
    total += n > before ? p.up_cost * (n - before) : p.down_cost * (before - n);
    before = n;
  }
  return total;
}

double CapacityCurve::at(std::uint32_t n) const {
  if (sizes.empty() || n == 0) return 0.0;
  const auto per_instance = [&](std::size_t i) { return sustained[i] / static_cast<double>(sizes[i]); };
  if (n <= sizes.front()) return n * per_instance(0);
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    if (n <= sizes[i]) {
      const double share = static_cast<double>(n - sizes[i - 1]) / static_cast<double>(sizes[i] - sizes[i - 1]);
      return n * (per_instance(i - 1) + share * (per_instance(i) - per_instance(i - 1)));
    }
  }
  return n * per_instance(sizes.size() - 1);
}

std::uint32_t fewest_sustaining(const CapacityCurve& curve, double rate, double utilisation, std::uint32_t at_least,
                                std::uint32_t most) {
  // Capacity rises with n (per-instance capacity is interpolated between rising totals
  // measured by a monotone search), so the first n that covers is the fewest.
  if (rate <= 0) return at_least;
  if (!(curve.at(most) * utilisation >= rate)) return std::max(at_least, most);  // none covers
  for (std::uint32_t n = at_least; n < most; ++n) {
    if (curve.at(n) * utilisation >= rate) return n;
  }
  return std::max(at_least, most);
}

std::vector<double> centred_mean(std::span<const double> values, std::size_t width) {
  std::vector<double> out(values.size());
  width = std::max<std::size_t>(1, width);
  const std::size_t before = width / 2, after = width - 1 - before;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t from = i >= before ? i - before : 0;
    const std::size_t to = std::min(values.size() - 1, i + after);
    double sum = 0.0;
    for (std::size_t k = from; k <= to; ++k) sum += values[k];
    out[i] = sum / static_cast<double>(to - from + 1);
  }
  return out;
}

}  // namespace meshsim::rl
