#include "sim/metrics/quantile_sketch.hpp"

#include <algorithm>
#include <cmath>

namespace meshsim::metrics {
namespace {

// Bucket i holds values in (gamma^(i-1), gamma^i] * kMinValue.
constexpr double kGamma = (1.0 + QuantileSketch::kRelativeAccuracy) / (1.0 - QuantileSketch::kRelativeAccuracy);
constexpr double kMinValue = 1e-9;  // smaller values count as zero
const double kLogGamma = std::log(kGamma);

}  // namespace

void QuantileSketch::add(double value) {
  value = std::max(0.0, value);
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  sum_ += value;
  if (value < kMinValue) {
    ++zeros_;
    return;
  }
  const auto index = static_cast<std::size_t>(std::ceil(std::log(value / kMinValue) / kLogGamma));
  if (index >= buckets_.size()) buckets_.resize(index + 1, 0);
  ++buckets_[index];
}

double QuantileSketch::quantile(double q) const {
  if (count_ == 0) return 0.0;
  if (q <= 0.0) return min_;
  if (q >= 1.0) return max_;
  // The sample of rank floor(q * (n - 1)), as the lower of the two order statistics a
  // linear interpolation would use.
  const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count_ - 1));
  if (rank < zeros_) return 0.0;
  std::uint64_t seen = zeros_;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen > rank) {
      // The bucket's midpoint in relative terms: within kRelativeAccuracy of any value in it.
      const double estimate = kMinValue * 2.0 * std::pow(kGamma, static_cast<double>(i)) / (kGamma + 1.0);
      return std::clamp(estimate, min_, max_);
    }
  }
  return max_;
}

}  // namespace meshsim::metrics
