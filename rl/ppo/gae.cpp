#include "rl/ppo/gae.hpp"

#include "sim/engine/check.hpp"

namespace meshsim::rl {

void compute_gae(std::size_t steps, std::size_t envs, std::span<const float> values, std::span<const float> rewards,
                 std::span<const float> next_values, std::span<const std::uint8_t> ended, double gamma,
                 double lambda, std::span<float> advantages, std::span<float> returns) {
  const std::size_t n = steps * envs;
  MESHSIM_CHECK(values.size() == n && rewards.size() == n && next_values.size() == n && ended.size() == n &&
                    advantages.size() == n && returns.size() == n,
                "compute_gae: every array needs steps x envs entries");
  for (std::size_t i = 0; i < envs; ++i) {
    double carried = 0.0;  // A_{t+1}
    for (std::size_t t = steps; t-- > 0;) {
      const std::size_t k = t * envs + i;
      const double delta = rewards[k] + gamma * next_values[k] - values[k];
      const double advantage = delta + (ended[k] ? 0.0 : gamma * lambda * carried);
      advantages[k] = static_cast<float>(advantage);
      returns[k] = static_cast<float>(advantage + values[k]);
      carried = advantage;
    }
  }
}

}  // namespace meshsim::rl
