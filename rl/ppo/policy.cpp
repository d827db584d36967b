#include "rl/ppo/policy.hpp"

#include <cmath>
#include <numbers>

#include "sim/engine/check.hpp"

namespace meshsim::rl {
namespace {

torch::nn::Linear layer(std::int64_t in, std::int64_t out, double gain) {
  torch::nn::Linear linear(in, out);
  torch::nn::init::orthogonal_(linear->weight, gain);
  torch::nn::init::constant_(linear->bias, 0.0);
  return linear;
}

torch::nn::Sequential mlp(std::int64_t in, const std::vector<std::uint32_t>& hidden, std::int64_t out,
                          double out_gain) {
  torch::nn::Sequential net;
  std::int64_t width = in;
  for (const std::uint32_t h : hidden) {
    net->push_back(layer(width, h, std::sqrt(2.0)));
    net->push_back(torch::nn::Tanh());
    width = h;
  }
  net->push_back(layer(width, out, out_gain));
  return net;
}

std::vector<DenseLayer> dense_layers(const torch::nn::Sequential& net) {
  std::vector<DenseLayer> layers;
  for (const auto& module : net->children()) {
    const auto* linear = module->as<torch::nn::Linear>();
    if (linear == nullptr) continue;  // the tanh between layers
    const torch::Tensor w = linear->weight.detach().contiguous();
    const torch::Tensor b = linear->bias.detach().contiguous();
    DenseLayer layer;
    layer.weight = Eigen::Map<const RowMatrix>(w.data_ptr<float>(), w.size(0), w.size(1));
    layer.bias = Eigen::Map<const Eigen::RowVectorXf>(b.data_ptr<float>(), b.size(0));
    layers.push_back(std::move(layer));
  }
  return layers;
}

}  // namespace

ActorCriticImpl::ActorCriticImpl(const PolicyShape& shape) : shape_(shape) {
  const std::int64_t outputs = discrete() ? shape.actions * shape.choices : shape.actions;
  actor_ = register_module("actor", mlp(shape.observations, shape.hidden, outputs, 0.01));
  critic_ = register_module("critic", mlp(shape.observations, shape.hidden, 1, 1.0));
  log_std_ = register_parameter("log_std", torch::zeros({shape.actions}));
}

void ActorCriticImpl::favour_choice(std::int64_t choice, float logit) {
  MESHSIM_CHECK(discrete() && choice >= 0 && choice < shape_.choices, "favour_choice: not a choice of this policy");
  const torch::NoGradGuard no_grad;
  auto& last = actor_->ptr<torch::nn::LinearImpl>(actor_->size() - 1)->bias;
  for (std::int64_t a = 0; a < shape_.actions; ++a) last[a * shape_.choices + choice] += logit;
}

torch::Tensor ActorCriticImpl::value(const torch::Tensor& obs) { return critic_->forward(obs).squeeze(-1); }

torch::Tensor ActorCriticImpl::actor_output(const torch::Tensor& obs) {
  torch::Tensor out = actor_->forward(obs);
  return discrete() ? out.view({out.size(0), shape_.actions, shape_.choices}) : out;
}

std::pair<torch::Tensor, torch::Tensor> ActorCriticImpl::log_prob_entropy(const torch::Tensor& out,
                                                                          const torch::Tensor& actions) {
  if (discrete()) {
    const torch::Tensor log_p = torch::log_softmax(out, -1);                       // [B, A, C]
    const torch::Tensor taken = log_p.gather(-1, actions.to(torch::kLong).unsqueeze(-1)).squeeze(-1);  // [B, A]
    const torch::Tensor entropy = -(log_p.exp() * log_p).sum(-1);                  // [B, A]
    return {taken.sum(-1), entropy.sum(-1)};
  }
  const torch::Tensor log_std = log_std_.expand_as(out);
  const double log_sqrt_2pi = 0.5 * std::log(2.0 * std::numbers::pi);
  const torch::Tensor z = (actions - out) * torch::exp(-log_std);
  const torch::Tensor log_p = -0.5 * z * z - log_std - log_sqrt_2pi;
  const torch::Tensor entropy = 0.5 + log_sqrt_2pi + log_std;
  return {log_p.sum(-1), entropy.sum(-1)};
}

EigenPolicy ActorCriticImpl::to_eigen() const {
  const torch::Tensor log_std = log_std_.detach().contiguous();
  std::vector<float> log_std_copy(log_std.data_ptr<float>(), log_std.data_ptr<float>() + log_std.numel());
  return EigenPolicy(dense_layers(actor_), dense_layers(critic_), std::move(log_std_copy), shape_.choices);
}

PolicyEval ActorCriticImpl::evaluate(const torch::Tensor& obs, const torch::Tensor& actions) {
  auto [log_prob, entropy] = log_prob_entropy(actor_output(obs), actions);
  return {log_prob, entropy, value(obs)};
}

}  // namespace meshsim::rl
