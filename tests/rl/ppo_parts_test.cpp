// PPO's pieces against values worked out by hand (issue 10: GAE with a truncation, the
// clipped losses, log-probabilities and entropies of both heads) and the normalisers
// against their definitions.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <span>
#include <string>
#include <numbers>

#include "rl/ppo/gae.hpp"
#include "rl/ppo/normalizers.hpp"
#include "rl/ppo/policy.hpp"
#include "rl/ppo/ppo_loss.hpp"
#include "sim/engine/rng.hpp"

namespace meshsim::rl {
namespace {

TEST(GaeTest, BootstrapsAtATruncationAndCutsTheRecursionAtEpisodeEnds) {
  // One environment, 4 steps, gamma 0.5, lambda 0.5. Step 1 truncates (bootstrap from its
  // last observation's value 10), step 3 is the rollout's end (next state's value 4).
  const std::vector<float> values{1, 2, 3, 4}, rewards{1, 1, 1, 1}, next_values{2, 10, 4, 4};
  const std::vector<std::uint8_t> ended{0, 1, 0, 0};
  std::vector<float> adv(4), ret(4);
  compute_gae(4, 1, values, rewards, next_values, ended, 0.5, 0.5, adv, ret);
  // deltas: 1 + 1 - 1 = 1; 1 + 5 - 2 = 4; 1 + 2 - 3 = 0; 1 + 2 - 4 = -1.
  // A3 = -1; A2 = 0 + 0.25 * -1 = -0.25; A1 = 4 (episode ended: nothing carried);
  // A0 = 1 + 0.25 * 4 = 2.
  EXPECT_FLOAT_EQ(adv[3], -1.0f);
  EXPECT_FLOAT_EQ(adv[2], -0.25f);
  EXPECT_FLOAT_EQ(adv[1], 4.0f);
  EXPECT_FLOAT_EQ(adv[0], 2.0f);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(ret[i], adv[i] + values[i]);
}

TEST(GaeTest, EnvironmentsAreIndependentColumns) {
  // Two environments interleaved [t * 2 + i]: env 1 is env 0's arrays shifted by one.
  const std::vector<float> values{1, 0, 2, 1}, rewards{1, 0, 0, 1}, next_values{2, 1, 3, 2};
  const std::vector<std::uint8_t> ended{0, 0, 0, 0};
  std::vector<float> adv(4), ret(4);
  compute_gae(2, 2, values, rewards, next_values, ended, 1.0, 1.0, adv, ret);
  // env 0: deltas 1 + 2 - 1 = 2, 0 + 3 - 2 = 1 -> A = 3, 1. env 1: 0 + 1 - 0 = 1, 1 + 2 - 1 = 2 -> 3, 2.
  EXPECT_FLOAT_EQ(adv[0], 3.0f);
  EXPECT_FLOAT_EQ(adv[2], 1.0f);
  EXPECT_FLOAT_EQ(adv[1], 3.0f);
  EXPECT_FLOAT_EQ(adv[3], 2.0f);
}

torch::Tensor t(std::vector<float> values) { return torch::tensor(values); }

TEST(PpoLossTest, ClippedSurrogateAndValueLossByHand) {
  configs::PpoSpec opt;
  opt.clip_coef = 0.2;
  opt.normalize_advantages = false;
  opt.entropy_coef = 0.1;
  opt.value_coef = 0.5;
  // ratios e^0.5 = 1.6487 (A = +1: clipped to 1.2), e^-0.5 = 0.6065 (A = +1: unclipped,
  // the minimum), e^0.1 = 1.1052 (A = -2: inside the range).
  const auto new_lp = t({0.5f, -0.5f, 0.1f}), old_lp = t({0.f, 0.f, 0.f});
  const auto adv = t({1.f, 1.f, -2.f});
  const auto new_v = t({1.0f, 0.0f, 2.0f}), old_v = t({0.5f, 0.1f, 2.0f}), ret = t({2.0f, 0.0f, 1.0f});
  const auto entropy = t({1.0f, 2.0f, 3.0f});
  const PpoLoss loss = ppo_loss(opt, new_lp, old_lp, adv, new_v, old_v, ret, entropy, 3.0);
  const double r0 = 1.2, r1 = std::exp(-0.5), r2 = std::exp(0.1);
  EXPECT_NEAR(loss.policy.item<double>(), (-r0 - r1 + 2.0 * r2) / 3.0, 1e-6);
  // value: env 0 unclipped (1-2)^2 = 1, clipped 0.5 + 0.2 = 0.7 -> (0.7-2)^2 = 1.69 (max);
  // env 1: 0 vs (0.1 - 0.1 - 0)^2 = 0 -> 0; env 2: 1 vs 1 -> 1. 0.5 * mean = 0.5 * 2.69 / 3.
  EXPECT_NEAR(loss.value.item<double>(), 0.5 * 2.69 / 3.0, 1e-6);
  EXPECT_NEAR(loss.entropy.item<double>(), 2.0, 1e-6);
  EXPECT_NEAR(loss.total.item<double>(),
              loss.policy.item<double>() - 0.1 * 2.0 + 0.5 * loss.value.item<double>(), 1e-6);
  EXPECT_NEAR(loss.clip_fraction, 2.0 / 3.0, 1e-6);  // 1.65 and 0.61 are outside [0.8, 1.2]
  const double kl = ((std::exp(0.5) - 1 - 0.5) + (std::exp(-0.5) - 1 + 0.5) + (std::exp(0.1) - 1 - 0.1)) / 3.0;
  EXPECT_NEAR(loss.approx_kl, kl, 1e-6);
}

TEST(PpoLossTest, TheValueLossCanBeUnclipped) {
  configs::PpoSpec opt;
  opt.clip_value_loss = false;
  const auto zero = t({0.f, 0.f});
  const PpoLoss loss = ppo_loss(opt, zero, zero, t({1.f, -1.f}), t({1.f, 3.f}), t({0.f, 0.f}), t({0.f, 0.f}), zero, 2.0);
  EXPECT_NEAR(loss.policy.item<double>(), 0.0, 1e-6);  // ratios 1: -mean(A)
  EXPECT_NEAR(loss.value.item<double>(), 0.5 * (1 + 9) / 2.0, 1e-6);
}

TEST(PpoLossTest, SharesOfAMinibatchSumToTheWholeMinibatchsLossAndGradient) {
  // What data-parallel PPO relies on: each rank's share over the whole minibatch's size.
  configs::PpoSpec opt;
  torch::manual_seed(3);
  const std::int64_t rows = 10, split = 4;
  const torch::Tensor new_lp = torch::randn({rows}, torch::requires_grad()), old_lp = torch::randn({rows});
  const torch::Tensor adv = torch::randn({rows}), new_v = torch::randn({rows}, torch::requires_grad());
  const torch::Tensor old_v = torch::randn({rows}), ret = torch::randn({rows}), entropy = torch::rand({rows});
  const auto loss_of = [&](std::int64_t begin, std::int64_t end) {
    const auto s = [&](const torch::Tensor& x) { return x.slice(0, begin, end); };
    return ppo_loss(opt, s(new_lp), s(old_lp), s(adv), s(new_v), s(old_v), s(ret), s(entropy), double(rows));
  };
  const PpoLoss whole = loss_of(0, rows);
  whole.total.backward();
  const torch::Tensor whole_grad = new_lp.grad().clone(), whole_value_grad = new_v.grad().clone();
  new_lp.mutable_grad().zero_();
  new_v.mutable_grad().zero_();
  const PpoLoss a = loss_of(0, split), b = loss_of(split, rows);
  (a.total + b.total).backward();
  EXPECT_NEAR(a.policy.item<double>() + b.policy.item<double>(), whole.policy.item<double>(), 1e-6);
  EXPECT_NEAR(a.value.item<double>() + b.value.item<double>(), whole.value.item<double>(), 1e-6);
  EXPECT_NEAR(a.entropy.item<double>() + b.entropy.item<double>(), whole.entropy.item<double>(), 1e-6);
  EXPECT_NEAR(a.approx_kl + b.approx_kl, whole.approx_kl, 1e-6);
  EXPECT_NEAR(a.clip_fraction + b.clip_fraction, whole.clip_fraction, 1e-9);
  EXPECT_TRUE(torch::allclose(new_lp.grad(), whole_grad, 1e-5, 1e-7));
  EXPECT_TRUE(torch::allclose(new_v.grad(), whole_value_grad, 1e-5, 1e-7));
}

TEST(PpoLossTest, AdvantagesAreNormalisedOverTheMinibatch) {
  const GatherOverRanks alone = [](std::span<const double> mine) { return std::vector<double>(mine.begin(), mine.end()); };
  const torch::Tensor normalised = normalize_advantages(t({10.f, 30.f}), alone);
  // Mean 20, unbiased std sqrt(200): -0.7071, 0.7071.
  EXPECT_NEAR(normalised[0].item<double>(), -std::sqrt(0.5), 1e-6);
  EXPECT_NEAR(normalised[1].item<double>(), std::sqrt(0.5), 1e-6);
  // A single entry is left as it is (its std is undefined).
  EXPECT_NEAR(normalize_advantages(t({5.f}), alone)[0].item<double>(), 5.0, 1e-6);
  // Large offsets do not cancel: 1e6 + {10, 30} normalises as {10, 30} does.
  const torch::Tensor offset = normalize_advantages(t({1e6f + 10.f, 1e6f + 30.f}), alone);
  EXPECT_NEAR(offset[1].item<double>(), std::sqrt(0.5), 1e-6);
}

TEST(PolicyTest, GaussianLogProbAndEntropyByHand) {
  ActorCritic policy(PolicyShape{3, 2, 0, {8}});
  torch::NoGradGuard no_grad;
  policy->log_std().copy_(t({0.0f, std::log(2.0f)}));
  const auto mean = torch::tensor({{0.0f, 1.0f}});
  const auto action = torch::tensor({{1.0f, 2.0f}});
  const auto [log_prob, entropy] = policy->log_prob_entropy(mean, action);
  const double c = 0.5 * std::log(2.0 * std::numbers::pi);
  // N(0, 1) at 1: -0.5 - c; N(1, 2) at 2: -0.5 * (1/2)^2 - log 2 - c.
  EXPECT_NEAR(log_prob.item<double>(), (-0.5 - c) + (-0.125 - std::log(2.0) - c), 1e-5);
  EXPECT_NEAR(entropy.item<double>(), (0.5 + c) + (0.5 + c + std::log(2.0)), 1e-5);
}

TEST(PolicyTest, CategoricalLogProbAndEntropyByHand) {
  ActorCritic policy(PolicyShape{3, 2, 3, {8}});
  // Entry 0: logits ln(1), ln(2), ln(1) -> p = 1/4, 1/2, 1/4; entry 1: uniform.
  const auto logits = torch::log(torch::tensor({{{1.0f, 2.0f, 1.0f}, {1.0f, 1.0f, 1.0f}}}));
  const auto action = torch::tensor({{1.0f, 2.0f}});
  const auto [log_prob, entropy] = policy->log_prob_entropy(logits, action);
  EXPECT_NEAR(log_prob.item<double>(), std::log(0.5) + std::log(1.0 / 3.0), 1e-5);
  const double h0 = -(0.25 * std::log(0.25) * 2 + 0.5 * std::log(0.5));
  EXPECT_NEAR(entropy.item<double>(), h0 + std::log(3.0), 1e-5);
}

TEST(PolicyTest, OrthogonalInitialisationAndShapes) {
  torch::manual_seed(3);
  ActorCritic policy(PolicyShape{5, 2, 0, {16, 16}});
  const auto obs = torch::randn({7, 5});
  EXPECT_EQ(policy->actor_output(obs).sizes(), (std::vector<std::int64_t>{7, 2}));
  EXPECT_EQ(policy->value(obs).sizes(), (std::vector<std::int64_t>{7}));
  // The hidden layer's 16x16 weight is orthogonal times sqrt 2: W W^T = 2 I.
  const auto params = policy->named_parameters();
  const auto w = params["actor.2.weight"];
  EXPECT_TRUE(torch::allclose(w.matmul(w.t()), 2.0 * torch::eye(16), 1e-4, 1e-4));
  // The actor's output layer starts small (gain 0.01), so first actions are near 0.
  EXPECT_LT(policy->actor_output(obs).abs().max().item<float>(), 0.1f);
  ActorCritic discrete(PolicyShape{5, 2, 5, {16}});
  EXPECT_EQ(discrete->actor_output(obs).sizes(), (std::vector<std::int64_t>{7, 2, 5}));
}

// The rollout's Eigen copy of the weights against LibTorch on the same inputs: both heads'
// outputs and the critic agree to float rounding, and the log-probabilities of the actions
// the copy samples are what LibTorch's distributions give them.
void expect_eigen_copy_matches_libtorch(const PolicyShape& shape, std::uint64_t seed) {
  SCOPED_TRACE("choices " + std::to_string(shape.choices));
  torch::manual_seed(seed);
  ActorCritic policy(shape);
  torch::NoGradGuard no_grad;
  for (auto& p : policy->parameters()) p.add_(0.3 * torch::randn_like(p));  // not the initial weights
  const std::int64_t batch = 9;
  const torch::Tensor obs = 2.0 * torch::randn({batch, shape.observations});
  const std::span<const float> obs_span(obs.data_ptr<float>(), static_cast<std::size_t>(obs.numel()));
  EigenPolicy fast = policy->to_eigen();

  const torch::Tensor out = policy->actor_output(obs).contiguous();
  const RowMatrix& fast_out = fast.actor_output(obs_span, static_cast<std::size_t>(batch));
  ASSERT_EQ(fast_out.size(), out.numel());
  for (std::int64_t k = 0; k < out.numel(); ++k) EXPECT_NEAR(fast_out.data()[k], out.data_ptr<float>()[k], 1e-5);
  const torch::Tensor value = policy->value(obs);
  const RowMatrix& fast_value = fast.value(obs_span, static_cast<std::size_t>(batch));
  for (std::int64_t i = 0; i < batch; ++i) EXPECT_NEAR(fast_value(i, 0), value[i].item<float>(), 1e-5);

  std::vector<engine::Rng> rngs;
  for (std::int64_t i = 0; i < batch; ++i) rngs.emplace_back(seed + static_cast<std::uint64_t>(i));
  std::vector<float> actions, log_prob;
  for (int draw = 0; draw < 20; ++draw) {
    fast.sample(std::span<const float>(out.data_ptr<float>(), static_cast<std::size_t>(out.numel())),
                static_cast<std::size_t>(batch), rngs, actions, log_prob);
    const torch::Tensor taken = torch::from_blob(actions.data(), {batch, shape.actions}).clone();
    const torch::Tensor expected = policy->log_prob_entropy(out, taken).first;
    for (std::int64_t i = 0; i < batch; ++i) EXPECT_NEAR(log_prob[static_cast<std::size_t>(i)], expected[i].item<float>(), 1e-4);
  }
}

TEST(PolicyTest, TheRolloutsEigenCopyMatchesLibTorch) {
  expect_eigen_copy_matches_libtorch(PolicyShape{6, 2, 0, {16, 16}}, 5);
  expect_eigen_copy_matches_libtorch(PolicyShape{6, 3, 5, {16}}, 6);
}

TEST(PolicyTest, DiscreteSamplesFollowTheSoftmax) {
  // One entry, logits ln 1, ln 2, ln 5: choices come up 1/8, 2/8, 5/8 of the time.
  EigenPolicy policy({}, {}, {0.0f}, 3);
  const std::vector<float> logits = {0.0f, std::log(2.0f), std::log(5.0f)};
  engine::Rng rng(11);
  std::vector<float> actions, log_prob;
  std::array<int, 3> counts{};
  const int draws = 40000;
  for (int d = 0; d < draws; ++d) {
    policy.sample(logits, 1, std::span(&rng, 1), actions, log_prob);
    ++counts[static_cast<std::size_t>(actions[0])];
  }
  EXPECT_NEAR(counts[0] / double(draws), 1.0 / 8, 0.01);
  EXPECT_NEAR(counts[1] / double(draws), 2.0 / 8, 0.01);
  EXPECT_NEAR(counts[2] / double(draws), 5.0 / 8, 0.01);
}

TEST(NormalizerTest, RunningStatisticsMatchTheWholeSample) {
  engine::Rng rng(9);
  RunningMeanStd stats(2);
  std::vector<double> all0, all1;
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<float> rows;
    const int size = 1 + batch % 7;
    for (int r = 0; r < size; ++r) {
      const float a = static_cast<float>(rng.normal() * 3 + 5), b = static_cast<float>(rng.uniform() * 100);
      rows.insert(rows.end(), {a, b});
      all0.push_back(a);
      all1.push_back(b);
    }
    stats.update(std::span<const float>(rows));
  }
  for (const auto& [f, all] : {std::pair{0, &all0}, std::pair{1, &all1}}) {
    double mean = 0, var = 0;
    for (double x : *all) mean += x;
    mean /= static_cast<double>(all->size());
    for (double x : *all) var += (x - mean) * (x - mean);
    var /= static_cast<double>(all->size());
    // The 1e-4 pseudo-count at (0, 1) shifts the figures by about 1e-4 / n.
    EXPECT_NEAR(stats.mean()[static_cast<std::size_t>(f)], mean, 1e-3 * std::abs(mean) + 1e-4);
    EXPECT_NEAR(stats.var()[static_cast<std::size_t>(f)], var, 1e-3 * var);
  }
  ObservationNormalizer norm(2, 1.5);
  norm.stats() = stats;
  std::vector<float> out(2);
  norm.normalize(std::vector<float>{static_cast<float>(stats.mean()[0]), 1e6f}, out);
  EXPECT_NEAR(out[0], 0.0f, 1e-5);
  EXPECT_FLOAT_EQ(out[1], 1.5f);  // clipped
}

TEST(NormalizerTest, RewardsAreDividedByTheReturnsStdAndReturnsRestartAtEpisodeEnds) {
  RewardScaler scaler(2, 0.5, 100.0);
  std::vector<double> r{2.0, 4.0};
  const std::vector<std::uint8_t> ended{1, 0};
  scaler.scale(r, ended);
  // Returns {2, 4}: variance with the pseudo-count ~ 1 (mean 3): rewards divided by ~1.
  EXPECT_NEAR(r[0], 2.0, 1e-3);
  EXPECT_NEAR(r[1], 4.0, 1e-3);
  EXPECT_DOUBLE_EQ(scaler.returns()[0], 0.0);  // env 0's episode ended
  EXPECT_DOUBLE_EQ(scaler.returns()[1], 4.0);
  std::vector<double> next{0.0, 1.0};
  scaler.scale(next, std::vector<std::uint8_t>{0, 0});
  EXPECT_DOUBLE_EQ(scaler.returns()[1], 0.5 * 4.0 + 1.0);
}

// Residual actions start at the baseline: the favoured choice takes most of the
// probability of every entry, and is the most likely for any observation.
TEST(PolicyTest, AFavouredChoiceIsTheUntrainedPolicysMode) {
  torch::manual_seed(3);
  ActorCritic policy(PolicyShape{6, 2, 5, {16, 16}});
  policy->favour_choice(2, 2.5f);
  const torch::Tensor obs = torch::randn({64, 6}) * 3;
  const torch::Tensor probs = torch::softmax(policy->actor_output(obs), -1);  // [64, 2, 5]
  EXPECT_TRUE((probs.argmax(-1) == 2).all().item<bool>());
  const double mean = probs.select(-1, 2).mean().item<double>();
  EXPECT_NEAR(mean, std::exp(2.5) / (std::exp(2.5) + 4), 0.02);
  EXPECT_THROW(policy->favour_choice(5, 1.0f), std::exception);
}

}  // namespace
}  // namespace meshsim::rl
