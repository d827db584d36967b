#pragma once

#include <cstdint>
#include <vector>

namespace meshsim::metrics {

// Percentiles of non-negative values in constant memory (DDSketch-style log buckets):
// every reported quantile is within kRelativeAccuracy of a true sample value at that
// rank. Memory is a few thousand counters whatever the number of samples, so a replay's
// footprint does not grow with trace length. Deterministic: same inputs, same outputs.
class QuantileSketch {
 public:
  static constexpr double kRelativeAccuracy = 0.005;

  void add(double value);
  std::uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }
  // q in [0, 1]; 0 when empty. q = 0 and q = 1 are the exact min and max.
  double quantile(double q) const;

 private:
  std::uint64_t count_ = 0;
  std::uint64_t zeros_ = 0;  // values below kMinValue
  double sum_ = 0.0;
  double min_ = 0.0;
  double max_ = 0.0;
  std::vector<std::uint64_t> buckets_;
};

}  // namespace meshsim::metrics
