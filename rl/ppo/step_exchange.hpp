#pragma once

// What one rank of a data-parallel training sees of every environment's step, without
// LibTorch: each step's observations, rewards and ended flags of all ranks' environments
// in environment order, gathered in one collective (the latency between machines is paid
// once per step), and the normalisers every rank keeps alike over them, so that the
// statistics are what one process stepping every environment would have.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "rl/env/vector_env.hpp"
#include "rl/ppo/normalizers.hpp"
#include "rl/ppo/rank_group.hpp"

namespace meshsim::rl {

class StepExchange {
 public:
  // This rank steps `envs`, environments [first, first + envs.num_envs()) of all.
  StepExchange(RankGroup& group, VectorEnv& envs, std::size_t first, bool normalize_observations,
               double observation_clip, double gamma, double reward_clip);

  // Gathers every environment's current observations with this rank's `rewards` and
  // `ended` flags of the step that led to them (empty: none yet).
  void gather(std::span<const double> rewards, std::span<const std::uint8_t> ended);
  // This rank's current observations, normalised when asked (the statistics first
  // updated with every environment's, from gather(), when `update`).
  std::span<const float> observe(bool update);
  // This rank's slice of every environment's rewards (from gather()) scaled by the
  // reward scaler, which every rank keeps the same.
  void scale_rewards(std::span<double> rewards);
  // `raw` (one observation) as the policy sees it.
  void normalize(std::span<const float> raw, std::span<float> out) const;

  ObservationNormalizer& observation_normalizer() { return obs_norm_; }
  const ObservationNormalizer& observation_normalizer() const { return obs_norm_; }
  RewardScaler& reward_scaler() { return reward_scaler_; }
  const RewardScaler& reward_scaler() const { return reward_scaler_; }

 private:
  RankGroup& group_;
  VectorEnv& envs_;
  std::size_t n_ = 0, n_all_ = 0, first_ = 0, obs_size_ = 0;
  bool normalize_observations_ = true;
  ObservationNormalizer obs_norm_;
  RewardScaler reward_scaler_;  // over all ranks' environments
  std::vector<float> obs_;      // this rank's, as the policy sees them
  std::vector<float> obs_all_;
  std::vector<double> rewards_all_;
  std::vector<std::uint8_t> ended_all_;
  std::vector<double> step_mine_, step_all_;  // the packed rows exchanged
};

}  // namespace meshsim::rl
