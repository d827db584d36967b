// The right-sizing bound end to end (rl/env/bound_plays.hpp): on a workload whose need is
// known by construction (constant-rate steps of constant-length requests), the measured
// capacity, the schedule and its play are the hand-computed ones.
#include "rl/env/bound_plays.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/rl/env_fixture.hpp"

namespace meshsim::rl {
namespace {

// 2 requests/s for 600 s, 6/s for 600 s, 2/s for 600 s, evenly spaced, 500 prompt and
// 100 output tokens each.
Fixture step_fixture() {
  Fixture f = make_fixture(1800);
  traces::GeneratorSpec g;
  g.arrivals.kind = traces::ArrivalSpec::Kind::kConstant;
  for (const double rate : {2.0, 6.0, 2.0}) g.stages.push_back({rate, SimTime::from_seconds(600)});
  g.prompt_tokens.value = 500;  // LengthSpec's default kind is fixed
  g.output_tokens.value = 100;
  f.config.workload = traces::WorkloadSpec{};
  f.config.workload.source = g;
  auto source = traces::open_workload(f.config.workload, f.config.seed);
  f.requests = *traces::load_trace(**source);
  f.workload = traces::in_memory(f.requests);
  return f;
}

TEST(BoundPlaysTest, ARateStepIsScheduledOneDelayAheadAndPlayedAsScheduled) {
  const Fixture f = step_fixture();
  const EvalWindow window{"steps", 0, 1785, 1};  // the warm-up's 15 s and 119 decisions
  const std::vector<double> rates = interval_rates(*f.config.rl, *f.workload, window);
  ASSERT_EQ(rates.size(), 119u);
  // Interval t covers [15 + 15 t, 30 + 15 t) s: the 6/s stage is intervals 39..78.
  for (std::size_t t = 0; t < rates.size(); ++t) {
    const double expected = t >= 39 && t < 79 ? 6.0 : 2.0;
    EXPECT_NEAR(rates[t], expected, 1.0 / 15 + 1e-9) << "interval " << t;
  }

  const CapacityProbe probe = probe_capacity(f.config, catalog(), f.workload, window, 1);
  ASSERT_EQ(probe.error, "");
  ASSERT_GT(probe.requests_per_s, 2.0) << "one instance serves more than the first stage";
  EXPECT_GT(probe.drain_s, 0.0);
  EXPECT_LT(probe.drain_s, 60.0);

  // At a utilisation where one instance takes 2.2 requests/s, the need is 1, then 3,
  // then 1; with a 60 s delay (4 intervals) the two more are asked for 4 intervals ahead,
  // and drained the moment the load falls.
  const double utilisation = 2.2 / probe.requests_per_s;
  const auto held = bound_schedule(f.config, rates, probe, utilisation, BoundForm::kHindsight, 60, 1);
  std::vector<std::uint32_t> expected(119, 1);
  std::fill(expected.begin() + 35, expected.begin() + 79, 3);
  EXPECT_EQ(held, expected);
  // Smoothed over a minute, the step's edges are averaged but the plateaus stay.
  const auto smoothed = bound_schedule(f.config, rates, probe, utilisation, BoundForm::kSmoothed, 60, 1);
  for (std::size_t t = 0; t < 119; ++t) {
    if (t < 30 || (t >= 40 && t < 75) || t >= 85) {
      EXPECT_EQ(smoothed[t], expected[t]) << "interval " << t;
    }
  }

  const Outcome o = play_schedule("bound_hindsight", utilisation, f.config, catalog(), f.workload, window, 60, 1, 1, held);
  ASSERT_EQ(o.error, "");
  ASSERT_EQ(o.instances.size(), held.size());
  for (std::size_t t = 0; t < held.size(); ++t) {
    // A drained instance exists until its requests finish: the interval it drains in
    // counts it for a while.
    if (t == 79) {
      EXPECT_GE(o.instances[t], 1.0);
      EXPECT_LT(o.instances[t], 3.0);
    } else {
      EXPECT_NEAR(o.instances[t], held[t], 1e-9) << "interval " << t;
    }
  }
  EXPECT_EQ(o.scale_ups, 2u);
  EXPECT_EQ(o.scale_downs, 2u);
  EXPECT_GT(o.slo_attainment, 0.99);
}

TEST(BoundPlaysTest, ABoundOfSeveralPoolsIsRefusedNotPlayedWrong) {
  Fixture f = make_fixture(300);
  auto& serving = std::get<configs::LlmServingSpec>(f.config.serving);
  ASSERT_FALSE(serving.start_state.empty());
  auto prompt = serving.start_state.front();
  prompt.tag = cluster::InstanceTag::kPrompt;
  auto token = prompt;
  token.tag = cluster::InstanceTag::kToken;
  serving.start_state = {prompt, token};
  const Outcome o = play_schedule("bound_hindsight", 1.0, f.config, catalog(), f.workload, {"w", 0, 300, 1}, 10, 1, 1,
                                  std::vector<std::uint32_t>(20, 2));
  EXPECT_NE(o.error, "");
}

}  // namespace
}  // namespace meshsim::rl
