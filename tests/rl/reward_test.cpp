// The reward's terms against hand-computed values (rl/env/reward.hpp).
#include "rl/env/reward.hpp"

#include <gtest/gtest.h>

namespace meshsim::rl {
namespace {

TEST(RewardTest, EveryMissCountsOnceAgainstTheWorkloadsMeanRequestsPerInterval) {
  configs::RewardWeights weights;  // 1, 1, 0.01, 0.001
  RewardInputs in;
  in.missed = 3;
  in.late = 1.5;
  in.mean_instances = 6.5;
  in.actions = 2;
  in.reference_requests = 60.0;  // 4 requests/s at 15 s decisions
  const RewardTerms terms = reward_terms(in, weights);
  EXPECT_DOUBLE_EQ(terms.slo, 3.0 / 60.0);
  EXPECT_DOUBLE_EQ(terms.waiting, 1.5 / 60.0);
  EXPECT_DOUBLE_EQ(terms.cost, 0.065);
  EXPECT_DOUBLE_EQ(terms.churn, 0.002);
  EXPECT_DOUBLE_EQ(terms.reward(), -(0.05 + 0.025 + 0.065 + 0.002));
  // Twice the misses in an interval of twice the load cost twice as much (a share of
  // misses would have scored both the same).
  in.missed = 6;
  EXPECT_DOUBLE_EQ(reward_terms(in, weights).slo, 2 * terms.slo);
  weights.waiting_weight = 0.0;
  EXPECT_DOUBLE_EQ(reward_terms(in, weights).waiting, 0.0);
}

TEST(RewardTest, ARequestIsLateForTheShareOfTheIntervalPastItsTtftTarget) {
  // The interval (100, 115], a 1 s TTFT target.
  EXPECT_DOUBLE_EQ(late_share(114.5, 100, 115, 1.0), 0.0);          // not late yet
  EXPECT_DOUBLE_EQ(late_share(105.0, 100, 115, 1.0), 9.0 / 15.0);   // late from 106
  EXPECT_DOUBLE_EQ(late_share(90.0, 100, 115, 1.0), 1.0);           // late all along
  EXPECT_DOUBLE_EQ(late_share(99.5, 100, 115, 1.0), 14.5 / 15.0);   // late from 100.5
  EXPECT_DOUBLE_EQ(late_share(114.0, 100, 115, 1.0), 0.0);          // late from 115: no time
}

}  // namespace
}  // namespace meshsim::rl
