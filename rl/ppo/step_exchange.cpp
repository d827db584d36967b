#include "rl/ppo/step_exchange.hpp"

#include <algorithm>

namespace meshsim::rl {

StepExchange::StepExchange(RankGroup& group, VectorEnv& envs, std::size_t first, bool normalize_observations,
                           double observation_clip, double gamma, double reward_clip)
    : group_(group),
      envs_(envs),
      n_(envs.num_envs()),
      n_all_(n_ * static_cast<std::size_t>(group.size())),
      first_(first),
      obs_size_(envs.observation_size()),
      normalize_observations_(normalize_observations),
      obs_norm_(obs_size_, observation_clip),
      reward_scaler_(n_all_, gamma, reward_clip),
      obs_(n_ * obs_size_),
      obs_all_(n_all_ * obs_size_),
      rewards_all_(n_all_),
      ended_all_(n_all_),
      step_mine_(n_ * (obs_size_ + 2)),
      step_all_(n_all_ * (obs_size_ + 2)) {}

void StepExchange::gather(std::span<const double> rewards, std::span<const std::uint8_t> ended) {
  const auto raw = envs_.observations();
  const std::size_t row = obs_size_ + 2;  // observation, reward, ended
  for (std::size_t i = 0; i < n_; ++i) {
    std::copy_n(raw.begin() + static_cast<std::ptrdiff_t>(i * obs_size_), obs_size_,
                step_mine_.begin() + static_cast<std::ptrdiff_t>(i * row));
    step_mine_[i * row + obs_size_] = rewards.empty() ? 0.0 : rewards[i];
    step_mine_[i * row + obs_size_ + 1] = ended.empty() ? 0.0 : ended[i];
  }
  group_.all_gather(std::span<const double>(step_mine_), std::span(step_all_));
  for (std::size_t k = 0; k < n_all_; ++k) {
    std::copy_n(step_all_.begin() + static_cast<std::ptrdiff_t>(k * row), obs_size_,
                obs_all_.begin() + static_cast<std::ptrdiff_t>(k * obs_size_));  // floats, exactly back
    rewards_all_[k] = step_all_[k * row + obs_size_];
    ended_all_[k] = step_all_[k * row + obs_size_ + 1] != 0.0;
  }
}

std::span<const float> StepExchange::observe(bool update) {
  const auto raw = envs_.observations();
  if (!normalize_observations_) {
    std::copy(raw.begin(), raw.end(), obs_.begin());
    return obs_;
  }
  if (update) obs_norm_.update(obs_all_);
  obs_norm_.normalize(raw, obs_);
  return obs_;
}

void StepExchange::scale_rewards(std::span<double> rewards) {
  std::vector<double> all(rewards_all_);
  reward_scaler_.scale(all, ended_all_);
  std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(first_), n_, rewards.begin());
}

void StepExchange::normalize(std::span<const float> raw, std::span<float> out) const {
  if (normalize_observations_) {
    obs_norm_.normalize(raw, out);
  } else {
    std::copy(raw.begin(), raw.end(), out.begin());
  }
}

}  // namespace meshsim::rl
