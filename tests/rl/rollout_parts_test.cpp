// The trainer's parts without LibTorch: a rollout's buffer (next values, this rank's rows
// of a minibatch), its totals, and PPO-Lagrangian's reward and multiplier.
#include <gtest/gtest.h>

#include <cmath>

#include "rl/ppo/lagrangian.hpp"
#include "rl/ppo/rollout_buffer.hpp"

namespace meshsim::rl {
namespace {

TEST(RolloutBufferTest, NextValuesLinkStepsExceptWhereEpisodesEnded) {
  RolloutBuffer b(3, 2, 1, 1);  // 3 steps of 2 environments
  b.values = {1, 2, 3, 4, 5, 6};
  b.ended = {0, 1, 0, 0, 1, 0};
  b.next_values = {0, 9, 0, 0, 0, 0};  // a truncation's bootstrap at row 1, a termination's 0 at row 4
  b.link_next_values(std::vector<float>{7, 8});
  EXPECT_EQ(b.next_values, (std::vector<float>{3, 9, 5, 6, 0, 8}));
}

TEST(RolloutBufferTest, EachRankTakesItsOwnRowsOfAMinibatchOfAllRanksRows) {
  // 2 ranks of 2 environments, 3 steps: global row t * 4 + j; rank 1 holds j = 2, 3.
  RolloutBuffer b(3, 2, 1, 1);
  std::vector<std::int64_t> local;
  b.local_rows(std::vector<std::int64_t>{0, 2, 3, 5, 11, 9, 6}, 4, 2, local);
  EXPECT_EQ(local, (std::vector<std::int64_t>{0, 1, 5, 2}));
  b.local_rows(std::vector<std::int64_t>{0, 2, 3, 5, 11, 9, 6}, 4, 0, local);
  EXPECT_EQ(local, (std::vector<std::int64_t>{0, 3, 5}));
}

TEST(RolloutTotalsTest, FiguresAreMeansPerDecisionAndAttainmentOverRequestsThatLeft) {
  RolloutTotals totals;
  EnvInfo info;
  info.left = 10;
  info.slo_met = 9;
  info.mean_instances = 2;
  info.scale_ups = 1;
  totals.add_step(-1.0, info);
  info.left = 0;
  info.slo_met = 0;
  info.scale_ups = 0;
  totals.add_step(-3.0, info);
  totals.add_episode(-4.0);
  IterationStats stats;
  totals.fill(stats, 2);
  EXPECT_DOUBLE_EQ(stats.mean_reward, -2.0);
  EXPECT_EQ(stats.episodes, 1u);
  EXPECT_DOUBLE_EQ(stats.mean_episode_return, -4.0);
  EXPECT_EQ(stats.requests, 10u);
  EXPECT_DOUBLE_EQ(stats.slo_attainment, 0.9);
  EXPECT_DOUBLE_EQ(stats.mean_instances, 2.0);
  EXPECT_DOUBLE_EQ(stats.scaling_actions, 0.5);
  RolloutTotals none;
  none.fill(stats, 1);
  EXPECT_DOUBLE_EQ(stats.slo_attainment, 1.0) << "no request left: nothing missed";
}

TEST(LagrangianTest, TheMultiplierRisesOnMissesFallsOnHoldsAndStaysInItsBounds) {
  configs::PpoSpec opt;
  opt.lagrange_rate = 0.5;
  opt.lagrange_min = 0.1;
  opt.lagrange_max = 4.0;
  IterationStats stats;
  stats.requests = 100;
  stats.slo_attainment = 0.95;  // missed a 0.99 target: the violation clips at 1
  EXPECT_DOUBLE_EQ(next_lagrange(opt, 0.99, 1.0, stats), std::exp(0.5));
  stats.slo_attainment = 1.0;  // held it: (0.99 - 1) / 0.01 = -1
  EXPECT_DOUBLE_EQ(next_lagrange(opt, 0.99, 1.0, stats), std::exp(-0.5));
  stats.slo_attainment = 0.5;
  EXPECT_DOUBLE_EQ(next_lagrange(opt, 0.99, 3.9, stats), 4.0);
  stats.requests = 0;
  EXPECT_DOUBLE_EQ(next_lagrange(opt, 0.99, 3.9, stats), 3.9) << "no request left: no evidence";
  opt.lagrange_rate = 0;
  stats.requests = 100;
  EXPECT_DOUBLE_EQ(next_lagrange(opt, 0.99, 3.9, stats), 3.9) << "fixed weights";
  EnvInfo info;
  info.slo_penalty = 1;
  info.waiting_penalty = 2;
  info.cost_penalty = 4;
  info.churn_penalty = 8;
  EXPECT_DOUBLE_EQ(lagrangian_reward(2.0, info), -(2.0 * 3 + 12));
}

}  // namespace
}  // namespace meshsim::rl
