#include "rl/ppo/ppo_loss.hpp"

#include <cmath>

namespace meshsim::rl {

PpoLoss ppo_loss(const configs::PpoSpec& options, const torch::Tensor& new_log_prob, const torch::Tensor& old_log_prob,
                 const torch::Tensor& advantages, const torch::Tensor& new_value, const torch::Tensor& old_value,
                 const torch::Tensor& returns, const torch::Tensor& entropy, double minibatch_size) {
  PpoLoss loss;
  const torch::Tensor log_ratio = new_log_prob - old_log_prob;
  const torch::Tensor ratio = log_ratio.exp();
  {
    const torch::NoGradGuard no_grad;
    loss.approx_kl = ((ratio - 1) - log_ratio).sum().item<double>() / minibatch_size;
    loss.clip_fraction = ((ratio - 1.0).abs() > options.clip_coef).sum().item<double>() / minibatch_size;
  }
  const double c = options.clip_coef;
  loss.policy = torch::max(-advantages * ratio, -advantages * torch::clamp(ratio, 1.0 - c, 1.0 + c)).sum() / minibatch_size;
  const torch::Tensor unclipped = (new_value - returns).pow(2);
  if (options.clip_value_loss) {
    const torch::Tensor clipped = old_value + torch::clamp(new_value - old_value, -c, c);
    loss.value = 0.5 * torch::max(unclipped, (clipped - returns).pow(2)).sum() / minibatch_size;
  } else {
    loss.value = 0.5 * unclipped.sum() / minibatch_size;
  }
  loss.entropy = entropy.sum() / minibatch_size;
  loss.total = loss.policy - options.entropy_coef * loss.entropy + options.value_coef * loss.value;
  return loss;
}

torch::Tensor normalize_advantages(const torch::Tensor& advantages, double minibatch_size, const SumOverRanks& sum) {
  if (minibatch_size < 2) return advantages;
  // Two passes (the mean, then squares about it), in double: no cancellation.
  const torch::Tensor a = advantages.to(torch::kDouble);
  double total = a.sum().item<double>();
  sum(std::span(&total, 1));
  const double mean = total / minibatch_size;
  double squares = (a - mean).pow(2).sum().item<double>();
  sum(std::span(&squares, 1));
  const double std = std::sqrt(squares / (minibatch_size - 1));
  return ((a - mean) / (std + 1e-8)).to(advantages.scalar_type());
}

}  // namespace meshsim::rl
