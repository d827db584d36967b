#include "rl/ppo/normalizers.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine/check.hpp"

namespace meshsim::rl {
namespace {

constexpr double kEpsilon = 1e-8;

}  // namespace

RunningMeanStd::RunningMeanStd(std::size_t size) : mean_(size, 0.0), var_(size, 1.0) {}

RunningMeanStd::RunningMeanStd(std::vector<double> mean, std::vector<double> var, double count)
    : mean_(std::move(mean)), var_(std::move(var)), count_(count) {
  MESHSIM_CHECK(mean_.size() == var_.size(), "RunningMeanStd: mean and var sizes differ");
}

void RunningMeanStd::update(std::span<const float> batch) { update_rows(batch); }
void RunningMeanStd::update(std::span<const double> batch) { update_rows(batch); }

template <typename T>
void RunningMeanStd::update_rows(std::span<const T> batch) {
  const std::size_t n = size();
  MESHSIM_CHECK(n > 0 && batch.size() % n == 0, "RunningMeanStd: batch is not whole rows");
  const std::size_t rows = batch.size() / n;
  if (rows == 0) return;
  const double b = static_cast<double>(rows);
  const double total = count_ + b;
  for (std::size_t f = 0; f < n; ++f) {
    double mean = 0.0;
    for (std::size_t r = 0; r < rows; ++r) mean += static_cast<double>(batch[r * n + f]);
    mean /= b;
    double m2 = 0.0;
    for (std::size_t r = 0; r < rows; ++r) {
      const double d = static_cast<double>(batch[r * n + f]) - mean;
      m2 += d * d;
    }
    const double delta = mean - mean_[f];
    mean_[f] += delta * b / total;
    var_[f] = (var_[f] * count_ + m2 + delta * delta * count_ * b / total) / total;
  }
  count_ = total;
}

void ObservationNormalizer::normalize(std::span<const float> in, std::span<float> out) const {
  const std::size_t n = stats_.size();
  MESHSIM_CHECK(in.size() == out.size() && in.size() % n == 0, "ObservationNormalizer: sizes differ");
  const auto& mean = stats_.mean();
  const auto& var = stats_.var();
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::size_t f = i % n;
    const double z = (static_cast<double>(in[i]) - mean[f]) / std::sqrt(var[f] + kEpsilon);
    out[i] = static_cast<float>(std::clamp(z, -clip_, clip_));
  }
}

void RewardScaler::scale(std::span<double> rewards, std::span<const std::uint8_t> ended) {
  MESHSIM_CHECK(rewards.size() == returns_.size() && ended.size() == returns_.size(),
                "RewardScaler: expected one reward per environment");
  for (std::size_t i = 0; i < rewards.size(); ++i) returns_[i] = returns_[i] * gamma_ + rewards[i];
  stats_.update(std::span<const double>(returns_));
  const double scale = std::sqrt(stats_.var()[0] + kEpsilon);
  for (std::size_t i = 0; i < rewards.size(); ++i) {
    rewards[i] = std::clamp(rewards[i] / scale, -clip_, clip_);
    if (ended[i]) returns_[i] = 0.0;
  }
}

void RewardScaler::restore(std::vector<double> returns, RunningMeanStd stats) {
  MESHSIM_CHECK(returns.size() == returns_.size() && stats.size() == 1, "RewardScaler: saved returns of " +
                                                                            std::to_string(returns.size()) +
                                                                            " environments, this run has " +
                                                                            std::to_string(returns_.size()));
  returns_ = std::move(returns);
  stats_ = std::move(stats);
}

}  // namespace meshsim::rl
