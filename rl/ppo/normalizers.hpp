#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace meshsim::rl {

// Running mean and variance of a vector of features, merged batch by batch (Chan et al.'s
// parallel update, as Gymnasium's RunningMeanStd), in double precision. Starts from a
// tiny pseudo-count so the first batch does not divide by zero.
class RunningMeanStd {
 public:
  explicit RunningMeanStd(std::size_t size = 0);
  // Saved statistics (a checkpoint's, checked by its reader).
  RunningMeanStd(std::vector<double> mean, std::vector<double> var, double count);
  std::size_t size() const { return mean_.size(); }
  // `batch` is rows of size() values.
  void update(std::span<const float> batch);
  void update(std::span<const double> batch);
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& var() const { return var_; }
  double count() const { return count_; }

 private:
  template <typename T>
  void update_rows(std::span<const T> batch);

  std::vector<double> mean_, var_;
  double count_ = 1e-4;
};

// Observation normalisation: (x - mean) / sqrt(var + 1e-8), clipped to [-clip, clip].
class ObservationNormalizer {
 public:
  ObservationNormalizer(std::size_t size, double clip) : stats_(size), clip_(clip) {}
  void update(std::span<const float> batch) { stats_.update(batch); }
  // Normalises rows of `in` into `out` (same size).
  void normalize(std::span<const float> in, std::span<float> out) const;
  RunningMeanStd& stats() { return stats_; }
  const RunningMeanStd& stats() const { return stats_; }

 private:
  RunningMeanStd stats_;
  double clip_;
};

// Reward scaling (Gymnasium's NormalizeReward): each environment keeps its discounted
// return G = gamma * G + r (restarted when its episode ends); rewards are divided by the
// running standard deviation of G, then clipped to [-clip, clip].
class RewardScaler {
 public:
  RewardScaler(std::size_t envs, double gamma, double clip) : returns_(envs, 0.0), stats_(1), gamma_(gamma), clip_(clip) {}
  // Scales one step's rewards (one per environment) in place, `ended` marking the
  // environments whose episode ended with this step.
  void scale(std::span<double> rewards, std::span<const std::uint8_t> ended);
  const std::vector<double>& returns() const { return returns_; }
  const RunningMeanStd& stats() const { return stats_; }
  // Continues from saved returns (one per environment) and statistics.
  void restore(std::vector<double> returns, RunningMeanStd stats);

 private:
  std::vector<double> returns_;
  RunningMeanStd stats_;
  double gamma_, clip_;
};

}  // namespace meshsim::rl
