#include "rl/ppo/ppo_loss.hpp"

#include <cmath>
#include <vector>

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

torch::Tensor normalize_advantages(const torch::Tensor& advantages, const GatherOverRanks& gather) {
  const torch::Tensor a = advantages.to(torch::kDouble);
  const double count = static_cast<double>(a.numel());
  const double mean = count > 0 ? a.mean().item<double>() : 0.0;
  const double squares = count > 0 ? (a - mean).pow(2).sum().item<double>() : 0.0;
  const std::vector<double> shares = gather(std::vector<double>{count, mean, squares});
  double total = 0.0, merged_mean = 0.0, merged_squares = 0.0;
  for (std::size_t r = 0; r + 2 < shares.size(); r += 3) {
    const double n = shares[r];
    if (n == 0) continue;
    const double delta = shares[r + 1] - merged_mean;
    merged_squares += shares[r + 2] + delta * delta * total * n / (total + n);
    merged_mean += delta * n / (total + n);
    total += n;
  }
  if (total < 2) return advantages;
  const double std = std::sqrt(merged_squares / (total - 1));
  return ((a - merged_mean) / (std + 1e-8)).to(advantages.scalar_type());
}

}  // namespace meshsim::rl
