#pragma once

// LibTorch: include only from rl/ translation units.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "rl/ppo/eigen_policy.hpp"
#include "rl/ppo/policy_shape.hpp"

namespace meshsim::rl {

// What the policy makes of a batch of states and the actions taken in them.
struct PolicyEval {
  torch::Tensor log_prob;  // [B], summed over action entries
  torch::Tensor entropy;   // [B], summed over action entries
  torch::Tensor value;     // [B]
};

// Separate actor and critic MLPs (tanh hidden layers), orthogonal initialisation (gain
// sqrt 2 on hidden layers, 0.01 on the actor's output so first actions are near zero, 1
// on the critic's), zero biases. Continuous: a Gaussian per entry with the actor's output
// as mean and a state-independent learned log standard deviation (starting at 0).
// Discrete: a categorical per entry over `choices` logits.
class ActorCriticImpl : public torch::nn::Module {
 public:
  explicit ActorCriticImpl(const PolicyShape& shape);
  const PolicyShape& shape() const { return shape_; }
  bool discrete() const { return shape_.choices > 0; }

  torch::Tensor value(const torch::Tensor& obs);  // [B]
  // Continuous: means [B, A]; discrete: logits [B, A, choices].
  torch::Tensor actor_output(const torch::Tensor& obs);
  torch::Tensor log_std() const { return log_std_; }
  // Log-probability and entropy of `actions` ([B, A]; discrete: choice indices as floats)
  // under the distribution that actor_output `out` describes.
  std::pair<torch::Tensor, torch::Tensor> log_prob_entropy(const torch::Tensor& out, const torch::Tensor& actions);
  PolicyEval evaluate(const torch::Tensor& obs, const torch::Tensor& actions);
  // A copy of the weights for the rollout's forward passes (rl/ppo/eigen_policy.hpp).
  EigenPolicy to_eigen() const;
  // Discrete: raises `choice`'s logit of every entry by `logit` (the output layer's
  // bias), so an untrained policy mostly takes it and deterministically always does.
  void favour_choice(std::int64_t choice, float logit);

 private:
  PolicyShape shape_;
  torch::nn::Sequential actor_{nullptr}, critic_{nullptr};
  torch::Tensor log_std_;
};
TORCH_MODULE(ActorCritic);

}  // namespace meshsim::rl
