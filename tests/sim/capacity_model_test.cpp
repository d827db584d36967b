// The capacity model: a fit on relative error recovers a law it was sampled from, each
// rung of the features' ladder sees only its features, and between measured pool sizes
// the per-instance capacity is interpolated.
#include "sim/autoscale/capacity_model.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace meshsim::autoscale {
namespace {

// Seconds per request per instance on `mix` for a pool of `n`: longer prompts and outputs
// cost more, larger pools a little less per request.
double true_seconds(const WorkFigures& mix, std::uint32_t n) {
  return (0.02 + 0.05 * mix.prompt_mean / 1000 + 0.4 * mix.output_mean / 1000 + 0.01 * mix.prompt_p90 / 1000) /
         (1.0 + 0.05 * n);
}

std::vector<CapacitySample> sampled(std::uint64_t seed, std::size_t count, double noise) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> prompt(200, 2000), output(50, 400), spread(1.5, 4), jitter(-noise, noise);
  std::vector<CapacitySample> samples;
  for (std::size_t i = 0; i < count; ++i) {
    WorkFigures mix;
    mix.prompt_mean = prompt(rng);
    mix.prompt_p90 = mix.prompt_mean * spread(rng);
    mix.output_mean = output(rng);
    mix.burstiness = 1 + spread(rng);
    for (const std::uint32_t n : {1u, 2u, 4u, 8u}) {
      samples.push_back({mix, n, (1 + jitter(rng)) / true_seconds(mix, n)});
    }
  }
  return samples;
}

TEST(CapacityModelTest, AFitRecoversTheLawItWasSampledFromAndJudgesHeldOutSamplesByIt) {
  const auto train = sampled(1, 40, 0.0);
  const auto held_out = sampled(2, 20, 0.0);
  const CapacityModel model = fit_capacity_model(train, CapacityFeatures::kMix);
  ASSERT_EQ(model.sizes, (std::vector<std::uint32_t>{1, 2, 4, 8}));
  EXPECT_LT(mean_abs_percentage_error(model, held_out), 1e-9);
  EXPECT_NEAR(model.weights[0][1], 0.05 / 1.05, 1e-9);  // prompt mean, per thousand tokens, at n = 1
  // The lower rungs cannot see the law: a constant misses by the mix's spread.
  const CapacityModel constant = fit_capacity_model(train, CapacityFeatures::kConstant);
  EXPECT_GT(mean_abs_percentage_error(constant, held_out), 0.2);
  const CapacityModel tokens = fit_capacity_model(train, CapacityFeatures::kTokens);
  EXPECT_GT(mean_abs_percentage_error(tokens, held_out), mean_abs_percentage_error(model, held_out));
  // With noise, the error is about the noise's (uniform in +-10%: 5% on average).
  const CapacityModel noisy = fit_capacity_model(sampled(3, 200, 0.1), CapacityFeatures::kBurstiness);
  EXPECT_LT(mean_abs_percentage_error(noisy, sampled(4, 50, 0.0)), 0.03);
}

TEST(CapacityModelTest, BetweenMeasuredSizesThePerInstanceCapacityIsInterpolated) {
  const CapacityModel model = fit_capacity_model(sampled(5, 20, 0.0), CapacityFeatures::kMix);
  WorkFigures mix;
  mix.prompt_mean = 1000;
  mix.prompt_p90 = 2500;
  mix.output_mean = 200;
  const double at4 = 1 / true_seconds(mix, 4), at8 = 1 / true_seconds(mix, 8);
  EXPECT_NEAR(model.per_instance(mix, 6), (at4 + at8) / 2, 1e-9);
  EXPECT_NEAR(model.sustained(mix, 6), 6 * (at4 + at8) / 2, 1e-9);
  EXPECT_NEAR(model.per_instance(mix, 32), at8, 1e-9) << "above the largest size: the largest's";
  EXPECT_EQ(model.per_instance(mix, 0), 0.0);
  EXPECT_EQ(CapacityModel{}.per_instance(mix, 4), 0.0) << "an empty model sustains nothing";
  EXPECT_TRUE(fit_capacity_model({}, CapacityFeatures::kMix).sizes.empty());
}

}  // namespace
}  // namespace meshsim::autoscale
