#pragma once

// PPO-Lagrangian (configs::PpoSpec's lagrange_* fields), without LibTorch: the reward the
// policy learns from, with the SLO terms weighed by a multiplier, and the multiplier's
// dual ascent after each rollout.

#include "configs/rl_config.hpp"
#include "rl/env/scaling_env.hpp"
#include "rl/ppo/trainer.hpp"

namespace meshsim::rl {

// The reward learned from one step: the SLO terms times `lagrange`, the others as they
// are (the reported reward stays the environment's).
inline double lagrangian_reward(double lagrange, const EnvInfo& info) {
  return -(lagrange * (info.slo_penalty + info.waiting_penalty) + info.cost_penalty + info.churn_penalty);
}

// Dual ascent on the multiplier: up when the rollout (`stats`) missed `slo_target`, down
// when it held it, in proportion to the misses allowed, clipped alike both ways (rollouts'
// attainment is noisy, and a lopsided clip would let the noise alone push it up). Every
// rank sees the same attainment, so the multiplier stays the same everywhere. Unchanged
// without Lagrangian training or without requests that left.
double next_lagrange(const configs::PpoSpec& opt, double slo_target, double lagrange, const IterationStats& stats);

}  // namespace meshsim::rl
