#include "rl/ppo/rollout_buffer.hpp"

#include "rl/ppo/gae.hpp"

namespace meshsim::rl {

RolloutBuffer::RolloutBuffer(std::size_t steps_, std::size_t n_, std::size_t obs_size, std::size_t act_size)
    : steps(steps_), n(n_) {
  const std::size_t rows = steps * n;
  obs.resize(rows * obs_size);
  actions.resize(rows * act_size);
  for (auto* v : {&log_prob, &values, &next_values, &rewards, &advantages, &returns}) v->resize(rows);
  ended.resize(rows);
}

void RolloutBuffer::link_next_values(std::span<const float> last) {
  for (std::size_t t = 0; t < steps; ++t) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k = t * n + i;
      if (!ended[k]) next_values[k] = t + 1 < steps ? values[k + n] : last[i];
    }
  }
}

void RolloutBuffer::compute_advantages(double gamma, double lambda) {
  compute_gae(steps, n, values, rewards, next_values, ended, gamma, lambda, advantages, returns);
}

void RolloutBuffer::local_rows(std::span<const std::int64_t> global, std::size_t n_all, std::size_t first,
                               std::vector<std::int64_t>& local) const {
  local.clear();
  for (const std::int64_t k : global) {
    const auto t = static_cast<std::size_t>(k) / n_all, j = static_cast<std::size_t>(k) % n_all;
    if (j >= first && j < first + n) local.push_back(static_cast<std::int64_t>(t * n + j - first));
  }
}

void RolloutTotals::add_step(double step_reward, const EnvInfo& info) {
  reward += step_reward;
  requests_left += static_cast<double>(info.left);
  slo_met += static_cast<double>(info.slo_met);
  instances += info.mean_instances;
  actions += static_cast<double>(info.scale_ups + info.scale_downs + info.migrations);
}

void RolloutTotals::add_episode(double episode_return_) {
  episode_return += episode_return_;
  ++episodes;
}

void RolloutTotals::fill(IterationStats& stats, double decisions) const {
  stats.mean_reward = reward / decisions;
  stats.episodes = static_cast<std::uint32_t>(episodes);
  stats.mean_episode_return = stats.episodes > 0 ? episode_return / stats.episodes : 0.0;
  stats.requests = static_cast<std::uint64_t>(requests_left);
  stats.slo_attainment = requests_left > 0 ? slo_met / requests_left : 1.0;
  stats.mean_instances = instances / decisions;
  stats.scaling_actions = actions / decisions;
}

}  // namespace meshsim::rl
