#pragma once

// One rank's rollout, without LibTorch: what the policy saw and did at each of `steps`
// steps of its `n` environments (row t * n + i), what it got, where episodes ended, and
// the advantages GAE makes of them; and the rollout's totals, summed over the ranks into
// an iteration's figures.

#include <cstdint>
#include <span>
#include <vector>

#include "rl/env/scaling_env.hpp"
#include "rl/ppo/trainer.hpp"

namespace meshsim::rl {

struct RolloutBuffer {
  RolloutBuffer(std::size_t steps, std::size_t n, std::size_t obs_size, std::size_t act_size);

  // Where step t did not end an episode, V of the next state: step t + 1's value, or,
  // after the last step, `last` (the values of the observations the rollout ends on).
  // Ended steps keep the bootstrap the rollout set (a truncation's last value, or 0).
  void link_next_values(std::span<const float> last);
  // Advantages and returns by GAE (gae.hpp).
  void compute_advantages(double gamma, double lambda);
  // This buffer's rows of a minibatch drawn from all ranks' rows into `local`: global row
  // t * n_all + j is this rank's row t * n + j - first when environment j is this rank's.
  void local_rows(std::span<const std::int64_t> global, std::size_t n_all, std::size_t first,
                  std::vector<std::int64_t>& local) const;

  std::size_t steps = 0, n = 0;
  std::vector<float> obs, actions, log_prob, values, next_values, rewards, advantages, returns;
  std::vector<std::uint8_t> ended;
};

// Totals of one rank's rollout, then of all ranks' (summed field by field: every field a
// double, counts exact below 2^53).
struct RolloutTotals {
  double reward = 0, episodes = 0, episode_return = 0, requests_left = 0, slo_met = 0, instances = 0, actions = 0;

  // One environment's step: its raw reward, what it reported, and the raw return of its
  // episode when the step ended it.
  void add_step(double reward, const EnvInfo& info);
  void add_episode(double episode_return);
  // An iteration's rollout figures from all ranks' totals over `decisions` decisions.
  void fill(IterationStats& stats, double decisions) const;
};

}  // namespace meshsim::rl
