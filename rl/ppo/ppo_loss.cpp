#include "rl/ppo/ppo_loss.hpp"

namespace meshsim::rl {

PpoLoss ppo_loss(const configs::PpoSpec& options, const torch::Tensor& new_log_prob, const torch::Tensor& old_log_prob,
                 torch::Tensor advantages, const torch::Tensor& new_value, const torch::Tensor& old_value,
                 const torch::Tensor& returns, const torch::Tensor& entropy) {
  PpoLoss loss;
  const torch::Tensor log_ratio = new_log_prob - old_log_prob;
  const torch::Tensor ratio = log_ratio.exp();
  {
    const torch::NoGradGuard no_grad;
    loss.approx_kl = ((ratio - 1) - log_ratio).mean().item<double>();
    loss.clip_fraction = ((ratio - 1.0).abs() > options.clip_coef).to(torch::kFloat).mean().item<double>();
  }
  if (options.normalize_advantages && advantages.numel() > 1) {
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8);
  }
  const double c = options.clip_coef;
  loss.policy = torch::max(-advantages * ratio, -advantages * torch::clamp(ratio, 1.0 - c, 1.0 + c)).mean();
  const torch::Tensor unclipped = (new_value - returns).pow(2);
  if (options.clip_value_loss) {
    const torch::Tensor clipped = old_value + torch::clamp(new_value - old_value, -c, c);
    loss.value = 0.5 * torch::max(unclipped, (clipped - returns).pow(2)).mean();
  } else {
    loss.value = 0.5 * unclipped.mean();
  }
  loss.entropy = entropy.mean();
  loss.total = loss.policy - options.entropy_coef * loss.entropy + options.value_coef * loss.value;
  return loss;
}

}  // namespace meshsim::rl
