#pragma once

#include <cstdint>
#include <span>

namespace meshsim::rl {

// Generalised advantage estimation over a rollout of T steps of N environments, arrays
// indexed [t * N + i]:
//   values[t]       V(s_t), the critic's value of the state the action was taken in;
//   rewards[t]      the reward of step t;
//   next_values[t]  V of the state after step t: the next state's value, or, where step t
//                   ended an episode, the value of its last observation for a truncation
//                   (the episode did not end for the agent: bootstrap) and 0 for a
//                   termination;
//   ended[t]        step t ended an episode (terminated or truncated): the recursion does
//                   not carry advantages across it.
// delta_t = r_t + gamma V(s_{t+1}) - V(s_t); A_t = delta_t + gamma lambda (1 - ended_t)
// A_{t+1}; returns_t = A_t + V(s_t). The last step's A_{t+1} is 0 (its delta bootstraps).
void compute_gae(std::size_t steps, std::size_t envs, std::span<const float> values, std::span<const float> rewards,
                 std::span<const float> next_values, std::span<const std::uint8_t> ended, double gamma,
                 double lambda, std::span<float> advantages, std::span<float> returns);

}  // namespace meshsim::rl
