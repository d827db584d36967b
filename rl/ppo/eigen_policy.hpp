#pragma once

// No LibTorch here: the rollout's forward passes on a plain copy of the policy's weights.

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine/rng.hpp"

namespace meshsim::rl {

// Row-major, like the observation and action buffers it reads and writes.
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One linear layer of an MLP: out = in x weight^T + bias (weight is [out, in], as in LibTorch).
struct DenseLayer {
  RowMatrix weight;
  Eigen::RowVectorXf bias;
};

// An ActorCritic's actor and critic (tanh between layers) and log-std, copied after each
// PPO update (ActorCriticImpl::to_eigen). The rollout's batched forward passes on small
// MLPs cost a few microseconds here against tens of LibTorch operator dispatches; the
// outputs agree with LibTorch's to float rounding (tests/rl/ppo_parts_test.cpp), and
// train_bench measures both.
class EigenPolicy {
 public:
  EigenPolicy() = default;
  // `choices`: discrete choices per action entry; 0: continuous (Gaussian, `log_std`).
  EigenPolicy(std::vector<DenseLayer> actor, std::vector<DenseLayer> critic, std::vector<float> log_std,
              std::int64_t choices);

  // `obs`: `batch` observations, row after row. Continuous: the Gaussians' means [B, A];
  // discrete: the logits [B, A x choices].
  const RowMatrix& actor_output(std::span<const float> obs, std::size_t batch);
  // The critic's values [B, 1].
  const RowMatrix& value(std::span<const float> obs, std::size_t batch);

  // Draws an action for each of `batch` rows of actor output `out` (layout as above, from
  // this policy or from LibTorch's) into `actions` [B, A], and their log-probabilities,
  // summed over the entries, into `log_prob` [B]: what ActorCriticImpl::log_prob_entropy
  // gives for the same actions. Row i draws from rngs[i] (one generator per environment,
  // so a row's draws do not depend on which rows share its batch). Discrete choices are
  // drawn by inverse CDF.
  void sample(std::span<const float> out, std::size_t batch, std::span<engine::Rng> rngs, std::vector<float>& actions,
              std::vector<float>& log_prob) const;

 private:
  const RowMatrix& forward(const std::vector<DenseLayer>& net, std::span<const float> obs, std::size_t batch,
                           RowMatrix& result);

  std::vector<DenseLayer> actor_, critic_;
  std::vector<float> log_std_;
  std::int64_t choices_ = 0;
  RowMatrix hidden_[2], actor_out_, value_out_;  // reused between calls
};

}  // namespace meshsim::rl
