#pragma once

// LibTorch: include only from rl/ translation units.
#include <torch/torch.h>

#include <functional>
#include <span>

#include "configs/rl_config.hpp"

namespace meshsim::rl {

struct PpoLoss {
  torch::Tensor total;           // what the optimiser minimises
  torch::Tensor policy, value, entropy;
  double approx_kl = 0.0;        // (ratio - 1) - log ratio (Schulman's estimator)
  double clip_fraction = 0.0;    // share of ratios outside [1 - clip, 1 + clip]
};

// PPO's loss on one rank's share of a minibatch of `minibatch_size` rows (over all ranks;
// in one process the share is the whole minibatch):
//   ratio = exp(new_log_prob - old_log_prob);
//   policy = sum(max(-A ratio, -A clamp(ratio, 1 - c, 1 + c))) / minibatch_size;
//   value  = 0.5 sum(max((V - R)^2, (V_old + clamp(V - V_old, -c, c) - R)^2)) / minibatch_size
//            when clip_value_loss, else 0.5 sum((V - R)^2) / minibatch_size;
//   total  = policy - entropy_coef sum(entropy) / minibatch_size + value_coef value.
// Every term (and approx_kl, clip_fraction) is a share of the minibatch's mean, so the
// ranks' losses and gradients sum to those of the whole minibatch. `advantages` come
// normalised already (normalize_advantages).
PpoLoss ppo_loss(const configs::PpoSpec& options, const torch::Tensor& new_log_prob, const torch::Tensor& old_log_prob,
                 const torch::Tensor& advantages, const torch::Tensor& new_value, const torch::Tensor& old_value,
                 const torch::Tensor& returns, const torch::Tensor& entropy, double minibatch_size);

// Every rank's `mine` (of the same size) concatenated in rank order (`mine` in one process).
using GatherOverRanks = std::function<std::vector<double>(std::span<const double> mine)>;

// CleanRL's norm_adv over the whole minibatch: (A - mean) / (std + 1e-8) with the mean and
// unbiased std of all ranks' shares, of which `advantages` is this rank's. A minibatch of
// one entry is left as it is (its std is undefined). The ranks exchange each share's count,
// mean and sum of squared deviations once, and merge them in rank order (Chan et al.), so
// every rank gets the same bits, without the cancellation of a sum of squares.
torch::Tensor normalize_advantages(const torch::Tensor& advantages, const GatherOverRanks& gather);

}  // namespace meshsim::rl
