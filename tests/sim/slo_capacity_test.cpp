#include "sim/run/slo_capacity.hpp"

#include <gtest/gtest.h>

#include "traces/episode_workload.hpp"
#include "traces/workload_source.hpp"

namespace meshsim::run {
namespace {

const configs::Catalog& catalog() {
  static const configs::Catalog loaded = *configs::load_catalog(configs::default_catalog_folder());
  return loaded;
}

// The default deployment (Llama2-70B TP4 on H100) with `instances` instances, on the
// default workload's first `seconds`.
configs::ScenarioConfig deployment(std::uint32_t instances, double seconds) {
  configs::ScenarioConfig config = *configs::load_scenario(configs::default_scenario_path());
  std::get<configs::LlmServingSpec>(config.serving).start_state[0].count = instances;
  config.workload.window_end = engine::SimTime::from_seconds(seconds);
  return config;
}

// A backlog left behind is no capacity: with a run cut at `until` under overload, the
// requests still waiting past their TTFT target are misses (the run's own attainment
// leaves them out); those still on time are not judged.
TEST(SloCapacityTest, RequestsStillWaitingPastTheirTargetAtTheEndAreMisses) {
  configs::ScenarioConfig config = deployment(1, 3600);
  config.replay.until = engine::SimTime::from_seconds(300);
  const SloProbe p = probe_slo(config, catalog(), 8.0);
  ASSERT_TRUE(p.error.empty()) << p.error;
  EXPECT_GT(p.unfinished, 1000u);
  // The few arriving in the last TTFT target's time are on time still: not judged.
  EXPECT_LT(p.judged + p.over_context, p.arrived);
  EXPECT_GT(p.judged + p.over_context + 1000, p.arrived);
  EXPECT_LE(p.met + p.unfinished, p.judged);
  EXPECT_DOUBLE_EQ(p.attainment, static_cast<double>(p.met) / static_cast<double>(p.judged));
  // Served to the end instead, every request leaves and nothing is unfinished.
  config.replay.until.reset();
  const SloProbe whole = probe_slo(config, catalog(), 8.0);
  EXPECT_EQ(whole.unfinished, 0u);
  EXPECT_EQ(whole.judged + whole.over_context, whole.arrived);
}

// The requests of the warm-up are served, not judged: they met a deployment starting empty.
TEST(SloCapacityTest, TheWarmUpsRequestsAreServedButNotJudged) {
  const configs::ScenarioConfig config = deployment(2, 600);
  const SloProbe all = probe_slo(config, catalog(), 2.0);
  const SloProbe later = probe_slo(config, catalog(), 2.0, {}, engine::SimTime::from_seconds(120));
  ASSERT_TRUE(all.error.empty() && later.error.empty());
  EXPECT_EQ(all.arrived, later.arrived);
  EXPECT_GT(all.judged, later.judged);
  EXPECT_GT(later.judged, 0u);
}

// The search's answer meets the target and a rate 1 + precision above it does not; more
// instances sustain more; and a probe of given requests plays exactly those.
TEST(SloCapacityTest, TheAnswerIsTheHighestRateMeetingTheTargetAndGrowsWithInstances) {
  SloCapacityQuestion question;
  question.config = deployment(1, 300);
  question.target = 0.99;
  question.precision = 0.05;
  const SloCapacity one = slo_capacity(question, catalog());
  ASSERT_TRUE(one.error.empty()) << one.error;
  ASSERT_TRUE(one.rate_scale);
  ASSERT_NE(one.at_answer(), nullptr);
  EXPECT_GE(one.at_answer()->attainment, 0.99);
  double failing_above = 0;
  for (const SloProbe& p : one.probes) {
    if (p.rate_scale > *one.rate_scale && p.attainment < 0.99) {
      failing_above = failing_above == 0 ? p.rate_scale : std::min(failing_above, p.rate_scale);
    }
  }
  ASSERT_GT(failing_above, 0);
  EXPECT_LE(failing_above / *one.rate_scale, 1.05 + 1e-9);
  question.config = deployment(2, 300);
  const SloCapacity two = slo_capacity(question, catalog());
  ASSERT_TRUE(two.rate_scale);
  EXPECT_GT(*two.rate_scale, *one.rate_scale * 1.5);

  // The same workload given as requests to open: the same probe.
  auto source = traces::open_workload(question.config.workload, question.config.seed);
  const auto workload = traces::in_memory(*traces::load_trace(**source));
  const ProbeRequests requests = [&](double rate) {
    return workload->window(engine::SimTime::zero(), engine::SimTime::from_seconds(300 / rate), rate);
  };
  const SloProbe given = probe_slo(question.config, catalog(), 3.0, requests);
  const SloProbe own = probe_slo(question.config, catalog(), 3.0);
  EXPECT_EQ(given.arrived, own.arrived);
  EXPECT_EQ(given.judged, own.judged);
  EXPECT_NEAR(given.attainment, own.attainment, 2.0 / static_cast<double>(own.judged));
}

}  // namespace
}  // namespace meshsim::run
