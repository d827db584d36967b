#include <gtest/gtest.h>

#include <cmath>

#include "traces/generated_source.hpp"
#include "traces/trace_stats.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::traces {
namespace {

GeneratorSpec spec_with(ArrivalSpec::Kind kind, double rate, std::uint64_t requests) {
  GeneratorSpec spec;
  spec.arrivals.kind = kind;
  spec.arrivals.rate_per_s = rate;
  spec.prompt_tokens = LengthSpec{LengthSpec::Kind::kUniform, 1, 100, 300, {}};
  spec.output_tokens = LengthSpec{LengthSpec::Kind::kFixed, 50, 1, 1, {}};
  spec.requests = requests;
  return spec;
}

TraceStatistics stats_of(const GeneratorSpec& spec, std::uint64_t seed) {
  GeneratedSource source(spec, seed);
  auto stats = summarize(source);
  EXPECT_TRUE(stats) << stats.error().message;
  return *stats;
}

TEST(GeneratorTest, PoissonHasItsRateAndUnitCv) {
  const auto stats = stats_of(spec_with(ArrivalSpec::Kind::kPoisson, 20.0, 50000), 1);
  EXPECT_NEAR(stats.rate_per_s, 20.0, 0.4);
  EXPECT_NEAR(stats.interarrival_cv, 1.0, 0.03);
  EXPECT_NEAR(stats.prompt_mean, 200.0, 1.5);
  EXPECT_EQ(stats.output_mean, 50.0);
}

TEST(GeneratorTest, GammaIsBurstyWithTheRequestedCv) {
  auto spec = spec_with(ArrivalSpec::Kind::kGamma, 5.0, 50000);
  spec.arrivals.cv = 3.0;
  const auto stats = stats_of(spec, 2);
  EXPECT_NEAR(stats.rate_per_s, 5.0, 0.25);
  EXPECT_NEAR(stats.interarrival_cv, 3.0, 0.15);
}

TEST(GeneratorTest, DiurnalRateFollowsTheSinusoid) {
  auto spec = spec_with(ArrivalSpec::Kind::kDiurnal, 10.0, 1'000'000);
  spec.arrivals.amplitude = 0.8;
  spec.arrivals.period_s = 1000.0;
  spec.requests.reset();
  spec.duration = SimTime::from_seconds(1000);
  GeneratedSource source(spec, 3);
  // Count arrivals in the first quarter period (rate above mean) vs the third (below).
  int rising = 0;
  int falling = 0;
  for (;;) {
    auto next = source.next();
    ASSERT_TRUE(next);
    if (!next->has_value()) break;
    const double t = (*next)->arrival.seconds();
    if (t < 250) ++rising;
    if (t >= 500 && t < 750) ++falling;
  }
  // Expected counts: 250 * 10 * (1 +- 0.8 * 2/pi) = 2500 +- 1273.
  EXPECT_NEAR(rising, 3773, 200);
  EXPECT_NEAR(falling, 1227, 150);
}

TEST(GeneratorTest, QuantileTablesAreSampledByInverseCdf) {
  LengthSpec spec{LengthSpec::Kind::kQuantiles, 1, 1, 1, {{0.0, 10.0}, {0.5, 20.0}, {1.0, 100.0}}};
  engine::Rng rng(4);
  int below_20 = 0;
  for (int i = 0; i < 100000; ++i) {
    const auto tokens = sample_length(spec, rng);
    ASSERT_GE(tokens, 10u);
    ASSERT_LE(tokens, 100u);
    below_20 += tokens < 20;
  }
  EXPECT_NEAR(below_20, 47500, 700);  // just under half: 20 itself sits at p = 0.5
}

TEST(GeneratorTest, SameSeedSameRequests) {
  const auto spec = spec_with(ArrivalSpec::Kind::kPoisson, 3.0, 100);
  GeneratedSource a(spec, 9);
  GeneratedSource b(spec, 9);
  for (int i = 0; i < 100; ++i) {
    const auto x = **a.next();
    const auto y = **b.next();
    EXPECT_EQ(x.arrival, y.arrival);
    EXPECT_EQ(x.prompt_tokens, y.prompt_tokens);
  }
}

TEST(GeneratorTest, InvalidSpecsAreRejectedNamingTheField) {
  auto spec = spec_with(ArrivalSpec::Kind::kPoisson, 0.0, 10);
  EXPECT_EQ(validate(spec).error().message, "arrivals.rate_per_s: expected a positive rate");
  spec = spec_with(ArrivalSpec::Kind::kPoisson, 1.0, 10);
  spec.requests.reset();
  EXPECT_EQ(validate(spec).error().message, "expected a limit: 'requests' or 'duration_s'");
  spec = spec_with(ArrivalSpec::Kind::kPoisson, 1.0, 10);
  spec.output_tokens = LengthSpec{LengthSpec::Kind::kQuantiles, 1, 1, 1, {{0.0, 5.0}, {0.5, 4.0}, {1.0, 9.0}}};
  EXPECT_EQ(validate(spec).error().message,
            "output_tokens.quantiles[1]: probabilities must increase and tokens must not decrease");
}

}  // namespace
}  // namespace meshsim::traces
