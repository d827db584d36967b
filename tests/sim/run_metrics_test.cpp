// RunMetrics: what SLO attainment judges, a TTFT target that scales with prompt length,
// and goodput beside the load offered.
#include "sim/metrics/run_metrics.hpp"

#include <gtest/gtest.h>

#include <random>

namespace meshsim::metrics {
namespace {

RequestRecord completed(std::uint32_t prompt, double ttft_s, double tbt_s, double at_s) {
  RequestRecord r;
  r.arrival = SimTime::from_seconds(at_s);
  r.prompt_tokens = prompt;
  r.output_tokens = 11;
  r.status = RequestStatus::kCompleted;
  r.started = r.arrival;
  r.first_token = r.arrival + SimTime::from_seconds(ttft_s);
  r.finished = *r.first_token + SimTime::from_seconds(10 * tbt_s);
  return r;
}

TEST(RunMetricsTest, TheTtftTargetGrowsWithThePromptByItsAllowancePerToken) {
  SloTargets slo;
  slo.ttft = SimTime::from_ms(200);
  slo.ttft_per_prompt_token_s = 1e-4;  // 0.1 ms a token
  EXPECT_EQ(slo.ttft_for(0), SimTime::from_ms(200));
  EXPECT_EQ(slo.ttft_for(8000), SimTime::from_ms(1000));
  EXPECT_TRUE(judge(completed(8000, 0.9, 0.05, 0), slo).met());
  EXPECT_FALSE(judge(completed(1000, 0.9, 0.05, 0), slo).met()) << "0.3 s allowed for a 1000-token prompt";
  slo.ttft_per_prompt_token_s = 0;
  EXPECT_FALSE(judge(completed(8000, 0.9, 0.05, 0), slo).met()) << "an absolute target";
}

TEST(RunMetricsTest, RequestsRefusedForTheirLengthAreNotJudgedAndGoodputCountsTheMet) {
  RunMetrics m(SloTargets{});
  for (int i = 0; i < 4; ++i) m.on_arrival(SimTime::from_seconds(i + 1));
  m.on_finished(completed(100, 0.1, 0.01, 1));  // met
  m.on_finished(completed(100, 5.0, 0.01, 2));  // TTFT missed
  RequestRecord refused;
  refused.status = RequestStatus::kDropped;
  refused.dropped_for = DropReason::kOverContext;
  m.on_finished(refused);
  RequestRecord timed_out = refused;
  timed_out.dropped_for = DropReason::kTimedOut;
  m.on_finished(timed_out);
  EXPECT_EQ(m.counts().judged(), 3u) << "completed 2 + dropped 2 - refused for length 1";
  EXPECT_DOUBLE_EQ(m.slo_attainment(), 1.0 / 3.0);
  EXPECT_EQ(m.counts().dropped_by(DropReason::kOverContext), 1u);
  EXPECT_EQ(m.counts().dropped_by(DropReason::kTimedOut), 1u);
  EXPECT_DOUBLE_EQ(m.offered_per_s(), 1.0) << "4 arrivals up to the last, at 4 s";
  EXPECT_EQ(m.slo_met(), 1u);
}

// With classes of service, each request is judged by its class's SLO, and every count of
// the run is the sum of the classes' (random outcomes, classes and targets): nothing is
// lost between the run's figures and the classes'.
TEST(RunMetricsTest, EachClassIsJudgedByItsOwnSloAndTheClassesAddUpToTheRun) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t n_classes = 1 + rng() % 4;
    std::vector<SloTargets> slos(n_classes);
    for (auto& slo : slos) {
      slo.ttft = SimTime::from_ms(50 + static_cast<std::int64_t>(rng() % 2000));
      slo.tbt = SimTime::from_ms(5 + static_cast<std::int64_t>(rng() % 100));
    }
    RunMetrics m(SloTargets{}, slos);
    std::vector<std::uint64_t> met(n_classes, 0), judged(n_classes, 0);
    const int arrivals = 1 + static_cast<int>(rng() % 300);
    std::uint64_t left = 0;
    for (int i = 0; i < arrivals; ++i) {
      const auto c = static_cast<std::uint8_t>(rng() % n_classes);
      m.on_arrival(SimTime::from_seconds(i), c);
      const int fate = static_cast<int>(rng() % 4);
      if (fate == 3) continue;  // still in flight at the end
      ++left;
      RequestRecord r = completed(100, (rng() % 2000) / 1000.0, (rng() % 100) / 1000.0, i);
      r.service_class = c;
      if (fate == 2) {
        r.status = RequestStatus::kDropped;
        r.dropped_for = rng() % 2 == 0 ? DropReason::kOverContext : DropReason::kTimedOut;
      }
      if (slo_judges(r)) ++judged[c];
      met[c] += judge(r, slos[c]).met();
      m.on_finished(r);
    }
    m.set_in_flight(static_cast<std::uint64_t>(arrivals) - left);
    RequestCounts sum;
    std::uint64_t met_sum = 0;
    for (std::size_t c = 0; c < n_classes; ++c) {
      const ClassFigures& f = m.classes()[c];
      sum.arrived += f.counts.arrived;
      sum.completed += f.counts.completed;
      sum.dropped += f.counts.dropped;
      sum.in_flight += f.counts.in_flight;
      met_sum += f.slo_met;
      EXPECT_EQ(f.counts.judged(), judged[c]);
      EXPECT_EQ(f.slo_met, met[c]) << "class " << c << " judged by its own SLO";
      EXPECT_EQ(f.counts.arrived, f.counts.completed + f.counts.dropped + f.counts.in_flight);
    }
    EXPECT_EQ(sum.arrived, m.counts().arrived);
    EXPECT_EQ(sum.completed, m.counts().completed);
    EXPECT_EQ(sum.dropped, m.counts().dropped);
    EXPECT_EQ(sum.in_flight, m.counts().in_flight);
    EXPECT_EQ(met_sum, m.slo_met());
  }
}

}  // namespace
}  // namespace meshsim::metrics
