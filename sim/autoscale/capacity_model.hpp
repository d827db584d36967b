#pragma once

// A model of what one instance of a pool sustains at the SLO (requests per second) as a
// function of the arriving work and the pool's size: the quantity a work-aware
// autoscaler sizes by (Aladdin, TokenScale), learned from capacities the simulator
// measures (sim/run/slo_capacity.hpp) and checked on windows it was not fitted on.
//
// Per measured pool size n (1, 2, 4, 8), the time an instance spends per request is linear
// in the mix's features:
//   1 / capacity_per_instance(n) = w(n) . features(mix)
// fitted by least squares on relative error (each row weighted by its own label), so the
// fit minimises about the mean absolute percentage error it is judged by. Between the
// measured sizes the per-instance capacity is interpolated linearly in n, above the
// largest it is the largest's (per-instance capacity grows with n: statistical
// multiplexing, so holding it there is the cautious side).

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/engine/enum_names.hpp"

namespace meshsim::autoscale {

// The work behind a request rate over some time: the arriving prompts' mean and 90th
// percentile, the outputs' (of the requests completing, where a policy sees them), and
// the arrivals' index of dispersion per second (variance over mean of the counts: 1 for
// Poisson arrivals, above for bursts; 0 when none arrived). The scaling observation's
// work features (sim/autoscale/work_mix.hpp) and the capacity model's inputs.
struct WorkFigures {
  double prompt_mean = 0, prompt_p90 = 0;  // tokens
  double output_mean = 0, output_p90 = 0;  // tokens
  double burstiness = 0;
};

// Which features of the mix the model sees: an ablation ladder, each a superset of the
// one before.
enum class CapacityFeatures {
  kConstant,    // a capacity per size, whatever the mix
  kTokens,      // linear in the mean prompt + output tokens
  kMix,         // prompt mean, output mean and prompt p90 apart
  kBurstiness,  // the mix and the arrivals' burstiness
};
inline constexpr EnumNames kCapacityFeatureNames{
    std::array{std::pair{CapacityFeatures::kConstant, std::string_view("constant")},
               std::pair{CapacityFeatures::kTokens, std::string_view("tokens")},
               std::pair{CapacityFeatures::kMix, std::string_view("mix")},
               std::pair{CapacityFeatures::kBurstiness, std::string_view("burstiness")}}};

// The features' values (a leading 1 for the intercept), in thousands of tokens so the
// weights are of one order.
std::vector<double> capacity_features(const WorkFigures& mix, CapacityFeatures features);
std::vector<std::string> capacity_feature_names(CapacityFeatures features);

// One measurement: what a pool of `n` sustained per instance on a stretch of `mix`.
struct CapacitySample {
  WorkFigures mix;
  std::uint32_t n = 1;
  double per_instance = 0;  // requests/s
};

struct CapacityModel {
  CapacityFeatures features = CapacityFeatures::kMix;
  std::vector<std::uint32_t> sizes;          // ascending
  std::vector<std::vector<double>> weights;  // per size, one per feature (seconds per request)
  // Requests/s one instance of a pool of `n` sustains at `mix` (0 when n is 0).
  double per_instance(const WorkFigures& mix, std::uint32_t n) const;
  double sustained(const WorkFigures& mix, std::uint32_t n) const { return n * per_instance(mix, n); }
};

// Fits a model on `samples` (every size among them gets its weights; a size needs at
// least as many samples as features). Empty sizes when there is nothing to fit.
CapacityModel fit_capacity_model(std::span<const CapacitySample> samples, CapacityFeatures features);

// The mean of |predicted / measured - 1| over `samples` (0 for none).
double mean_abs_percentage_error(const CapacityModel& model, std::span<const CapacitySample> samples);

}  // namespace meshsim::autoscale
