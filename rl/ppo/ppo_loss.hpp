#pragma once

// LibTorch: include only from rl/ translation units.
#include <torch/torch.h>

#include "configs/rl_config.hpp"

namespace meshsim::rl {

struct PpoLoss {
  torch::Tensor total;           // what the optimiser minimises
  torch::Tensor policy, value, entropy;
  double approx_kl = 0.0;        // (ratio - 1) - log ratio, mean (Schulman's estimator)
  double clip_fraction = 0.0;    // share of ratios outside [1 - clip, 1 + clip]
};

// PPO's loss on one minibatch:
//   ratio = exp(new_log_prob - old_log_prob); advantages normalised over the minibatch
//   (mean 0, unbiased std 1) when normalize_advantages and it has two or more entries;
//   policy = mean(max(-A ratio, -A clamp(ratio, 1 - c, 1 + c)));
//   value  = 0.5 mean(max((V - R)^2, (V_old + clamp(V - V_old, -c, c) - R)^2)) when
//            clip_value_loss, else 0.5 mean((V - R)^2);
//   total  = policy - entropy_coef mean(entropy) + value_coef value.
PpoLoss ppo_loss(const configs::PpoSpec& options, const torch::Tensor& new_log_prob, const torch::Tensor& old_log_prob,
                 torch::Tensor advantages, const torch::Tensor& new_value, const torch::Tensor& old_value,
                 const torch::Tensor& returns, const torch::Tensor& entropy);

}  // namespace meshsim::rl
