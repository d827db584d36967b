#include "rl/ppo/eigen_policy.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/engine/check.hpp"

namespace meshsim::rl {

EigenPolicy::EigenPolicy(std::vector<DenseLayer> actor, std::vector<DenseLayer> critic, std::vector<float> log_std,
                         std::int64_t choices)
    : actor_(std::move(actor)), critic_(std::move(critic)), log_std_(std::move(log_std)), choices_(choices) {}

const RowMatrix& EigenPolicy::forward(const std::vector<DenseLayer>& net, std::span<const float> obs,
                                      std::size_t batch, RowMatrix& result) {
  MESHSIM_CHECK(!net.empty() && obs.size() == batch * static_cast<std::size_t>(net.front().weight.cols()),
                "EigenPolicy: observations do not match the network's input");
  const auto rows = static_cast<Eigen::Index>(batch);
  const Eigen::Map<const RowMatrix> in(obs.data(), rows, net.front().weight.cols());
  for (std::size_t i = 0; i < net.size(); ++i) {
    const DenseLayer& layer = net[i];
    RowMatrix& out = i + 1 == net.size() ? result : hidden_[i % 2];
    if (i == 0) {
      out.noalias() = in * layer.weight.transpose();
    } else {
      out.noalias() = hidden_[(i - 1) % 2] * layer.weight.transpose();
    }
    out.rowwise() += layer.bias;
    if (i + 1 < net.size()) out = out.array().tanh();
  }
  return result;
}

const RowMatrix& EigenPolicy::actor_output(std::span<const float> obs, std::size_t batch) {
  return forward(actor_, obs, batch, actor_out_);
}

const RowMatrix& EigenPolicy::value(std::span<const float> obs, std::size_t batch) {
  return forward(critic_, obs, batch, value_out_);
}

void EigenPolicy::sample(std::span<const float> out, std::size_t batch, std::span<engine::Rng> rngs,
                         std::vector<float>& actions, std::vector<float>& log_prob) const {
  const std::size_t entries = log_std_.size();
  const std::size_t choices = static_cast<std::size_t>(choices_);
  MESHSIM_CHECK(out.size() == batch * entries * std::max<std::size_t>(choices, 1),
                "EigenPolicy::sample: actor output does not match the batch");
  MESHSIM_CHECK(rngs.size() == batch, "EigenPolicy::sample: one generator per row expected");
  actions.resize(batch * entries);
  log_prob.assign(batch, 0.0f);
  const double log_sqrt_2pi = 0.5 * std::log(2.0 * std::numbers::pi);
  std::vector<double> weights(choices);
  for (std::size_t i = 0; i < batch; ++i) {
    engine::Rng& rng = rngs[i];
    for (std::size_t a = 0; a < entries; ++a) {
      const std::size_t k = i * entries + a;
      if (choices == 0) {
        const double noise = rng.normal();
        actions[k] = static_cast<float>(out[k] + std::exp(log_std_[a]) * noise);
        log_prob[i] += static_cast<float>(-0.5 * noise * noise - log_std_[a] - log_sqrt_2pi);
        continue;
      }
      // Softmax of the entry's logits (shifted by their maximum), then the inverse CDF.
      const float* logits = out.data() + k * choices;
      const double top = *std::max_element(logits, logits + choices);
      double total = 0.0;
      for (std::size_t c = 0; c < choices; ++c) total += weights[c] = std::exp(logits[c] - top);
      const double u = rng.uniform() * total;
      double cumulative = 0.0;
      std::size_t choice = choices - 1;  // rounding leaves the cumulative just under the total
      for (std::size_t c = 0; c < choices; ++c) {
        cumulative += weights[c];
        if (u < cumulative) {
          choice = c;
          break;
        }
      }
      actions[k] = static_cast<float>(choice);
      log_prob[i] += static_cast<float>(logits[choice] - top - std::log(total));
    }
  }
}

}  // namespace meshsim::rl
