#include "rl/env/right_sizing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace meshsim::rl {
namespace {

using Sizes = std::vector<std::uint32_t>;

// The slow twin: every schedule of sizes 0..top over the intervals, checked against the
// definition (ACTIVE in interval s = the fewest held over [s - lead, s], start before 0).
double brute_force_cost(const RightSizingProblem& p, std::uint32_t top) {
  const std::size_t n = p.need.size();
  Sizes held(n, 0);
  double best = std::numeric_limits<double>::infinity();
  for (;;) {
    bool feasible = true;
    for (std::size_t s = 0; s < n && feasible; ++s) {
      std::uint32_t active = held[s];
      for (std::size_t back = 1; back <= p.lead; ++back) {
        active = std::min(active, s >= back ? held[s - back] : p.start);
      }
      // Within the first lead intervals only the start serves.
      feasible = active >= (s < p.lead ? std::min(p.need[s], p.start) : p.need[s]);
    }
    if (feasible) best = std::min(best, schedule_cost(p, held));
    std::size_t i = 0;
    while (i < n && held[i] == top) held[i++] = 0;
    if (i == n) return best;
    ++held[i];
  }
}

TEST(RightSizingTest, AStepIsAskedForOneLeadAheadAndDroppedWhenItEnds) {
  // Need 2, then 5 for four intervals, then 2; instances take 2 intervals to start.
  RightSizingProblem p{{2, 2, 2, 2, 5, 5, 5, 5, 2, 2}, 2, 2, 0.0, 0.0};
  EXPECT_EQ(right_size(p), (Sizes{2, 2, 5, 5, 5, 5, 5, 5, 2, 2}));
  // Without a delay the schedule is the need itself.
  p.lead = 0;
  EXPECT_EQ(right_size(p), p.need);
}

TEST(RightSizingTest, ARampIsFollowedOneLeadAhead) {
  RightSizingProblem p{{1, 2, 3, 4, 5, 6, 7, 8}, 1, 1, 0.0, 0.0};
  EXPECT_EQ(right_size(p), (Sizes{2, 3, 4, 5, 6, 7, 8, 8}));
  // A falling ramp: each interval's own need (a drain serves nothing, so no lead).
  p.need = {8, 7, 6, 5, 4, 3, 2, 1};
  p.start = 8;
  EXPECT_EQ(right_size(p), p.need);
}

TEST(RightSizingTest, ADipIsBridgedWhenDrainingCostsMoreThanItSaves) {
  // Dropping from 4 to 1 for one interval saves 3 instance-intervals; draining three
  // instances and starting them again costs 3 x (down + up).
  RightSizingProblem p{{4, 4, 1, 4, 4}, 0, 4, 0.0, 2.0};
  EXPECT_EQ(right_size(p), (Sizes{4, 4, 4, 4, 4}));
  p.down_cost = 0.5;
  EXPECT_EQ(right_size(p), (Sizes{4, 4, 1, 4, 4}));
  // A long enough dip pays for the drain.
  p.down_cost = 2.0;
  p.need = {4, 4, 1, 1, 1, 4};
  EXPECT_EQ(right_size(p), (Sizes{4, 4, 1, 1, 1, 4}));
}

TEST(RightSizingTest, AnOverProvisionedStartIsDrainedAtOnce) {
  RightSizingProblem p{{1, 1, 1}, 3, 6, 0.0, 0.0};
  EXPECT_EQ(right_size(p), (Sizes{1, 1, 1}));
}

TEST(RightSizingTest, MatchesEverySchedulesCostOnRandomProblems) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    RightSizingProblem p;
    const std::size_t intervals = 1 + rng() % 5;
    for (std::size_t i = 0; i < intervals; ++i) p.need.push_back(rng() % 4);
    p.lead = rng() % 3;
    p.start = rng() % 4;
    p.up_cost = (rng() % 5) * 0.5;
    p.down_cost = (rng() % 5) * 0.5;
    const Sizes held = right_size(p);
    ASSERT_EQ(held.size(), intervals);
    for (std::size_t k = p.lead; k < intervals; ++k) {
      for (std::size_t t = k - p.lead; t <= k; ++t) ASSERT_GE(held[t], p.need[k]) << "trial " << trial;
    }
    EXPECT_NEAR(schedule_cost(p, held), brute_force_cost(p, 4), 1e-9) << "trial " << trial;
  }
}

TEST(RightSizingTest, NeedCoversTheRateAtTheUtilisation) {
  // One size probed: a capacity proportional to the instances.
  const CapacityCurve flat{{1}, {2.0}};
  const auto need = [&](const CapacityCurve& c, double rate, double u, std::uint32_t at_least) {
    return fewest_sustaining(c, rate, u, at_least, 32);
  };
  EXPECT_EQ(need(flat, 0.0, 1.0, 1), 1u);
  EXPECT_EQ(need(flat, 2.0, 1.0, 1), 1u);
  EXPECT_EQ(need(flat, 2.01, 1.0, 1), 2u);
  EXPECT_EQ(need(flat, 7.9, 1.0, 1), 4u);
  EXPECT_EQ(need(flat, 0.0, 0.5, 0), 0u);
  EXPECT_EQ(need(flat, 7.9, 0.5, 0), 8u);
  EXPECT_EQ(need(flat, 1000.0, 1.0, 1), 32u);  // none covers: the most
  // Per-instance capacity rising from 2/s alone to 3/s in pools of 4 and more: 3 instances
  // sustain 3 x 2.667, 8 instances 24.
  const CapacityCurve pooled{{1, 4, 8}, {2.0, 12.0, 24.0}};
  EXPECT_DOUBLE_EQ(pooled.at(3), 3 * (2.0 + 2.0 / 3.0));
  EXPECT_DOUBLE_EQ(pooled.at(16), 48.0);
  EXPECT_EQ(need(pooled, 7.99, 1.0, 1), 3u);
  EXPECT_EQ(need(pooled, 8.1, 1.0, 1), 4u);
  EXPECT_EQ(need(pooled, 24.0, 1.0, 1), 8u);
  EXPECT_EQ(need(pooled, 24.0, 0.5, 1), 16u);
  // A size that meets no load at all (0) needs the most.
  EXPECT_EQ(need(CapacityCurve{{1}, {0.0}}, 1.0, 1.0, 1), 32u);
}

TEST(RightSizingTest, CentredMeanAveragesItsNeighbours) {
  const std::vector<double> v{0, 4, 8, 4, 0};
  EXPECT_EQ(centred_mean(v, 1), v);
  EXPECT_EQ(centred_mean(v, 3), (std::vector<double>{2, 4, 16.0 / 3, 4, 2}));
  EXPECT_EQ(centred_mean(v, 4), (std::vector<double>{2, 4, 4, 4, 4}));  // two before, one after
}

}  // namespace
}  // namespace meshsim::rl
