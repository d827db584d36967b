#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

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
  EXPECT_EQ(validate(spec).error().message, "expected a limit: 'requests', 'duration_s' or 'stages'");
  spec = spec_with(ArrivalSpec::Kind::kPoisson, 1.0, 10);
  spec.output_tokens = LengthSpec{LengthSpec::Kind::kQuantiles, 1, 1, 1, {{0.0, 5.0}, {0.5, 4.0}, {1.0, 9.0}}};
  EXPECT_EQ(validate(spec).error().message,
            "output_tokens.quantiles[1]: probabilities must increase and tokens must not decrease");
}

std::vector<TraceRequest> drain(GeneratorSpec spec, std::uint64_t seed = 3) {
  EXPECT_TRUE(validate(spec)) << validate(spec).error().message;
  GeneratedSource source(std::move(spec), seed);
  std::vector<TraceRequest> out;
  for (;;) {
    auto next = source.next();
    EXPECT_TRUE(next);
    if (!next || !*next) return out;
    out.push_back(**next);
  }
}

TEST(GeneratorTest, ConstantStagesSpaceArrivalsEvenlyAtEachStagesRate) {
  GeneratorSpec spec = spec_with(ArrivalSpec::Kind::kConstant, 1.0, 1);
  spec.requests.reset();
  spec.stages = {LoadStage{4.0, SimTime::from_seconds(10)}, LoadStage{10.0, SimTime::from_seconds(5)}};
  const auto requests = drain(spec);
  ASSERT_EQ(requests.size(), 40u + 50u);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const double expected = i < 40 ? 0.25 * double(i) : 10.0 + 0.1 * double(i - 40);
    EXPECT_NEAR(requests[i].arrival.seconds(), expected, 1e-6) << i;
  }
}

TEST(GeneratorTest, StagesNeedPositiveRatesAndDurations) {
  GeneratorSpec spec = spec_with(ArrivalSpec::Kind::kConstant, 1.0, 10);
  spec.stages = {LoadStage{0.0, SimTime::from_seconds(10)}};
  EXPECT_NE(validate(spec).error().message.find("stages[0].rate_per_s"), std::string::npos);
  spec.stages = {LoadStage{1.0, SimTime::zero()}};
  EXPECT_NE(validate(spec).error().message.find("stages[0].duration_s"), std::string::npos);
}

TEST(GeneratorTest, SharedPrefixRequestsCarryTheirUsersSystemPrompt) {
  GeneratorSpec spec = spec_with(ArrivalSpec::Kind::kConstant, 10.0, 2000);
  spec.prompt_tokens = LengthSpec{LengthSpec::Kind::kFixed, 400, 1, 1, {}};
  spec.shared_prefix = SharedPrefixSpec{9, 5, 100, false, 0};
  std::vector<int> used(10, 0);
  for (const auto& r : drain(spec)) {
    ASSERT_EQ(r.prefix.size(), 1u);
    EXPECT_EQ(r.prefix[0].tokens, 100u);
    ASSERT_GE(r.prefix[0].id, 1u);
    ASSERT_LE(r.prefix[0].id, 9u);
    ++used[r.prefix[0].id];
    EXPECT_EQ(r.prompt_tokens, 500u);
    EXPECT_EQ(r.output_content, 0u);
  }
  for (std::size_t id = 1; id <= 9; ++id) EXPECT_NEAR(used[id], 2000.0 / 9, 60) << id;  // users drawn uniformly
}

TEST(GeneratorTest, MultiTurnPromptsRepeatTheUsersEarlierTurns) {
  GeneratorSpec spec = spec_with(ArrivalSpec::Kind::kPoisson, 10.0, 300);
  spec.prompt_tokens = LengthSpec{LengthSpec::Kind::kUniform, 1, 20, 60, {}};
  spec.shared_prefix = SharedPrefixSpec{2, 3, 50, true, 4};
  // Each request's prefix starts with what its user's previous request sent and got.
  std::map<std::uint64_t, std::vector<ContentSegment>> last_of_conversation;
  std::size_t continued = 0;
  for (const auto& r : drain(spec)) {
    std::uint32_t named = 0;
    for (const auto& s : r.prefix) named += s.tokens;
    EXPECT_EQ(named, r.prompt_tokens);  // the question is named too: a later turn repeats it
    ASSERT_NE(r.output_content, 0u);
    const std::size_t turns = (r.prefix.size() - 1) / 2;  // system, then (question, answer) pairs, then the question
    EXPECT_LE(turns, 4u);
    if (turns > 0) ++continued;
  }
  EXPECT_GT(continued, 200u);
  // Determinism: the same seed, the same prompts.
  const auto a = drain(spec, 9), b = drain(spec, 9);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
    EXPECT_EQ(a[i].prefix.size(), b[i].prefix.size());
  }
}

}  // namespace
}  // namespace meshsim::traces
