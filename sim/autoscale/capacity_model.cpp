#include "sim/autoscale/capacity_model.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace meshsim::autoscale {

std::vector<double> capacity_features(const WorkFigures& mix, CapacityFeatures features) {
  std::vector<double> x{1.0};
  switch (features) {
    case CapacityFeatures::kConstant: break;
    case CapacityFeatures::kTokens: x.push_back((mix.prompt_mean + mix.output_mean) / 1000); break;
    case CapacityFeatures::kBurstiness:
    case CapacityFeatures::kMix:
      x.push_back(mix.prompt_mean / 1000);
      x.push_back(mix.output_mean / 1000);
      x.push_back(mix.prompt_p90 / 1000);
      if (features == CapacityFeatures::kBurstiness) x.push_back(mix.burstiness);
      break;
  }
  return x;
}

std::vector<std::string> capacity_feature_names(CapacityFeatures features) {
  std::vector<std::string> names{"intercept"};
  switch (features) {
    case CapacityFeatures::kConstant: break;
    case CapacityFeatures::kTokens: names.emplace_back("tokens_mean_k"); break;
    case CapacityFeatures::kBurstiness:
    case CapacityFeatures::kMix:
      names.insert(names.end(), {"prompt_mean_k", "output_mean_k", "prompt_p90_k"});
      if (features == CapacityFeatures::kBurstiness) names.emplace_back("burstiness");
      break;
  }
  return names;
}

double CapacityModel::per_instance(const WorkFigures& mix, std::uint32_t n) const {
  if (n == 0 || sizes.empty()) return 0.0;
  const std::vector<double> x = capacity_features(mix, features);
  const auto at = [&](std::size_t i) {
    double seconds = 0.0;
    for (std::size_t k = 0; k < x.size(); ++k) seconds += weights[i][k] * x[k];
    // A mix far outside the fitted ones may extrapolate to no time per request: held at a
    // millisecond, a thousand requests a second, far above any measured capacity.
    return 1.0 / std::max(seconds, 1e-3);
  };
  if (n <= sizes.front()) return at(0);
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    if (n <= sizes[i]) {
      const double share = static_cast<double>(n - sizes[i - 1]) / static_cast<double>(sizes[i] - sizes[i - 1]);
      return at(i - 1) + share * (at(i) - at(i - 1));
    }
  }
  return at(sizes.size() - 1);
}

CapacityModel fit_capacity_model(std::span<const CapacitySample> samples, CapacityFeatures features) {
  CapacityModel model;
  model.features = features;
  const std::size_t width = capacity_features(WorkFigures{}, features).size();
  std::vector<std::uint32_t> sizes;
  for (const CapacitySample& s : samples) {
    if (s.per_instance > 0) sizes.push_back(s.n);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (const std::uint32_t n : sizes) {
    std::vector<const CapacitySample*> rows;
    for (const CapacitySample& s : samples) {
      if (s.n == n && s.per_instance > 0) rows.push_back(&s);
    }
    if (rows.size() < width) continue;
    // Relative least squares: row r of x w = y scaled by 1 / y (the label's seconds per
    // request), so each residual is a relative error.
    Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(width));
    Eigen::VectorXd b = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double y = 1.0 / rows[r]->per_instance;
      const std::vector<double> x = capacity_features(rows[r]->mix, features);
      for (std::size_t k = 0; k < width; ++k) a(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(k)) = x[k] / y;
    }
    const Eigen::VectorXd w = a.colPivHouseholderQr().solve(b);
    model.sizes.push_back(n);
    model.weights.emplace_back(w.data(), w.data() + w.size());
  }
  return model;
}

double mean_abs_percentage_error(const CapacityModel& model, std::span<const CapacitySample> samples) {
  double sum = 0.0;
  std::size_t counted = 0;
  for (const CapacitySample& s : samples) {
    if (!(s.per_instance > 0)) continue;
    sum += std::abs(model.per_instance(s.mix, s.n) / s.per_instance - 1.0);
    ++counted;
  }
  return counted > 0 ? sum / static_cast<double>(counted) : 0.0;
}

}  // namespace meshsim::autoscale
